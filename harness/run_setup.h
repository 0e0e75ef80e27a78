// The preparation shared by `moesim run` (simulated), `moesim exec` (real), `calibrate` and `validate`: the run's
// arguments (RunArgs, filled by cli/run_options.h from the command line, or by a sweep point, or from Python) read
// into a serving::SystemConfig, the trace, the hardware profile, the sizes and the lookup stream.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/hardware_profile.h"
#include "harness/exec_runner.h"
#include "serving/system.h"
#include "serving/timeline.h"
#include "sim/sim_platform.h"
#include "traces/lookup_stream.h"
#include "traces/trace.h"
#include "traces/trace_io.h"

namespace moesim::harness {

struct RunArgs {
  traces::LoadOptions load;  // --format, --fields, --model
  std::string trace, hw = "jetson-agx-orin-64gb", system = "offload", policy = "lru", budget,
                     scope = "global";
  std::vector<std::string> policies, budgets;
  std::string routing = "identity", scheduling, prefetch = "none", timeline, timeline_steps, out = "-";
  std::string host_budget, recover_on = "gpu", compute_on = "gpu", pools;
  std::string profile_trace;  // a profiling trace for a planned system's popularity profile ("": the run's own)
  uint32_t profile_tokens = 0;  // or the run's first N decode tokens (0: all of the run's trace)
  uint32_t shards = 4, delta = 0;
  bool shards_given = false;
  std::string store;
  std::optional<double> ratio;  // --ratio (zipmoe's rho); absent: the store's or the default
  double grid = 0.05;
  uint64_t seed = 1;
  bool timeline_steps_given = false;  // an empty --timeline-steps is an error, not "no window"
  uint32_t batch = 1, io_depth = 1, workers = 0;
  bool json = false, force = false, policy_given = false;
  bool compute_after_loads = false;  // --compute-after-loads (serving::SystemConfig)
  // `moesim exec`: the same run on the real machine (harness/exec_runner.h).
  bool exec = false, buffered = false, verify_gpu = false;
  std::string gpu = "auto";  // exec: auto, on, off
  // How reads reach the SSD, in run and exec alike: direct (O_DIRECT pread; "pread" is its older spelling),
  // buffered (through the OS page cache: exec without O_DIRECT, the simulator with sim/page_cache.h), uring
  // (io_uring with O_DIRECT; simulated as direct). exec's --buffered flag: buffered reads whatever --io says.
  std::string io = "direct";
  bool buffered_io() const { return buffered || io == "buffered"; }
  // The page cache's DRAM for a buffered simulated run (sim/page_cache.h's rule), set by prepare_run.
  uint64_t page_cache_bytes = 0;
  // A trace already loaded (the Python module's Trace): run instead of reading `trace`, which then only names
  // it in the output; `load` must be the options it was loaded with.
  std::shared_ptr<const traces::Trace> loaded;
};

struct PreparedRun {
  traces::Trace trace;
  HardwareProfile hw;
  serving::SourcedCosts costs;
  serving::SystemConfig cfg;  // everything but on_step
  traces::LookupStream stream;
  traces::Trace profile_trace;          // --profile-trace's or --profile-tokens' (cfg.profile_stream points at profile_stream)
  traces::LookupStream profile_stream;
  sim::SimOptions sim;
  TimelineWindow window;
  bool timeline_warned = false;
  std::string policy, budget;  // the one policy and budget given
};

// The exec platform's options from the run's (workers default to this machine's CPUs, machine_cores()).
ExecRunOptions exec_options(const RunArgs& a, const HardwareProfile& hw);
// A calibrated profile's runtime section (`moesim calibrate`: the engine's own costs, the cores its CPU-bound
// threads share) into the simulator's options; nothing for a profile without one. Throws moesim::Error naming
// the profile for a bad value.
void apply_runtime_section(const HardwareProfile& hw, sim::SimOptions& sim);
// The simulator's options for `a` on `hw` with `workers` CPU workers (0: the profile's cores): the I/O depth,
// the seed of its draws and the profile's runtime section.
sim::SimOptions sim_options(const RunArgs& a, const HardwareProfile& hw, uint32_t workers);
// Checks the options (UsageError), loads the trace, profile and model, and fills `p`.
void prepare_run(RunArgs& a, PreparedRun& p);

}  // namespace moesim::harness
