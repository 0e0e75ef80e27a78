#include "harness/plan_job.h"

#include <cmath>
#include <memory>
#include <numeric>
#include <optional>
#include <string>

#include "base/atomic_file.h"
#include "base/error.h"
#include "base/units.h"
#include "base/warnings.h"
#include "core/cost_model.h"
#include "core/hardware_profile.h"
#include "core/model_spec.h"
#include "core/planning.h"
#include "core/run_info.h"
#include "harness/arguments.h"
#include "harness/run_setup.h"
#include "harness/store_layout.h"
#include "policies/planning/zipmoe_planner.h"
#include "serving/system.h"
#include "traces/lookup_stream.h"
#include "traces/rank_inclusion.h"
#include "traces/trace_io.h"
#include "traces/trace_summary.h"

namespace moesim::harness {
namespace {

// The options parsed while checking the arguments.
struct PlanOptions {
  std::string planner;  // the planning policy of --system (PlanningRegistry)
  PoolsOption pools;
  traces::InclusionPhase phase;
  CacheCapacity budget;
};

// The hardware, the optional trace and the model it is planned for.
struct PlanSubject {
  HardwareProfile hw;
  std::optional<traces::Trace> trace;
  ModelSpec model;
};

// The expert sizes and the compressed layout the planner assumes, with where rho came from.
struct PlanLayout {
  uint32_t n_tensors = 0;
  uint64_t expert_bytes = 0;
  TensorLayout layout;
  std::string rho_source;
};

std::string plan_row(const char* label, const PoolPlan& p) {
  std::string t = strprintf("  %-10s %-28s", label, pool_ratios_str(p.ratio).c_str());
  for (int i = 0; i < kPools; ++i) t += strprintf(" %5u", p.experts[i]);
  return t + strprintf(" %12s\n", format_seconds(p.expected_makespan).c_str());
}

// Checks every option before anything is loaded, so a usage error never waits for a large trace.
PlanOptions check_plan_args(const PlanArgs& a) {
  if (a.trace.empty() && a.inclusion.empty())
    throw UsageError("a trace is required: --trace T (or T as the first argument), or --inclusion LIST");
  if (a.budget.empty()) throw UsageError("--budget is required (bytes for all layers, such as 8GiB)");
  // The system's planner plans; its parameters are plan's own options (--shards, --ratio, --io, --grid), so
  // a spec that sets any would be ignored: refused instead.
  const std::string planner = serving::system_traits(a.system).planner;
  if (planner.empty())
    throw UsageError("--system " + a.system.text() + " has no planner: `moesim plan` plans the pools of " +
                     serving::systems_with_planner());
  if (!a.system.values.empty())
    throw UsageError("--system " + a.system.text() +
                     ": give the system's name only; plan takes its parameters as options (--shards, "
                     "--ratio, --io, --grid, --pools)");
  require_at_least("--batch", a.batch, 1);
  require_at_least("--runners-up", a.runners_up, 0);
  if (a.threads > 4096)
    throw UsageError("--workers " + std::to_string(a.threads) + " is too large (at most 4096)");
  if (a.shards) check_shards(*a.shards, "--shards");
  if (a.ratio) check_exponent_ratio(*a.ratio, "--ratio");
  if (a.ratio && !a.store.empty()) throw UsageError("--ratio and --store both give rho: pass one");
  if (!(a.grid > 0 && a.grid <= 1) || std::fabs(std::round(1 / a.grid) * a.grid - 1) > 1e-9 ||
      std::round(1 / a.grid) > 1000)
    throw UsageError("--grid must be 1/n for an integer n in [1, 1000], e.g. 0.05 (got " +
                     format_number(a.grid) + ")");
  PlanOptions o{planner, parse_pools_option(a.pools, "--pools"), traces::parse_inclusion_phase(a.phase),
                parse_budget_option("--budget", a.budget)};
  check_output_writable(a.out);
  return o;
}

// Loads the hardware profile, the trace (when given) and the model: --model, or the preset the trace's model
// name starts with.
PlanSubject load_plan_subject(const PlanArgs& a) {
  PlanSubject s{load_hardware(a.hw), std::nullopt, ModelSpec{}};
  if (!a.trace.empty()) s.trace = traces::load_trace(a.trace, a.load);
  std::string model_name = a.load.model;
  if (model_name.empty()) {
    if (!s.trace) throw UsageError("--model is required with --inclusion and no trace");
    model_name = s.trace->info().model;
  }
  if (!a.load.model.empty()) {
    s.model = load_model(model_name);
  } else if (auto preset = preset_for_model_name(model_name)) {
    s.model = *preset;  // the preset the trace's model name starts with; BF16 sizes
  } else {
    throw UsageError("--model is required: no model preset matches the trace's model '" + model_name +
                     "' (see `moesim presets`)");
  }
  if (s.trace) {
    const traces::TraceInfo& info = s.trace->info();
    const ModelSpec& model = s.model;
    if (info.experts != model.routed_experts || info.layers > model.moe_layers)
      throw Error(a.trace + ": the trace has " + std::to_string(info.layers) + " layers x " +
                  std::to_string(info.experts) + " experts, the model " + model.name + " " +
                  std::to_string(model.moe_layers) + " MoE layers x " + std::to_string(model.routed_experts) +
                  " experts");
    warn_trace_plausibility(a.trace, *s.trace, a.batch);
  }
  return s;
}

// The rank profile f_r and k: from --inclusion, or measured on the trace.
traces::RankInclusion rank_profile(const PlanArgs& a, const PlanSubject& s, traces::InclusionPhase phase) {
  traces::RankInclusion inc;
  if (!a.inclusion.empty()) {
    const std::vector<double> values = traces::parse_inclusion_list(a.inclusion);
    const double sum = std::accumulate(values.begin(), values.end(), 0.0);
    const uint32_t k = static_cast<uint32_t>(std::max(1.0, std::round(sum)));
    if (std::fabs(sum - k) > 0.01)
      warn("--inclusion: the probabilities sum to " + std::to_string(sum) +
           "; rescaled to k = " + std::to_string(k) + " (inclusion probabilities of k-subsets sum to k)");
    inc = traces::rank_inclusion_from_values(values, k, s.model.routed_experts,
                                             a.inclusion.front() == '[' ? "--inclusion" : a.inclusion);
    if (s.trace) warn("--inclusion given: the trace's own inclusion probabilities are not used");
  } else {
    inc = traces::rank_inclusion(traces::build_lookup_stream(*s.trace, a.batch), phase);
  }
  return inc;
}

// Sizes and layout: rho from --ratio, the store's measured value or the Gaussian BF16 default.
PlanLayout tensor_layout(const PlanArgs& a, const ModelSpec& model) {
  PlanLayout p;
  p.n_tensors = static_cast<uint32_t>(model.expert_tensors.size());
  if (p.n_tensors == 0) throw Error(model.origin + ": the model lists no expert tensors");
  p.expert_bytes = model.bytes_per_expert();
  TensorLayout& layout = p.layout;
  layout.compressed = true;
  layout.sm_fraction = 0.5;  // BF16: 8 sign-mantissa bits of 16
  std::optional<StoreLayout> store;
  if (!a.store.empty()) store = read_store_layout(a.store);
  if (a.ratio) {
    layout.e_ratio = *a.ratio;
    p.rho_source = "--ratio";
  } else if (store) {
    layout.e_ratio = store->rho;
    p.rho_source = "--store " + a.store;
  } else {
    layout.e_ratio = kGaussianBf16ExponentRatio;
    p.rho_source = std::string("default: ") + kGaussianBf16ExponentRatioSource;
  }
  if (layout.e_ratio > 1)
    warn("rho = " + std::to_string(layout.e_ratio) + " > 1: compression makes exponents larger");
  layout.shards = a.shards ? *a.shards : (store && store->shards ? store->shards : 4);
  if (model.dtype != DType::BF16)
    warn("model " + model.name + " is " + dtype_name(model.dtype) +
         ": ZipMoE's split assumes BF16 (8 exponent bits, 8 sign-mantissa bits)");
  return p;
}

// The budget in bytes for all layers; refuses one below a byte per layer or above the device's memory
// (unless --force).
uint64_t plan_budget(const PlanArgs& a, const CacheCapacity& budget_cap, const PlanSubject& s,
                     uint64_t expert_bytes) {
  const ModelSpec& model = s.model;
  const HardwareProfile& hw = s.hw;
  CacheCapacity resolved = budget_cap;
  if (budget_cap.relative()) {
    traces::TraceInfo shape;  // the model's shape: plan may run without a trace
    shape.layers = model.moe_layers;
    shape.experts = model.routed_experts;
    shape.top_k = model.top_k;
    resolved = resolve_budget_option("--budget", budget_cap, shape,
                                     expert_bytes * model.routed_experts * model.moe_layers);
  }
  uint64_t budget = resolved.value;
  if (resolved.unit == CacheCapacity::Unit::kExperts)
    budget = resolved.value * expert_bytes * model.moe_layers;
  if (budget / model.moe_layers == 0)
    throw UsageError("--budget " + format_bytes(budget) + " is less than one byte per layer (" +
                     std::to_string(model.moe_layers) + " MoE layers): give at least " +
                     std::to_string(model.moe_layers) + " bytes");
  const uint64_t all_bytes = expert_bytes * model.routed_experts * model.moe_layers;
  if (hw.memory_capacity > 0 && budget > hw.memory_capacity) {
    const std::string msg = "--budget " + format_bytes(budget) + " is more than the memory of " +
                            hw.display_name + " (" + format_bytes(hw.memory_capacity) + ")";
    if (!a.force) throw UsageError(msg + "; pass --force to plan it anyway");
    warn(msg + " (--force)");
  }
  // The whole device's memory, as run checks it (harness/run_setup.h): the preset's weights, the trace's
  // context.
  MemoryRequest r;
  r.gpu_budget = budget;
  r.context_tokens = s.trace ? trace_context_tokens(*s.trace) : 0;
  r.batch = a.batch;
  check_memory_fits(hw, model_memory(model), r, "--budget " + a.budget, a.allow_overcommit || a.force);
  if (budget >= all_bytes)
    warn("--budget " + format_bytes(budget) + " holds every expert uncompressed (" + format_bytes(all_bytes) +
         "): the F pool alone is best");
  return budget;
}

// The planner's input. Its delays come from the cost model's estimates (core/cost_model.h), L from --workers
// or the profile's cores, as the simulator's CPU pool has them.
PlanningInput planning_input(const PlanArgs& a, const PlanSubject& s, const PlanLayout& p,
                             const traces::RankInclusion& inc, const PoolSet& pools, uint64_t budget) {
  const CostModel estimator(s.hw);
  const uint32_t L = a.threads ? a.threads : s.hw.cpu_cores;

  PlanningInput in;
  in.budget_bytes = budget;
  in.layers = s.model.moe_layers;
  in.experts = s.model.routed_experts;
  in.k = inc.k;
  in.expert_bytes = p.expert_bytes;
  in.layout = p.layout;
  in.f = inc.f;
  in.delays =
      zipmoe_plan_delays(estimator, p.expert_bytes / p.n_tensors, p.layout, L, p.n_tensors, a.io == "fused");
  in.pools = pools;
  in.grid = a.grid;
  in.runners_up = a.runners_up;
  if (pool_expert_bytes(p.expert_bytes, p.layout)[static_cast<int>(Pool::kE)] > budget / in.layers)
    warn("--budget " + format_bytes(budget) + " gives each layer " + format_bytes(budget / in.layers) +
         ", less than one expert in any pool: everything misses");
  return in;
}

// The planner's search (ZipMoE, Alg. 4), or for --pools with ratios, those ratios evaluated alone.
PlanResult run_planner(const PlanningInput& in, const std::string& planner, const PoolsOption& pools_opt) {
  PlanResult r;
  if (pools_opt.ratios) {  // given ratios: no search, the same plan structure
    r.best = zipmoe_evaluate(in, *pools_opt.ratios);
    r.q = zipmoe_selection_probabilities(in.f, in.k);
  } else {
    r = PlanningRegistry::instance().create(planner, "planning")->plan(in);
  }
  return r;
}

Json plan_config_json(const PlanArgs& a, const PlanOptions& o, const PlanSubject& s, const PlanLayout& p,
                      const traces::RankInclusion& inc, const PlanningInput& in) {
  const TensorLayout& layout = p.layout;
  Json config;
  config["trace"] = a.trace.empty() ? Json(nullptr) : Json(a.trace);
  config["model"] = s.model.name;
  config["hardware"] = s.hw.name;
  config["budget_bytes"] = in.budget_bytes;
  config["budget_bytes_per_layer"] = in.budget_bytes / in.layers;
  config["pools"] = o.pools.set.str();
  config["given_ratios"] = o.pools.ratios ? Json(pool_ratios_str(*o.pools.ratios)) : Json(nullptr);
  config["grid"] = a.grid;
  config["batch"] = a.batch;
  config["layers"] = in.layers;
  config["experts"] = in.experts;
  config["k"] = in.k;
  config["expert_bytes"] = p.expert_bytes;
  config["tensors_per_expert"] = p.n_tensors;
  config["rho"] = layout.e_ratio;
  config["rho_source"] = p.rho_source;
  config["shards"] = layout.shards;
  config["sm_fraction"] = layout.sm_fraction;
  config["delays"] = {{"u_s", in.delays.u}, {"v_s", in.delays.v}, {"c_s", in.delays.c},
                      {"L", in.delays.L},   {"K", in.delays.K},   {"n", in.delays.n}};
  if (in.delays.fused) {
    config["delays"]["u_dev_s"] = in.delays.u_dev;
    config["delays"]["v_dev_s"] = in.delays.v_dev;
  }
  config["io"] = a.io;
  config["inclusion"] = {
      {"source", inc.source},
      {"phase", a.inclusion.empty() ? Json(traces::inclusion_phase_name(o.phase)) : Json(nullptr)},
      {"invocations", inc.invocations},
      {"mean_unique_experts", inc.mean_unique},
      {"f", inc.f}};
  config["force"] = a.force;
  return config;
}

std::string plan_json_report(const Json& config, const Json& trace_json, const PlanResult& r) {
  Json out;
  out["header"] = run_header("plan", config);
  out["warnings"] = warnings_json();
  out["trace"] = trace_json;
  Json runners = Json::array();
  for (const PoolPlan& p : r.runners_up) runners.push_back(pool_plan_json(p));
  out["plan"] = pool_plan_json(r.best);
  out["runners_up"] = runners;
  out["grid_points"] = r.grid_points;
  out["q"] = r.q;
  return out.dump(2) + "\n";
}

std::string plan_text_report(const PlanArgs& a, const PlanOptions& o, const PlanSubject& s,
                             const PlanLayout& p, const traces::RankInclusion& inc, const PlanningInput& in,
                             const PlanResult& r) {
  const PoolsOption& pools_opt = o.pools;
  const PoolSet& pools = pools_opt.set;
  const TensorLayout& layout = p.layout;
  const uint64_t budget = in.budget_bytes;
  std::string text;
  text += strprintf("moesim plan: ZipMoE cache pools (§3.4, Alg. 2-4) for %s on %s\n",
                    s.model.display_name.c_str(), s.hw.display_name.c_str());
  const std::string search = pools_opt.ratios ? std::string("ratios given, no search")
                                              : strprintf("grid %g (%llu points)", a.grid,
                                                          static_cast<unsigned long long>(r.grid_points));
  text +=
      strprintf("budget:    %s (%s per layer, %u MoE layers), pools %s, %s\n", format_bytes(budget).c_str(),
                format_bytes(budget / in.layers).c_str(), in.layers, pools.str().c_str(), search.c_str());
  text += strprintf("workload:  f_r from %s; k = %u of %u experts (mean %.2f unique per invocation)\n",
                    inc.source.c_str(), in.k, in.experts, inc.mean_unique);
  text += strprintf("layout:    %u tensors/expert of %s, K = %u shards, SM fraction %.2f, rho %.4f (%s)\n",
                    p.n_tensors, format_bytes(p.expert_bytes / p.n_tensors).c_str(), layout.shards,
                    layout.sm_fraction, layout.e_ratio, p.rho_source.c_str());
  text += strprintf(
      "delays:    u %s (SM-chunk read), v %s (E-chunk read), c %s (decompress), L = %u; E-chunks "
      "read %s\n",
      format_seconds(in.delays.u).c_str(), format_seconds(in.delays.v).c_str(),
      format_seconds(in.delays.c).c_str(), in.delays.L,
      in.delays.fused ? "by the workers (io=fused)" : "by the I/O thread (io=thread)");
  const PoolPlan& b = r.best;
  text += strprintf("\n  %-5s %7s %10s %14s %14s %12s\n", "pool", "ratio", "experts", "bytes/layer",
                    "bytes/expert", "E[hits]");
  for (int i = 0; i < kPools; ++i) {
    if (!pools.active[i]) continue;
    text += strprintf("  %-5s %7.3f %10u %14s %14s %12.3f\n", pool_name(static_cast<Pool>(i)), b.ratio[i],
                      b.experts[i], format_bytes(b.budget_bytes[i]).c_str(),
                      format_bytes(b.expert_bytes[i]).c_str(), b.expected_hits[i]);
  }
  text += strprintf("  %-5s %7s %10u %14s %14s %12.3f\n", "M", "-",
                    in.experts - (b.ranks[0] + b.ranks[1] + b.ranks[2] + b.ranks[3]), "-", "-",
                    b.expected_misses);
  text += strprintf("\n%s %s\n",
                    pools_opt.ratios ? "given:    " : "chosen:   ", pool_ratios_str(b.ratio).c_str());
  text +=
      strprintf("expected makespan per layer: %s (Alg. 3: I/O and decompression only, no expert compute)\n",
                format_seconds(b.expected_makespan).c_str());
  text += strprintf("\n  %-10s %-28s %5s %5s %5s %5s %12s\n", "", "ratios", "S_F", "S_C", "S_S", "S_E",
                    "E[makespan]");
  text += plan_row(pools_opt.ratios ? "given" : "best", b);
  for (size_t i = 0; i < r.runners_up.size(); ++i)
    text += plan_row(("#" + std::to_string(i + 2)).c_str(), r.runners_up[i]);
  return text;
}

}  // namespace

std::string plan_output(PlanArgs& a) {
  const PlanOptions o = check_plan_args(a);
  const PlanSubject s = load_plan_subject(a);
  const traces::RankInclusion inc = rank_profile(a, s, o.phase);
  Json trace_json = nullptr;
  if (s.trace)
    trace_json = traces::trace_summary_json(*s.trace, a.trace, traces::build_lookup_stream(*s.trace, 1));
  const PlanLayout p = tensor_layout(a, s.model);
  const uint64_t budget = plan_budget(a, o.budget, s, p.expert_bytes);
  const PlanningInput in = planning_input(a, s, p, inc, o.pools.set, budget);
  const PlanResult r = run_planner(in, o.planner, o.pools);
  const Json config = plan_config_json(a, o, s, p, inc, in);
  return a.json ? plan_json_report(config, trace_json, r) : plan_text_report(a, o, s, p, inc, in, r);
}

}  // namespace moesim::harness
