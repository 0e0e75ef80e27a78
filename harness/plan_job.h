// `moesim plan`: a system's pool planning through its planner (SystemTraits::planner; ZipMoE's hierarchical
// cache planning, §3.4, Appendix C Alg. 2-4; core/planning.h). A system without a planner is a UsageError.
//   moesim plan --trace T --model M --hw H --budget B [--system zipmoe] [--pools F,C,S,E] [--grid 0.05]
//   [--batch B]
//               [--workers L] [--shards K] [--ratio rho | --store S] [--phase decode] [--inclusion LIST]
//               [--runners-up N] [--json] [-o FILE]
// Measures the rank-based inclusion probabilities f_r from the trace (or takes them from --inclusion), asks
// a SimPlatform of the hardware profile for the delays u, v, c of Alg. 3, and grid-searches the pool ratios.
// Prints the chosen ratios, the pool sizes (experts per layer and bytes), the expected makespan per layer
// and the runners-up. docs/planning.md explains the model.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "base/json_io.h"
#include "core/params.h"
#include "traces/trace_io.h"

namespace moesim::harness {

struct PlanArgs {
  traces::LoadOptions load;  // --format, --fields, --model
  std::string trace, hw = "jetson-agx-orin-64gb", budget, pools = "F,C,S,E", store, inclusion,
                     phase = "decode", out = "-";
  // The system whose planner plans (a system spec, `moesim policies`), parsed where it is read.
  PolicySpec system{"zipmoe", {}};
  std::string io = "fused";  // who reads the E-chunks (run's zipmoe:io=): the variant of Alg. 3 planned with
  double grid = 0.05;
  std::optional<double> ratio;
  std::optional<uint32_t> shards;
  uint32_t batch = 1, threads = 0, runners_up = 5;
  bool json = false, force = false;
  bool allow_overcommit = false;  // plan a budget that does not fit beside the rest (harness/run_setup.h)
};

// Plans the pools (ZipMoE Alg. 4) for the trace, model and budget: the plan as `moesim plan` prints it (text,
// or JSON text with a.json), which cli/ writes to a.out and the Python module's moesim.plan parses.
std::string plan_output(PlanArgs& a);

}  // namespace moesim::harness
