// The Python classes registered as policies (python/py_eviction.h, python/py_routing.h), by kind and name,
// and the checks a new name passes, and how their hooks' exceptions leave them. The map is never destroyed
// (Python objects must not be released after the interpreter has gone) and is read and written with the GIL
// held only.
#pragma once

#include <pybind11/pybind11.h>

#include <map>
#include <string>
#include <utility>

#include "base/error.h"
#include "base/interrupt.h"

namespace moesim::python {

inline std::map<std::string, pybind11::object>& python_classes(const std::string& kind) {
  static auto* m = new std::map<std::string, std::map<std::string, pybind11::object>>;
  return (*m)[kind];
}

// Stores `cls` as the class of the Python policy `name` of `kind` ("eviction", "routing"). Returns true when
// the name is new (its registry entry is then to be added), false when Python registered it before (the class
// is replaced: a notebook redefining it). Throws UsageError for a C++ policy's name, "all" (every policy of a
// --policy list) and a name that a policy list or spec would split.
template <typename Registry>
bool store_python_class(const Registry& registry, const std::string& kind, const std::string& name,
                        pybind11::object cls) {
  auto& known = python_classes(kind);
  if (auto it = known.find(name); it != known.end()) {
    it->second = std::move(cls);
    return false;
  }
  for (const auto& e : registry.entries())
    if (e.name == name)
      throw UsageError(kind + " policy '" + name + "' is already registered (a C++ policy)");
  if (name.empty() || name == "all" || name.find_first_of(":,;= ") != std::string::npos)
    throw UsageError(kind + " policy name '" + name +
                     "': a name other than 'all', without ':', ',', ';', '=' or " + "spaces, is needed");
  known[name] = std::move(cls);
  return true;
}

// Rethrows what a Python policy's hook raised (the GIL held): KeyboardInterrupt as moesim::Interrupted, so
// that the call raises KeyboardInterrupt rather than a moesim.Error that `except moesim.Error` would swallow;
// anything else as a moesim::Error, `context` (the policy and the hook) and the Python exception's type and
// message.
[[noreturn]] inline void rethrow_hook_error(const pybind11::error_already_set& e,
                                            const std::string& context) {
  if (e.matches(PyExc_KeyboardInterrupt)) throw Interrupted{};
  throw Error(context + e.what());
}

}  // namespace moesim::python
