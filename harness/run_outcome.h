// One `moesim run` (or `exec`) as data: the run prepared (harness/run_setup.h), served on the simulator or
// for real, its timeline written when asked, and what its outputs are made of (the configuration, the
// metrics, the per-step and per-invocation timings). `moesim run --json` is run_outcome_json(), and
// cli/run.cpp prints its text from the outcome; the Python module returns the same JSON and the timings as
// arrays.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/json_io.h"
#include "harness/exec_runner.h"
#include "harness/run_setup.h"

namespace moesim::harness {

struct RunOutcome {
  Json config;    // the run's configuration, as the JSON header carries it
  Json metrics;   // serving metrics_json(), with "synthetic"
  Json rests_on;  // the assumption-marked profile fields the run read (harness/sim_runner.h rests_on)
  ExecReport exec_report;  // a.exec only
  traces::TraceInfo info;
  HardwareProfile hw;
  MemoryBreakdown memory;  // the whole device's memory (core/memory_model.h)
  size_t timeline_ops = 0;
  bool partial_states = false;  // the system counts a lookup found in C, S or E as a hit (SystemTraits)
  // Per workload step in order: phase (0 prefill, 1 decode) and duration in seconds; the decode steps'
  // durations are the TPOT samples of the metrics.
  std::vector<uint8_t> step_phase;
  std::vector<double> step_s;
  // Per layer invocation in completion order: its MoE layer, phase and makespan in seconds.
  std::vector<uint16_t> invocation_layer;
  std::vector<uint8_t> invocation_phase;
  std::vector<double> invocation_s;
};

// Prepares the run (UsageError for bad options), serves the trace on the simulator (or for real when a.exec),
// writes the timeline when a.timeline is set, and returns the outcome. Sets a.policy and a.budget to the ones
// run.
RunOutcome run_outcome(RunArgs& a);
// The document `moesim run --json` (`exec --json`) prints: header, warnings, metrics, rests_on, the planner's
// report for a system that plans, and exec's report.
Json run_outcome_json(const RunArgs& a, const RunOutcome& o);

}  // namespace moesim::harness
