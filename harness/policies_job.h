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

// Every registry (policies, systems) with its parameters (type, range, default): the text, or the JSON text
// (header, policies by kind), which cli/ writes to the output.
std::string policies_output(bool json);

}  // namespace moesim::harness
