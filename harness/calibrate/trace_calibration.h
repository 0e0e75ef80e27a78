// `moesim calibrate` with a calibration trace: serves it for real (`moesim exec`), fits the simulator's cost
// models to every op's duration (cli/calibrate.cpp lists the fields) and checks the fitted profile on the
// runs it came from.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "base/json_io.h"
#include "harness/calibrate/calibrate_fit.h"
#include "harness/latency_summary.h"
#include "harness/run_setup.h"
#include "serving/system.h"
#include "sim/sim_platform.h"

namespace moesim::harness {

struct TraceCalibrationOptions {
  std::string name;     // the profile's name ("" = calibrated-HOST)
  uint32_t repeat = 1;  // measured runs, every op of each in the fits
  // A system whose decisions read the cost model (zipmoe: the pool planner, ZipMoE Alg. 4, and the scheduler,
  // Alg. 1) first serves the trace once under the base profile; the measured runs then plan with that pilot
  // run's fit, so they exercise the plan the calibrated profile will make rather than the base profile's.
  // Where a pilot's fit plans the pools otherwise than the pilot was served, another pilot runs under that
  // fit, until a fit plans what its run was served with (a fixed point) or `pilot_runs` pilots have run (0:
  // none).
  uint32_t pilot_runs = 3;
  // Called after each measured run (not the pilot) with the profile the runs are planned with and a progress
  // callback over `between_steps` steps: `moesim validate --calibrate-on` serves its own trace there, so that
  // the calibration runs and the runs validated against them see the same minutes of this machine.
  std::function<void(const HardwareProfile& planner, const std::function<void(uint64_t done)>& progress)>
      between_runs;
  uint64_t between_steps = 0;
  // Where a CPU thread emulates the GPU stream, time the run's dense and expert GEMMs at 2-32 tokens before
  // the runs and cost each kind's ops of 2+ tokens by its line (harness/calibrate/gemm_probe.h); false
  // (`calibrate
  // --no-gemm-probe`): the roofline and a mean fixed cost per kind, fitted on the runs' ops alone. On the
  // held-out transfer cells (calibrated at batch 1, validated at 4 and 8) it cut the mean |TPOT error| from
  // 8.6% to 6.0%, from 9.8% to 1.8% on the small model's, not on a scaled DeepSeek-V2-Lite's
  // (bench/results/batch-transfer-2026-12-05.md).
  bool gemm_probe = true;
};

// The profile (hardware-profile JSON with a "calibration" section). After the fit it simulates the
// calibration trace with the profile and reports the in-sample error against the measured runs
// (calibration.in_sample), warning when the profile would plan differently from the runs it was fitted to.
// `whole_out` (optional): where the runs read with O_DIRECT and the profile models the I/O thread's CPU work
// per read (ssd.read_cpu_*), the ablation: the same runs fitted with each read whole, without it (else left
// as is).
Json trace_profile(RunArgs& a, const TraceCalibrationOptions& o, const CalibrationStamp& st,
                   Json* whole_out = nullptr);

// A simulation of `cfg` with `hw` that compares the cost model on the ops some measured runs made. ZipMoE
// plans its pools (Alg. 4) and schedules (Alg. 1) with the cost model, so a profile may plan the pools
// otherwise than the runs were served (`served`: their plan_ratios; "" for a system without pools, or to take
// the profile's own plan); the run is then simulated again with the pools fixed to `served`, and the figures
// under the profile's own plan are kept beside. calibrate's in-sample check and validate's cost check both
// use it.
struct ServedPlanRun {
  serving::RunResult run;    // under `served` where the plans differ, else under the profile's own plan
  std::string profile_plan;  // what the planner makes of hw ("" without pools)
  std::optional<LatencySummary> own_plan;  // the figures under profile_plan, where it is not `served`
};
ServedPlanRun simulate_served_plan(const serving::SystemConfig& cfg, const PreparedRun& p,
                                   const HardwareProfile& hw, const sim::SimOptions& so,
                                   const std::string& served);

}  // namespace moesim::harness
