// The preparation shared by `moesim run` (simulated), `moesim exec` (real), `calibrate` and `validate`: the
// run's arguments (RunArgs, filled by cli/run_options.h from the command line, or by a sweep point, or from
// Python) read into a serving::SystemConfig, the trace, the hardware profile, the sizes and the lookup
// stream.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/hardware_profile.h"
#include "core/memory_model.h"
#include "harness/exec_runner.h"
#include "serving/pipeline.h"
#include "serving/system.h"
#include "serving/timeline.h"
#include "sim/sim_platform.h"
#include "traces/lookup_stream.h"
#include "traces/trace.h"
#include "traces/trace_io.h"

namespace moesim::harness {

struct RunArgs {
  traces::LoadOptions load;  // --format, --fields, --model
  std::string trace, hw = "jetson-agx-orin-64gb", policy = "lru", budget, scope = "global";
  // The system spec, parsed once where it is read (serving::parse_system_spec: --system's option callback,
  // the Python module, a spec file's reader); what follows works on the parsed value, and prints its text().
  PolicySpec system{"offload", {}};
  std::vector<std::string> policies, budgets;
  std::string routing = "identity", scheduling, prefetch = "none", timeline, timeline_steps, out = "-";
  std::string host_budget, recover_on = "gpu", compute_on = "gpu", pools;
  std::string
      profile_trace;  // a profiling trace for a planned system's popularity profile ("": the run's own)
  uint32_t profile_tokens = 0;  // or the run's first N decode tokens (0: all of the run's trace)
  // Warm state (serving::SystemConfig::warm_stream): --warm runs the trace once before the measured pass;
  // --warm-from T runs T (the same model's layers and experts) before it instead.
  bool warm = false;
  std::string warm_from;
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
  // The whole device's memory (core/memory_model.h): a budget that does not fit beside the dense weights, KV
  // cache, activations and reserve is refused (moesim::Error, exit 1) unless allow_overcommit; dense: pinned
  // or mmap (the dense weights' placement).
  bool allow_overcommit = false;
  std::string dense = "pinned";
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
  traces::Trace
      profile_trace;  // --profile-trace's or --profile-tokens' (cfg.profile_stream points at profile_stream)
  traces::LookupStream profile_stream;
  sim::SimOptions sim;
  TimelineWindow window;
  bool timeline_warned = false;
  std::string policy, budget;  // the one policy and budget given
  ModelMemory model_memory;    // what the model holds besides its routed experts
  MemoryBreakdown memory;      // the run's memory (check_memory_fits)
  bool overcommitted = false;  // the run does not fit and --allow-overcommit ran it anyway
  uint64_t touched_expert_bytes =
      0;                     // the bytes of the distinct experts the trace routes to (trace_touched_bytes)
  traces::Trace warm_trace;  // --warm-from's
  traces::LookupStream warm_stream;
};

// The memory model's view of a run's model: the dense bytes the run serves (costs), and from the model preset
// (`spec`: --model's, or the one the trace's model name names) the embeddings, head, the dense layers'
// weights at the same quantization, and the KV cache (f16 elements, as llama.cpp and vLLM keep it by
// default). Without a preset those are unknown and counted as 0; `source` says so.
ModelMemory run_model_memory(const std::optional<ModelSpec>& spec, const serving::SourcedCosts& costs);
// Tokens of the trace's longest sequence (prompt + generated): the context its KV cache reaches.
uint64_t trace_context_tokens(const traces::Trace& trace);
// Bytes of the distinct (layer, expert) pairs the trace (and `also`, a warm-up trace) routes to, at the
// costs' expert sizes: the most any expert cache can ever hold of this run.
uint64_t trace_touched_bytes(const traces::Trace& trace, const ModelCosts& costs,
                             const traces::Trace* also = nullptr);
// The one check every command that takes a budget runs (run, exec, compare, sweep's points, plan, Python):
// the breakdown of `r`; when it does not fit, a moesim::Error (exit 1) whose message is the breakdown, naming
// `what` (the budget), unless allow_overcommit (a warning; *overcommitted set). Callers pass
// --allow-overcommit or --force (a budget above the whole memory is the larger overcommit).
MemoryBreakdown check_memory_fits(const HardwareProfile& hw, const ModelMemory& m, const MemoryRequest& r,
                                  const std::string& what, bool allow_overcommit,
                                  bool* overcommitted = nullptr);
// The JSON of a run's memory: memory_breakdown_json, with the dense placement, the context and whether the
// run went ahead overcommitted.
Json run_memory_json(const PreparedRun& p, const RunArgs& a);

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
