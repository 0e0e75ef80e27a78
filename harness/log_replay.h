// A real engine's per-token log (traces/engine_log.h) and the route trace the same run recorded, replayed in
// the simulator: what `moesim validate --log` (harness/validate/log_validation.h) compares and what
// `moesim calibrate --from-log` (harness/calibrate/log_calibration.h) fits from. At harness/'s top level
// because both rooms use it and neither includes the other's files for it.
//
// The log and the trace must be of one run: as many token rows as the trace has decode steps, the summary's
// prompt tokens the trace's prefill tokens, one sequence at batch 1, and the bytes the log read in its decode
// tokens within 10% of what the simulated replay reads (an engine pads each read to its block size: a
// fraction of a percent). Anything else is a moesim::Error naming the log and the trace.
// Errors are signed fractions, simulator over log minus one: TPOT against the log's mean wall_ms per token,
// TTFT against the summary's prefill time.
#pragma once

#include <string>
#include <vector>

#include "base/json_io.h"
#include "harness/run_setup.h"
#include "traces/engine_log.h"

namespace moesim::harness {

// Per decode step of the simulated replay: its SSD reads and their bytes, the weight bytes its layers
// computed and their FLOPs (dense weights and every routed expert, the engine's sizes) and its simulated
// time.
struct ReplayStep {
  uint64_t reads = 0;
  double read_bytes = 0, weight_bytes = 0, flops = 0, seconds = 0;
};

struct LogRun {
  traces::EngineLog log;
  PreparedRun prepared;
  std::string trace_path;
  RunArgs args;  // the run's options (sim_options() for another profile)
};

// Reads the log (with --log-fields' mapping), prepares the run (prepare_run: the trace, the profile --hw),
// and checks that the two are of one run as far as the trace alone tells (token rows against decode steps,
// prompt tokens, one sequence at batch 1).
LogRun load_log_run(RunArgs& a, const std::string& log_path, const std::string& log_fields);

// Simulates `p` with `hw` recording every op, and returns the decode steps' reads, weights and times (in
// the log's order). Checks the bytes read against the log's (another model's log: an Error).
std::vector<ReplayStep> replay_steps(const LogRun& r, const HardwareProfile& hw,
                                     serving::RunResult* run = nullptr);

// TPOT and TTFT of the simulation against the log.
struct LogErrors {
  double sim_tpot = 0, log_tpot = 0, sim_ttft = 0, log_ttft = 0;
  double sim_stall = 0, log_stall = 0;  // per token: time not in compute or copies (the simulated one: TPOT
                                        // less the compute and copy ops on the critical lane)
  double tpot() const { return sim_tpot / log_tpot - 1; }
  double ttft() const { return sim_ttft / log_ttft - 1; }
  Json json() const;
};
LogErrors log_errors(const LogRun& r, const HardwareProfile& hw);

}  // namespace moesim::harness
