// The Python classes registered as policies (python/py_eviction.h, python/py_routing.h), by kind and name, and
// the checks a new name passes. The map is never destroyed (Python objects must not be released after the
// interpreter has gone) and is read and written with the GIL held only.
#pragma once

#include <map>
#include <string>
#include <utility>

#include <pybind11/pybind11.h>

#include "base/error.h"

namespace moesim::python {

inline std::map<std::string, pybind11::object>& python_classes(const std::string& kind) {
  static auto* m = new std::map<std::string, std::map<std::string, pybind11::object>>;
  return (*m)[kind];
}

// Stores `cls` as the class of the Python policy `name` of `kind` ("eviction", "routing"). Returns true when the
// name is new (its registry entry is then to be added), false when Python registered it before (the class is
// replaced: a notebook redefining it). Throws UsageError for a C++ policy's name, "all" (every policy of a
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
    if (e.name == name) throw UsageError(kind + " policy '" + name + "' is already registered (a C++ policy)");
  if (name.empty() || name == "all" || name.find_first_of(":,;= ") != std::string::npos)
    throw UsageError(kind + " policy name '" + name + "': a name other than 'all', without ':', ',', ';', '=' or " +
                     "spaces, is needed");
  known[name] = std::move(cls);
  return true;
}

}  // namespace moesim::python
