// Routing-rewrite policies written in Python (docs/python.md): a subclass of moesim.RoutingPolicy registered under
// a name in the C++ RoutingRegistry, so that `replay --routing` and `run --routing` build it like a policy of
// policies/routing/ (core/routing.h has the rewrite contract). Each invocation's selection is handed to Python as
// a numpy array to rewrite in place, with the router weights and logits when the trace has them and the layer's
// residency; the rewritten selection is copied back and checked by the caller as any policy's is.
#pragma once

#include <string>

#include <pybind11/pybind11.h>

namespace moesim::python {

// Registers `cls` (called as cls(setup) with the run's routing setup as a dict) under `name`. Registering a name
// Python registered before replaces its class; the name of a C++ policy is a UsageError. `cache_dependent`:
// the rewrite reads the residency (false: it is known in advance, as pruning's; oracle caches then see it).
void register_routing(const std::string& name, pybind11::object cls, const std::string& description,
                      bool cache_dependent);

}  // namespace moesim::python
