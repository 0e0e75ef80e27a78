// Eviction policies written in Python (docs/python.md): a subclass of moesim.EvictionPolicy registered under a
// name in the C++ EvictionRegistry, so that `replay` and `run` build it like any policy of policies/eviction/.
// Each instance is a C++ policy (core/eviction_policy.h) whose hooks call the Python object's methods with the
// GIL held; it checks what evict() returns against the contract (a resident key of the partition, never an
// in-use one before end_invocation), so a wrong Python policy is a moesim::Error naming it, never a corrupt cache.
#pragma once

#include <string>

#include <pybind11/pybind11.h>

namespace moesim::python {

// Registers `cls` (called as cls(config) with the cache's configuration as a dict) under `name`. Registering a
// name Python registered before replaces its class; the name of a C++ policy is a UsageError. `next_use`: the
// policy reads the next uses given to on_hit/on_admit (an offline oracle), so the caller builds them.
void register_eviction(const std::string& name, pybind11::object cls, const std::string& description,
                       bool next_use);

}  // namespace moesim::python
