// `moesim policies [--json] [-o OUT]`: every registered policy of every kind with its parameters, defaults
// and descriptions (docs/architecture.md). Policies register themselves; this file only reads the registries.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "base/json_io.h"
#include "traces/trace_io.h"

namespace moesim::harness {

struct PoliciesArgs {
  bool json = false;
  std::string out = "-";
};

// Lists every registry (policies, systems) with parameters and defaults, as text or JSON.
void list_policies(const PoliciesArgs& o);
// What list_policies writes: the text, or the JSON text (header, policies by kind).
std::string policies_output(bool json);

}  // namespace moesim::harness
