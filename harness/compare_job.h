// `moesim compare`: the policy comparison table -- eviction policies x budgets x cache scopes (global and
// per-layer by default, each row labelled, so that policies are only ranked at equal scope), each a full
// simulated `run --system offload` on the same trace, hardware and batch. Rows: hit rates (cumulative and
// decode-only) and simulated TPOT (mean, p90) with tokens/s. --json prints every cell's metrics.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "base/json_io.h"
#include "traces/trace_io.h"

namespace moesim::harness {

struct CompareArgs {
  traces::LoadOptions load;  // --format, --fields, --model
  std::string trace, hw = "jetson-agx-orin-64gb", scope = "global,layer";
  std::vector<std::string> policies, budgets, routing, prefetch;
  // --system: systems side by side instead of policies (harness/compare_systems.h); empty: the policy
  // comparison of offload.
  std::vector<std::string> systems;
  uint32_t batch = 1, io_depth = 1;
  unsigned threads = 1;
  bool json = false, force = false;
  bool allow_overcommit = false;  // run budgets that do not fit beside the rest (harness/run_setup.h)
  std::string csv, out = "-";
  std::string plot;  // --plot FILE: hit rate and TPOT against the budget (scripts/plot_compare.py)
};

// The comparison as --json prints it (`doc`) and as --csv writes it (`csv`), neither written anywhere (the
// Python module's moesim.compare); a.out and a.csv are only checked to be writable.
struct CompareResult {
  Json doc;
  std::string csv;
};
CompareResult compare_result(const CompareArgs& a);

// Simulates every (policy, routing, budget) -- or with a.systems every (system, budget) -- writes the CSV to
// a.csv and the plot to a.plot when asked, and returns the comparison table, or the JSON text with a.json,
// which cli/ writes to a.out.
std::string compare_output(const CompareArgs& a);

}  // namespace moesim::harness
