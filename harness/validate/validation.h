// `moesim validate`: how far is the simulator from this machine? Runs the trace for real (`moesim exec`,
// --repeat N times), then simulates the same trace and configuration twice, to separate two sources of error:
//   structure  the simulator fed with every op's duration as measured in the exec run of median TPOT
//              (sim/measured_durations.h): only its model of queueing, overlap, priorities and dependencies
//              is under test;
//   cost       the simulator with the hardware profile (--hw, e.g. from `moesim calibrate`): the cost
//              models are under test too; compared with the median of the repeated exec runs.
// --calibrate-on C fits the profile here, from C served N times (`moesim calibrate C --repeat N`, --hw
// then its base), each calibration run followed by one exec run of the validated trace: on a machine whose
// speed drifts over minutes, the profile and the runs it is checked against then come from the same minutes
// (what such pairing leaves, and what it does not remove, is in bench/results/validate.md, "calibration and
// validation interleaved").
// Errors are signed fractions sim/exec - 1 of TPOT (mean), TTFT (mean), and the median and p95 of the
// per-layer makespan; per op kind, the cost model's estimate against every measured op (median and p95 of
// estimate/measured - 1) and the total time it over- or under-estimates. --csv writes them plot-ready.
#pragma once

#include <memory>
#include <string>

#include "base/json_io.h"
#include "harness/run_setup.h"

namespace moesim::harness {

struct ValidateArgs {
  std::shared_ptr<RunArgs> run = std::make_shared<RunArgs>();
  uint32_t repeat = 1;
  std::string csv;
  std::string calibrate_on, profile_out, name;  // --calibrate-on, --profile-out, --name
  // --calibrate-batch, --calibrate-budget: the calibration runs' batch and budget where they differ from the
  // validated run's (0 / empty: the same), so that a profile fitted at one batch or budget is judged at
  // another.
  uint32_t calibrate_batch = 0;
  std::string calibrate_budget;
  bool no_pilot = false;
  bool no_gemm_probe = false;             // --calibrate-on: as calibrate --no-gemm-probe
  uint32_t pilot_runs = 0;                // --pilot-runs; 0: not given (calibrate's default)
  std::string targets = kDefaultTargets;  // --targets
  bool hw_given = false;                  // --hw (or --profile) given
  // The cost check again without each of the profile's optional terms (errors.cost_without.TERM; validate
  // --matrix judges the terms on every cell).
  bool term_ablations = false;
  static constexpr const char* kDefaultTargets =
      "structure.tpot=2%,structure.layer_makespan_median=5%,cost.tpot=5%,transfer.tpot=5%";
};

// What `moesim validate` reports: the JSON (docs/cli-json.md), its text form (empty when args.run->json), and
// the errors as CSV (empty without --csv). The reference timelines (--timeline) and the fitted profile
// (--profile-out) are written on the way.
struct ValidationOutput {
  Json json;
  std::string text;
  std::string csv;
};

// Checks the arguments (UsageError), runs the trace for real --repeat times (interleaved with calibration
// runs under --calibrate-on), then the structure and cost simulations, and judges the targets.
ValidationOutput validate(ValidateArgs& va);
// Throws moesim::UsageError "--targets: ..." when `targets` is no CHECK.METRIC=LIMIT list (a matrix spec's
// "targets" is checked with it before any cell runs).
void check_targets(const std::string& targets);

}  // namespace moesim::harness
