// A sweep small enough for a unit test: `replay` of the tiny trace (tests/data/traces/tiny.route.csv) at
// budgets of 2 and 4 experts per layer for LRU, LFU and Belady (6 points, each well under a millisecond),
// run in this process through the CLI's own point runner (cli/run_command.h), as `moesim sweep` runs them.
// replay_job_test.cpp counts the tiny trace's hits by hand: Belady holds 2 at budget 2 and every policy 5 at
// budget 4.
#pragma once

#include <fstream>
#include <string>

#include "cli/run_command.h"
#include "harness/sweep_job.h"
#include "tests/fixtures.h"

namespace moesim::test {

inline constexpr size_t kTinySweepPoints = 6;

// Writes the spec to `file`; `budgets` replaces the grid's budgets (a JSON list).
inline void write_tiny_sweep_spec(const std::string& file, const std::string& budgets = R"(["2", "4"])") {
  std::ofstream(file) << R"({"command": "replay", "grid": {"trace": [")" << test_data("traces/tiny.route.csv")
                      << R"("], "scope": ["layer"], "policy": ["lru", "lfu", "belady"], "budget": )"
                      << budgets << "}}";
}

// Runs shard `shard` ("" = all) of the spec into `out`, `jobs` points at once; `run` runs each point.
inline harness::SweepOutcome run_tiny_sweep(const std::string& spec, const std::string& out,
                                            const std::string& shard = "", unsigned jobs = 1,
                                            const harness::PointRunner& run = cli::run_command) {
  harness::SweepArgs a;
  a.spec = spec;
  a.out = out;
  a.shard = shard;
  a.jobs = jobs;
  a.report = false;
  return harness::run_sweep(a, run, cli::command_line_inputs, cli::check_command);
}

}  // namespace moesim::test
