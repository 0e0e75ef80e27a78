#include "harness/run_setup.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <optional>
#include <unordered_map>

#include "base/atomic_file.h"
#include "base/error.h"
#include "base/units.h"
#include "base/warnings.h"
#include "core/planning.h"
#include "core/prefetch.h"
#include "core/profile_reads.h"
#include "core/routing.h"
#include "core/scheduling.h"
#include "harness/arguments.h"
#include "harness/machine.h"
#include "harness/store_layout.h"
#include "kernels/bf16_cuda.h"
#include "serving/timeline.h"
#include "serving/workload_view.h"
#include "traces/trace_io.h"

namespace moesim::harness {
namespace {

ResourceClass parse_placement(const char* option, const std::string& v) {
  if (v == "gpu") return ResourceClass::kGpu;
  if (v == "cpu") return ResourceClass::kCpu;
  throw UsageError(std::string(option) + ": '" + v + "' is not a place to run (gpu or cpu)");
}

}  // namespace

ExecRunOptions exec_options(const RunArgs& a,
                            const HardwareProfile& /*hw: not the machine a real run is on*/) {
  ExecRunOptions eo;
  eo.store = a.store;
  // A real run's workers are this machine's threads: the profile's cores describe the machine it models,
  // which a real run is not on (a 12-core profile on a 2-core machine would oversubscribe it).
  eo.workers = a.workers ? a.workers : machine_cores();
  eo.io_depth = a.io_depth;
  eo.direct_io = !a.buffered_io();
  if (a.buffered_io() && !a.store.empty()) warn_if_store_fits_page_cache(a.store);
  eo.io = a.io == "uring" ? exec::IoBackend::kUring : exec::IoBackend::kPread;
  eo.seed = a.seed;
  std::string why;
  const bool usable = a.gpu != "off" && kernels::cuda_available(&why);
  if (a.gpu == "on" && !usable) throw Error("--gpu on: no usable CUDA GPU (" + why + ")");
  eo.gpu = usable;
  eo.verify_gpu = a.verify_gpu;
  if (a.verify_gpu && !usable)
    warn("--verify-gpu: exec runs without a GPU here, so there is nothing to verify");
  return eo;
}

namespace {
// runtime.KEY: a distribution, runtime_quantiles() of a cost (seconds, each >= 0 and < 1 s, ascending).
std::vector<double> runtime_quantiles_of(const HardwareProfile& hw, const std::string& key) {
  const Json& g = hw.raw["runtime"][key];
  const Json& v = g.is_object() ? g.value("value", Json()) : g;
  std::vector<double> q;
  bool ok = v.is_array() && !v.empty();
  for (size_t k = 0; ok && k < v.size(); ++k) {
    ok = v[k].is_number() && v[k].get<double>() >= 0 && v[k].get<double>() < 1 &&
         (k == 0 || v[k].get<double>() >= q.back());
    if (ok) q.push_back(v[k].get<double>());
  }
  if (!ok)
    throw Error(hw.origin + ": runtime." + key +
                " must be a non-empty ascending list of times in seconds (each >= 0 and "
                "< 1 s), not " +
                v.dump());
  return q;
}
}  // namespace

void apply_runtime_section(const HardwareProfile& hw, sim::SimOptions& sim) {
  if (!hw.raw.contains("runtime")) return;
  sim.profile_fields = runtime_fields_read(hw);
  sim.dispatch_latency = hardware_value(hw.raw, "runtime", "dispatch_latency", "time", hw.origin);
  sim.completion_latency = hardware_value(hw.raw, "runtime", "pipeline_latency", "time", hw.origin);
  sim.wake_latency = hardware_value(hw.raw, "runtime", "wake_latency", "time", hw.origin);
  if (hw.raw["runtime"].contains("plan_latency_per_op"))
    sim.plan_latency_per_op = hardware_value(hw.raw, "runtime", "plan_latency_per_op", "time", hw.origin);
  if (hw.raw["runtime"].contains("plan_latency_fixed"))
    sim.plan_latency_fixed = hardware_value(hw.raw, "runtime", "plan_latency_fixed", "time", hw.origin);
  if (hw.raw["runtime"].contains("plan_tail_per_op"))
    sim.plan_tail_per_op = hardware_value(hw.raw, "runtime", "plan_tail_per_op", "time", hw.origin);
  if (hw.raw["runtime"].contains("plan_tail_fixed"))
    sim.plan_tail_fixed = hardware_value(hw.raw, "runtime", "plan_tail_fixed", "time", hw.origin);
  if (hw.raw["runtime"].contains("wake_latency_quantiles"))
    sim.wake_q = runtime_quantiles_of(hw, "wake_latency_quantiles");
  // The cores the engine's CPU-bound threads share, and whether the GPU stream is one of them
  // (sim/cpu_cores.h).
  if (hw.raw["runtime"].contains("cpu_cores")) {
    const double c = hardware_value(hw.raw, "runtime", "cpu_cores", "number", hw.origin);
    if (!(c >= 1 && c <= 65536 && c == std::floor(c)))
      throw Error(hw.origin + ": runtime.cpu_cores must be a whole number of cores >= 1, not " +
                  strprintf("%g", c));
    sim.cpu_cores = static_cast<uint32_t>(c);
  }
  if (hw.raw["runtime"].contains("gpu_stream_on_cpu")) {
    const Json& g = hw.raw["runtime"]["gpu_stream_on_cpu"];
    const Json& v = g.is_object() ? g.value("value", Json()) : g;
    if (!v.is_boolean())
      throw Error(hw.origin + ": runtime.gpu_stream_on_cpu must be true or false, not " + v.dump());
    sim.gpu_on_cpu = v.get<bool>();
  }
  for (size_t i = 0; i < kResourceClasses; ++i) {
    const std::string key = std::string("turnaround_") + resource_class_name(static_cast<ResourceClass>(i));
    if (hw.raw["runtime"].contains(key))
      sim.turnaround[i] = hardware_value(hw.raw, "runtime", key.c_str(), "time", hw.origin);
    const std::string dkey =
        std::string("dispatch_latency_") + resource_class_name(static_cast<ResourceClass>(i));
    if (hw.raw["runtime"].contains(dkey))
      sim.dispatch[i] = hardware_value(hw.raw, "runtime", dkey.c_str(), "time", hw.origin);
    if (hw.raw["runtime"].contains(dkey + "_quantiles"))
      sim.dispatch_q[i] = runtime_quantiles_of(hw, dkey + "_quantiles");
  }
}

sim::SimOptions sim_options(const RunArgs& a, const HardwareProfile& hw, uint32_t workers) {
  sim::SimOptions so;
  so.io_depth = a.io_depth;
  so.buffered_io = a.io == "buffered";
  so.page_cache_bytes = a.page_cache_bytes;
  so.dense_mmap = a.dense == "mmap";
  so.cpu_workers = workers;
  so.seed = a.seed;
  apply_runtime_section(hw, so);
  return so;
}

ModelMemory run_model_memory(const std::optional<ModelSpec>& spec, const serving::SourcedCosts& costs) {
  uint64_t served_dense = 0;
  for (uint64_t d : costs.costs.dense_bytes) served_dense += d;
  ModelMemory m;
  m.all_experts_bytes = costs.sizes["all_experts_bytes"].get<uint64_t>();
  if (!spec) {
    m.dense_bytes = served_dense;
    m.source = "the run's dense weights (" + costs.sizes["dense_bytes_source"].get<std::string>() +
               "); no model preset: embeddings, head, KV cache and activations unknown, counted as 0";
    return m;
  }
  const ModelMemory preset = model_memory(*spec);
  m.kv_bytes_per_token = preset.kv_bytes_per_token;
  m.kv_window_tokens = preset.kv_window_tokens;
  m.kv_windowed_bytes_per_token = preset.kv_windowed_bytes_per_token;
  m.kv_fixed_bytes = preset.kv_fixed_bytes;
  m.tied = preset.tied;
  m.activation_bytes_per_token = preset.activation_bytes_per_token;
  // The weights the run does not read per layer (embeddings, head, dense layers) at the quantization of those
  // it does: the served dense bytes over the preset's.
  const uint64_t preset_layers = spec->dense_bytes_moe_layers();
  const double q =
      preset_layers ? static_cast<double>(served_dense) / static_cast<double>(preset_layers) : 1.0;
  auto scaled = [q](uint64_t b) { return static_cast<uint64_t>(std::llround(q * static_cast<double>(b))); };
  const uint64_t dense_layers = preset.dense_bytes > preset_layers ? preset.dense_bytes - preset_layers : 0;
  m.dense_bytes = served_dense + scaled(dense_layers);
  m.embedding_bytes = scaled(preset.embedding_bytes);
  m.lm_head_bytes = scaled(preset.lm_head_bytes);
  m.source = "the run's dense weights (" + costs.sizes["dense_bytes_source"].get<std::string>() + "); " +
             preset.source +
             strprintf(
                 " for embeddings, head and dense layers (x %.4g, the run's quantization of "
                 "the dense weights), KV cache (f16) and activations",
                 q);
  return m;
}

uint64_t trace_context_tokens(const traces::Trace& trace) {
  // Per sequence: its prompt (prefill steps are prompt positions) and its generated tokens (decode steps).
  std::unordered_map<uint32_t, std::pair<uint64_t, uint64_t>> seen;
  for (size_t r = 0; r < trace.records(); ++r) {
    auto& [prompt, generated] = seen[trace.seq(r)];
    uint64_t& n = trace.phase(r) == traces::Phase::kPrefill ? prompt : generated;
    n = std::max<uint64_t>(n, uint64_t{trace.step(r)} + 1);
  }
  uint64_t longest = 0;
  for (const auto& [seq, n] : seen) longest = std::max(longest, n.first + n.second);
  return longest;
}

uint64_t trace_touched_bytes(const traces::Trace& trace, const ModelCosts& costs, const traces::Trace* also) {
  const traces::TraceInfo& info = trace.info();
  std::vector<bool> seen(uint64_t{info.layers} * info.experts, false);
  uint64_t bytes = 0;
  for (const traces::Trace* t : {&trace, also}) {
    if (!t) continue;
    for (size_t r = 0; r < t->records(); ++r)
      for (uint32_t e : t->experts(r)) {
        const uint32_t layer = t->layer(r);
        const uint64_t cell = uint64_t{layer} * info.experts + e;
        if (layer >= info.layers || e >= info.experts || seen[cell]) continue;
        seen[cell] = true;
        bytes += layer < costs.expert_bytes.size() ? costs.expert_bytes[layer] : 0;
      }
  }
  return bytes;
}

MemoryBreakdown check_memory_fits(const HardwareProfile& hw, const ModelMemory& m, const MemoryRequest& r,
                                  const std::string& what, bool allow_overcommit, bool* overcommitted) {
  MemoryBreakdown b = memory_breakdown(hw, m, r);
  if (overcommitted) *overcommitted = false;
  if (b.fits()) return b;
  const std::string msg =
      what + " does not fit in the memory of " + hw.display_name + " beside the rest (" +
      strprintf("context %llu tokens x batch %u, dense weights %s",
                static_cast<unsigned long long>(r.context_tokens), r.batch, dense_placement_name(r.dense)) +
      "):\n" + memory_breakdown_text(b);
  if (!allow_overcommit)
    throw Error(
        msg +
        "pass --allow-overcommit to run it anyway, or see `moesim fit` for the largest budget that fits");
  warn(msg + "running it anyway (--allow-overcommit)");
  if (overcommitted) *overcommitted = true;
  return b;
}

Json run_memory_json(const PreparedRun& p, const RunArgs& a) {
  Json j = memory_breakdown_json(p.memory, p.model_memory);
  j["dense"] = a.dense;
  j["context_tokens"] = trace_context_tokens(p.trace);
  j["overcommitted"] = p.overcommitted;
  j["trace_touched_expert_bytes"] = p.touched_expert_bytes;
  j["trace_touched_share"] = p.model_memory.all_experts_bytes
                                 ? Json(static_cast<double>(p.touched_expert_bytes) /
                                        static_cast<double>(p.model_memory.all_experts_bytes))
                                 : Json(nullptr);
  return j;
}

namespace {
// The run's request to the memory model: the budget in bytes (one in experts per layer at the model's mean
// expert size), the host tier's, the trace's longest sequence at the run's batch.
MemoryRequest run_memory_request(const RunArgs& a, const PreparedRun& p, const CacheCapacity& budget) {
  MemoryRequest r;
  r.gpu_budget = budget.value;
  if (budget.unit == CacheCapacity::Unit::kExperts)
    r.gpu_budget = budget.value * (p.model_memory.all_experts_bytes / std::max(p.trace.info().experts, 1u));
  r.host_budget = p.cfg.host_budget_bytes;
  r.context_tokens = trace_context_tokens(p.trace);
  r.batch = a.batch;
  r.dense = parse_dense_placement(a.dense);
  return r;
}

// The records of the first `tokens` decode tokens of `t`, in the trace's order (sequence by sequence): what a
// system that profiles its first tokens has seen when it plans.
traces::Trace first_decode_tokens(const traces::Trace& t, uint32_t tokens) {
  traces::TraceBuilder b(t.info(), false, false, "the run's first decode tokens");
  uint64_t seen = 0, line = 0;
  uint32_t last_seq = UINT32_MAX, last_step = UINT32_MAX;
  std::vector<uint32_t> ids;
  for (size_t r = 0; r < t.records(); ++r) {
    if (t.phase(r) != traces::Phase::kDecode) continue;
    if (t.seq(r) != last_seq || t.step(r) != last_step) {
      if (seen == tokens) break;
      ++seen;
      last_seq = t.seq(r);
      last_step = t.step(r);
    }
    ids.assign(t.experts(r).begin(), t.experts(r).end());
    b.add(t.seq(r), traces::Phase::kDecode, t.step(r), t.layer(r), ids, {}, {}, ++line);
  }
  if (seen < tokens)
    warn("--profile-tokens " + std::to_string(tokens) + ": the trace has " + std::to_string(seen) +
         " decode tokens; the profile is all of them");
  return std::move(b).finish();
}

// The whole device's memory: refused here (before any simulation) when the budget does not fit beside the
// rest; the page cache of a buffered run is what DRAM has left; a budget above what the trace touches is
// said.
void prepare_memory(RunArgs& a, PreparedRun& p, const CacheCapacity& budget,
                    const std::optional<ModelSpec>& model, const std::string& budget_text) {
  p.model_memory = run_model_memory(model ? model : preset_for_model_name(p.trace.info().model), p.costs);
  const MemoryRequest r = run_memory_request(a, p, budget);
  // --force (a budget above the device's memory) implies the lesser overcommit.
  p.memory = check_memory_fits(p.hw, p.model_memory, r, "--budget " + budget_text,
                               a.allow_overcommit || a.force, &p.overcommitted);
  if (a.io == "buffered" || a.dense == "mmap") a.page_cache_bytes = p.memory.page_cache_bytes;
  p.touched_expert_bytes =
      trace_touched_bytes(p.trace, p.costs.costs, a.warm_from.empty() ? nullptr : &p.warm_trace);
  const uint64_t all = p.model_memory.all_experts_bytes;
  if (r.gpu_budget + r.host_budget > p.touched_expert_bytes && p.touched_expert_bytes < all)
    warn("--budget " + budget_text + ": the trace touches " + format_bytes(p.touched_expert_bytes) +
         " of the model's " + format_bytes(all) + " of experts (" +
         strprintf("%.1f%%", 100.0 * static_cast<double>(p.touched_expert_bytes) / static_cast<double>(all)) +
         "): a cache above that is never filled by this trace, and a longer conversation would see a lower "
         "hit rate");
}

// --host-budget: bytes with a unit, or zero ("0", "0GiB", "0.0 MB"): no host tier, as leaving it out. A size
// with a unit is read by the shared size parser (its errors name the unit); a plain number other than 0 is
// refused by parse_bytes_option as elsewhere.
uint64_t host_budget_bytes(const std::string& text) {
  if (!text.empty() && text.find_first_not_of('0') == std::string::npos) return 0;
  if (text.find_first_not_of("0123456789") != std::string::npos) {
    try {
      if (parse_bytes(text) == 0) return 0;
    } catch (const Error& e) {
      throw UsageError(std::string("--host-budget: ") + e.what());
    }
  }
  return parse_bytes_option("--host-budget", text);
}

// --warm-from's trace, checked against the run's: the same model's layers and experts.
void load_warm_trace(const RunArgs& a, PreparedRun& p) {
  if (a.warm_from.empty()) return;
  require_trace_input(a.warm_from);
  p.warm_trace = traces::load_trace(a.warm_from, a.load);
  const traces::TraceInfo& w = p.warm_trace.info();
  if (w.layers != p.trace.info().layers || w.experts != p.trace.info().experts)
    throw UsageError("--warm-from " + a.warm_from + " has " + std::to_string(w.layers) + " layers x " +
                     std::to_string(w.experts) + " experts, the run's trace " + a.trace + " " +
                     std::to_string(p.trace.info().layers) + " x " + std::to_string(p.trace.info().experts) +
                     ": warm the caches with a trace of the same model");
}

// What warms the caches before the measured pass (serving::SystemConfig::warm_stream), once the run's stream
// is built.
void set_warm_start(const RunArgs& a, PreparedRun& p) {
  serving::SystemConfig& cfg = p.cfg;
  if (a.warm) {
    cfg.warm_stream = &p.stream;
    cfg.warm_source = "--warm (the trace itself, once)";
  } else if (!a.warm_from.empty()) {
    p.warm_stream = traces::build_lookup_stream(p.warm_trace, a.batch);
    cfg.warm_stream = &p.warm_stream;
    cfg.warm_source = "--warm-from " + a.warm_from;
  }
}

// --profile-trace: the planner's popularity profile from another trace of the same model, read as the run's.
void load_profile_trace(const RunArgs& a, const serving::SystemTraits& traits, PreparedRun& p) {
  if (!traits.plans_pools()) {
    warn(std::string(a.profile_tokens ? "--profile-tokens" : "--profile-trace") +
         " only applies to a system that plans its pools from a popularity profile; ignored for --system " +
         a.system.text());
    return;
  }
  if (a.profile_tokens > 0) {
    p.profile_trace = first_decode_tokens(p.trace, a.profile_tokens);
    p.profile_stream = traces::build_lookup_stream(p.profile_trace, a.batch);
    p.cfg.profile_stream = &p.profile_stream;
    p.cfg.profile_source = "the run's first " + std::to_string(a.profile_tokens) + " decode tokens";
    return;
  }
  require_trace_input(a.profile_trace);
  p.profile_trace = traces::load_trace(a.profile_trace, a.load);
  const traces::TraceInfo& run = p.trace.info();
  const traces::TraceInfo& prof = p.profile_trace.info();
  if (prof.layers != run.layers || prof.experts != run.experts)
    throw Error(a.profile_trace + ": --profile-trace has " + std::to_string(prof.layers) + " layers x " +
                std::to_string(prof.experts) + " experts, the run's trace " + std::to_string(run.layers) +
                " x " + std::to_string(run.experts) + ": a popularity profile must come from the same model");
  p.profile_stream = traces::build_lookup_stream(p.profile_trace, a.batch);
  p.cfg.profile_stream = &p.profile_stream;
  p.cfg.profile_source = "--profile-trace " + a.profile_trace;
}
}  // namespace

namespace {
// The options of the platform a run simulates or drives (batch, reads, dense weights' placement, workers,
// what warms its caches), checked before the trace is loaded; --io pread is the old spelling of direct.
void check_platform_options(RunArgs& a) {
  if (a.warm && !a.warm_from.empty())
    throw UsageError("--warm and --warm-from both say what warms the caches: pass one");
  if (a.exec && (a.warm || !a.warm_from.empty()))
    throw UsageError("--warm and --warm-from apply to simulated runs (exec starts from the caches it finds)");
  require_at_least("--batch", a.batch, 1);
  check_io_depth("--io-depth", a.io_depth);
  if (a.io == "pread") a.io = "direct";
  if (a.io != "direct" && a.io != "buffered" && a.io != "uring")
    throw UsageError("--io: '" + a.io + "' is not a way to read (direct, buffered or uring)");
  parse_dense_placement(a.dense);
  if (a.workers > 4096)
    throw UsageError("--workers " + std::to_string(a.workers) + " is too large (at most 4096)");
}

// The system spec with the flags that are sugar for its parameters fed in; a flag and the same key in the
// spec is an error, a flag the system does not take a warning.
PolicySpec system_spec_with_flags(const RunArgs& a, const PolicySpec& given) {
  PolicySpec spec = given;
  auto feed = [&](bool flag_given, const char* flag, const char* key, const std::string& value) {
    if (!flag_given) return;
    if (serving::system_declares(given, key))
      spec = serving::with_system_param(spec, key, value, flag);
    else
      warn(std::string(flag) + " only applies to --system " + serving::systems_declaring(key) +
           "; ignored for --system " + a.system.text());
  };
  feed(!a.pools.empty(), "--pools", "pools", a.pools);
  // Checked here, by the flag's name, whatever the system: a value out of range is refused, never replaced by
  // the default (the system's own check would name its parameter, not the flag).
  if (a.ratio) check_exponent_ratio(*a.ratio, "--ratio");
  if (a.shards_given) check_shards(a.shards, "--shards");
  feed(a.ratio.has_value(), "--ratio", "e_ratio", a.ratio ? strprintf("%.17g", *a.ratio) : "");
  feed(a.shards_given, "--shards", "shards", std::to_string(a.shards));
  feed(a.delta > 0, "--delta", "delta", std::to_string(a.delta));
  feed(a.grid != RunArgs().grid, "--grid", "grid", strprintf("%.17g", a.grid));
  return spec;
}

// The run's routing, prefetch and scheduling specs (scheduling's name empty: the system's default).
struct RunPolicySpecs {
  PolicySpec routing, prefetch, scheduling;
};

RunPolicySpecs parse_run_policies(const RunArgs& a) {
  RunPolicySpecs s{PolicySpec::parse(a.routing), PolicySpec::parse(a.prefetch),
                   a.scheduling.empty() ? PolicySpec{} : PolicySpec::parse(a.scheduling)};
  (void)RoutingRegistry::instance().params(s.routing, "routing");
  (void)PrefetchRegistry::instance().params(s.prefetch, "prefetch");
  if (!a.scheduling.empty()) (void)SchedulingRegistry::instance().params(s.scheduling, "scheduling");
  return s;
}
}  // namespace

void prepare_run(RunArgs& a, PreparedRun& p) {
  if (!a.loaded) require_trace_input(a.trace);
  if (!a.profile_trace.empty() && a.profile_tokens > 0)
    throw UsageError("--profile-trace and --profile-tokens both say where the profile comes from: pass one");
  // The system spec came parsed (RunArgs::system); its traits, the flags that feed its parameters and the
  // run's config work on that value.
  const PolicySpec& given = a.system;
  const serving::SystemTraits& traits = serving::system_traits(given);  // UsageError: unknown system
  // So are the run's policies; their values are checked here too, before the trace is loaded.
  const RunPolicySpecs policy_specs = parse_run_policies(a);
  if (!traits.host_tier && !a.host_budget.empty() && host_budget_bytes(a.host_budget) > 0)
    throw UsageError("--host-budget applies to a system with a host-memory tier (" +
                     serving::systems_with_host_tier() + "), not --system " + a.system.text());
  if (a.exec && a.store.empty())
    throw UsageError("--store is required: exec reads the experts from a packed store");
  PolicySpec system_spec = system_spec_with_flags(a, given);
  if (!a.store.empty() && !a.exec && !traits.uses_store_layout)
    warn("--store only applies to a system that reads a store's layout; ignored for --system " +
         a.system.text());
  serving::make_system(system_spec);  // the parameters' values, before the trace is loaded
  const ResourceClass recover_on = parse_placement("--recover-on", a.recover_on);
  const ResourceClass compute_on = parse_placement("--compute-on", a.compute_on);
  check_platform_options(a);
  std::vector<std::string> policies = split_policy_list(a.policies);
  if (policies.empty()) policies = {"lru"};
  const std::vector<std::string> budgets = split_budget_list(a.budgets);
  if (policies.size() != 1)
    throw UsageError("--policy: run simulates one policy (got " + std::to_string(policies.size()) +
                     "); use `moesim compare` for several");
  if (budgets.empty()) throw UsageError("--budget is required (bytes such as 8GiB, or experts per layer)");
  if (budgets.size() != 1)
    throw UsageError("--budget: run simulates one budget (got " + std::to_string(budgets.size()) +
                     "); use `moesim compare` for several");
  const CacheScope scope = parse_scope_option("--scope", a.scope);
  CacheCapacity budget = parse_budget_option("--budget", budgets[0]);
  eviction_canonical_name(policies[0]);  // unknown policy: fail before loading the trace
  check_output_writable(a.out);
  if (!a.timeline.empty()) check_output_writable(a.timeline);
  TimelineWindow& window = p.window;
  if (a.timeline_steps_given) {
    if (a.timeline.empty()) throw UsageError("--timeline-steps needs --timeline FILE");
    window = parse_timeline_steps(a.timeline_steps);
  }

  p.trace = a.loaded ? *a.loaded : traces::load_trace(a.trace, a.load);
  const traces::Trace& trace = p.trace;
  p.hw = load_hardware(a.hw);
  const HardwareProfile& hw = p.hw;
  std::optional<ModelSpec> model;
  if (!a.load.model.empty()) model = load_model(a.load.model);
  p.costs = serving::model_costs(trace.info(), model);
  const serving::SourcedCosts& costs = p.costs;
  warn_trace_plausibility(a.trace, trace, a.batch);
  budget = resolve_budget_option("--budget", budget, trace.info(),
                                 costs.sizes["all_experts_bytes"].get<uint64_t>());
  // A pooled system's pools are per layer whatever --scope says (ZipMoE's hold compressed experts): the
  // global-cache working-set warning does not apply to it.
  check_budget_plausibility("--budget", budget, traits.per_layer_scope ? CacheScope::kPerLayer : scope,
                            trace.info(), costs.sizes["all_experts_bytes"].get<uint64_t>(), &hw, a.force);

  serving::SystemConfig& cfg = p.cfg;
  cfg.system = system_spec;
  cfg.eviction = a.policy_given ? PolicySpec::parse(policies[0]) : PolicySpec{};
  cfg.routing = policy_specs.routing;
  cfg.trace = &p.trace;
  cfg.scheduling = policy_specs.scheduling;
  cfg.prefetch = policy_specs.prefetch;
  cfg.scope = scope;
  cfg.budget = budget;
  if (!a.host_budget.empty()) cfg.host_budget_bytes = host_budget_bytes(a.host_budget);
  cfg.recover_on = recover_on;
  cfg.compute_on = compute_on;
  if (a.compute_after_loads &&
      !PrefetchRegistry::instance().entry(policy_specs.prefetch, "prefetch").traits.no_op)
    throw UsageError(
        "--compute-after-loads waits for a layer's own loads; it does not combine with --prefetch");
  cfg.compute_after_loads = a.compute_after_loads;
  if (a.ratio) cfg.param_sources["e_ratio"] = "--ratio";
  if (!a.store.empty() && traits.uses_store_layout) {
    if (cfg.system.sets("e_ratio")) throw UsageError("--ratio and --store both give rho: pass one");
    const StoreLayout st = read_store_layout(a.store);
    cfg.system = serving::with_system_param(cfg.system, "e_ratio", strprintf("%.17g", st.rho), "--store");
    cfg.param_sources["e_ratio"] = "--store " + a.store;
    if (!cfg.system.sets("shards") && st.shards)
      cfg.system = serving::with_system_param(cfg.system, "shards", std::to_string(st.shards), "--store");
  }
  cfg.seed = a.seed;
  load_warm_trace(a, p);
  prepare_memory(a, p, budget, model, budgets[0]);
  p.sim = sim_options(a, hw, a.workers);
  cfg.record_timeline = !a.timeline.empty();
  p.stream = traces::build_lookup_stream(trace, a.batch);
  const traces::LookupStream& stream = p.stream;
  set_warm_start(a, p);
  // The size guard warns before the simulation, from the workload, so a user can cut the window first.
  bool& timeline_warned = p.timeline_warned;
  if (!a.timeline.empty()) {
    check_timeline_window(window, stream.steps());
    cfg.timeline_first_step = window.first;
    cfg.timeline_last_step = window.last;
    timeline_warned = warn_if_timeline_large(
        a.timeline, estimate_timeline_size(serving::workload_view(stream), costs.costs, window));
  }
  p.policy = policies[0];
  p.budget = budgets[0];
  if (!a.profile_trace.empty() || a.profile_tokens > 0) load_profile_trace(a, traits, p);
}

}  // namespace moesim::harness
