// `moesim calibrate`: fits the simulator's cost models to this machine, from a real run of a calibration
// trace (harness/calibrate/trace_calibration.h) and/or microbenchmarks
// (harness/calibrate/micro_calibration.h). The fitted fields and their models are listed in
// harness/calibrate/calibration.cpp and docs/exec.md.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "base/json_io.h"
#include "harness/calibrate/trace_calibration.h"
#include "harness/run_setup.h"

namespace moesim::harness {

struct CalibrateArgs {
  std::shared_ptr<RunArgs> run = std::make_shared<RunArgs>();
  std::string name;
  bool micro = false;
  double micro_budget = 20;
  uint32_t micro_depth = 8;
  std::vector<std::string> micro_codecs = {"zstd:3", "lz4"};
  std::string fit_from;  // "trace" or "micro"; default: trace when a trace is given
  uint32_t repeat = 1;   // trace runs, fitted together
  bool no_pilot = false;
  bool no_gemm_probe = false;  // TraceCalibrationOptions::gemm_probe off
  uint32_t pilot_runs =
      TraceCalibrationOptions{}.pilot_runs;  // at most, until a fit plans what it was served with
};

// Checks the arguments (UsageError), runs the calibration and returns the profile, checked to load as one
// (every field sourced). Progress and a summary line go to standard error.
Json calibrate(CalibrateArgs& ca);

}  // namespace moesim::harness
