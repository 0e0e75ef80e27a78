// zipmoe: ZipMoE (§3). Experts stored split (SM-chunks + K compressed E-chunk shards, §3.1), four pools
// F/C/S/E per layer sized by the planner (Appendix C, Alg. 4) or by given ratios (`pools`), rank-based
// dispatch with tolerance delta (§3.4, serving/zipmoe_residency.h), the per-tensor DAGs of Fig. 6 and the
// cache-affinity scheduler (Alg. 1). The eviction spec is the in-pool eviction (freq = the paper's; others
// for the Fig. 10 ablation). `io` says who reads the E-chunks: the CPU workers, each read fused with its
// decompression (the prototype of §4, whose figures the paper reports; the default), or the I/O thread
// (§3.3).
#include <algorithm>
#include <cstdio>

#include "base/error.h"
#include "base/units.h"
#include "base/warnings.h"
#include "core/planning.h"
#include "policies/planning/zipmoe_planner.h"
#include "serving/system.h"
#include "serving/zipmoe_loads.h"
#include "serving/zipmoe_residency.h"
#include "traces/rank_inclusion.h"

namespace moesim::serving {
namespace {

std::string grid_text(double g) {
  char b[32];
  std::snprintf(b, sizeof b, "%g", g);
  return b;
}

// Raises `message` unless this command (or this sweep point) already has: compare, calibrate and validate
// run one configuration several times.
void warn_once(const std::string& message) {
  const std::vector<std::string> raised = warnings();
  if (std::find(raised.begin(), raised.end(), message) == raised.end()) warn(message);
}

// A plan with no expert in any pool runs, but every lookup misses: as doubtful as a budget `moesim plan`
// warns about, so every command that runs the system (run, exec, compare, sweep, calibrate, validate) says so
// here, where they all build it. ZipMoE's pools are per layer and the same for every layer.
void warn_if_nothing_resident(const PoolPlan& plan, const PlanningInput& in, const std::string& given) {
  uint64_t held = 0;
  for (int p = 0; p < kPools; ++p) held += plan.experts[p];
  if (held > 0) return;
  const auto per_expert = pool_expert_bytes(in.expert_bytes, in.layout);
  const uint64_t smallest = *std::min_element(per_expert.begin(), per_expert.end());
  warn_once("--system zipmoe: --budget " + format_bytes(in.budget_bytes) + " leaves each of the " +
            std::to_string(in.layers) + " layers 0 resident experts (" +
            format_bytes(in.budget_bytes / in.layers) + " per layer" +
            (given.empty() ? "" : " split by " + given) + "; the smallest pool entry takes " +
            format_bytes(smallest) + "): every lookup misses and is read from the SSD");
}

// Pool lists in a spec separate with '+' (a comma separates the spec's parameters).
std::string pool_list(std::string s) {
  std::replace(s.begin(), s.end(), '+', ',');
  return s;
}

// Its registry entry's traits: the paper's in-pool eviction and scheduler, its planner, per-layer pools.
const SystemTraits kTraits{.eviction = "freq",
                           .scheduling = "zipmoe",
                           .planner = "zipmoe",
                           .per_layer_scope = true,
                           .uses_store_layout = true,
                           .partial_states = true};

class ZipMoE final : public System {
 public:
  explicit ZipMoE(const Params& p)
      : delta_(static_cast<uint32_t>(std::min<uint64_t>(p.get_uint("delta"), UINT32_MAX))),
        shards_(static_cast<uint32_t>(p.get_uint("shards"))),
        grid_(p.get_double("grid")),
        e_ratio_(p.get_double("e_ratio")),
        pools_(pool_list(p.get("pools"))),
        pool_set_(pool_list(p.get("pool_set"))),
        io_(p.get("io")) {
    // io, shards and e_ratio are in their declared ranges (the registry refuses the rest, never clamps: a run
    // with another K or rho than the one asked for would be reported as that one); the pool list is a rule
    // of its own.
    parse_pools_option(pools_.empty() ? pool_set_ : pools_, "--pools");  // a bad list fails before any work
  }

  std::unique_ptr<Residency> build(const SystemBuildContext& ctx, const PolicySpec& eviction,
                                   PipelineOptions& po, RunResult& r) const override {
    const SystemConfig& cfg = ctx.cfg;
    const SourcedCosts& costs = ctx.costs;
    const traces::TraceInfo& info = ctx.info;
    if (cfg.budget.unit != CacheCapacity::Unit::kBytes)
      throw Error(
          "--system zipmoe needs a budget in bytes (its pools are sized in bytes, ZipMoE §3.4), not " +
          cfg.budget.to_string());
    const std::string source = costs.sizes.value("expert_bytes_source", std::string());
    if (source.rfind("trace", 0) == 0)
      throw Error(
          "--system zipmoe splits BF16 tensors into sign-mantissa and exponent bits, but the expert sizes "
          "come from the trace (" +
          source + "), a quantized file; pass --model to simulate BF16 weights");
    const std::string storage = costs.sizes.value("expert_storage", std::string("bf16"));
    if (storage != "bf16" && storage != "f16")
      throw Error(
          "--system zipmoe's lossless compression codes the exponents of bf16/f16 weights; the model's "
          "experts are stored as " +
          storage + " (" + source +
          "): pass a bf16 or f16 model (moesim model "
          "import --dtype bf16) or another --system");
    TensorLayout layout;
    layout.compressed = true;
    layout.shards = shards_;
    layout.sm_fraction = 0.5;  // sign + 7 mantissa bits of a BF16 element (§3.1)
    layout.e_ratio = e_ratio_ > 0 ? e_ratio_ : kGaussianBf16ExponentRatio;
    const bool fused = io_ == "fused";
    po.loads = zipmoe_loads(layout, fused);
    const std::vector<uint64_t>& eb = costs.costs.expert_bytes;
    if (std::adjacent_find(eb.begin(), eb.end(), std::not_equal_to<>()) != eb.end())
      throw Error(
          "--system zipmoe: the planner needs experts of one size in every layer (ZipMoE plans one layer)");
    const auto tensors = static_cast<uint32_t>(std::max<size_t>(costs.costs.tensor_share.size(), 1));
    const traces::LookupStream& profiled = cfg.profile_stream ? *cfg.profile_stream : ctx.stream;
    traces::RankInclusion f;
    try {
      f = traces::rank_inclusion(profiled, traces::InclusionPhase::kDecode);
    } catch (const Error&) {  // e.g. a prefill-only trace
      f = traces::rank_inclusion(profiled, traces::InclusionPhase::kAll);
    }
    PlanningInput in;
    in.budget_bytes = cfg.budget.value;
    in.layers = info.layers;
    in.experts = info.experts;
    in.k = f.k;
    in.expert_bytes = eb[0];
    in.layout = layout;
    in.f = f.f;
    in.delays = zipmoe_plan_delays(ctx.platform, costs.costs.tensor_bytes(0, 0), layout,
                                   ctx.platform.units(ResourceClass::kCpu), tensors, fused);
    in.grid = grid_;
    const PoolsOption pools = parse_pools_option(pools_.empty() ? pool_set_ : pools_, "--pools");
    in.pools = pools.set;
    PoolPlan plan;
    Json runners = Json::array();
    if (pools.ratios) {
      plan = zipmoe_evaluate(in, *pools.ratios);
    } else {
      const PlanResult pr = PlanningRegistry::instance().create(kTraits.planner, "planning")->plan(in);
      plan = pr.best;
      for (const auto& ru : pr.runners_up) runners.push_back(pool_plan_json(ru));
    }
    warn_if_nothing_resident(plan, in, pools_.empty() ? "" : "--pools " + pools_);
    r.plan = pool_plan_json(plan);
    r.plan["source"] = pools.ratios ? "--pools" : "planned (ZipMoE Alg. 4, grid " + grid_text(grid_) + ")";
    r.plan["pool_set"] = in.pools.str();
    r.plan["runners_up"] = runners;
    r.plan["k"] = f.k;
    r.plan["inclusion_source"] = f.source;
    r.plan["profile"] = {{"source", cfg.profile_stream ? cfg.profile_source : "the run's own trace"},
                         {"invocations", f.invocations}};
    r.plan["rho"] = layout.e_ratio;
    const auto given = cfg.param_sources.find("e_ratio");
    r.plan["rho_source"] = e_ratio_ <= 0                      ? std::string(kGaussianBf16ExponentRatioSource)
                           : given != cfg.param_sources.end() ? given->second
                                                              : std::string("given");
    r.plan["shards"] = layout.shards;
    r.plan["delays"] = Json{{"u_s", in.delays.u}, {"v_s", in.delays.v}, {"c_s", in.delays.c},
                            {"L", in.delays.L},   {"K", in.delays.K},   {"n", in.delays.n}};
    // The E-chunk reads the run makes and Alg. 3 planned with: the same variant.
    r.plan["io"] = io_;
    if (in.delays.fused) {
      r.plan["delays"]["u_dev_s"] = in.delays.u_dev;
      r.plan["delays"]["v_dev_s"] = in.delays.v_dev;
    }
    uint64_t experts_held = 0, bytes_held = 0;
    for (int p = 0; p < kPools; ++p) {
      experts_held += uint64_t{plan.experts[p]} * info.layers;
      bytes_held += uint64_t{plan.experts[p]} * plan.expert_bytes[p] * info.layers;
    }
    r.cache_capacity_experts = experts_held;
    r.cache_capacity_bytes = bytes_held;
    ZipMoePoolsConfig zc;
    zc.layers = info.layers;
    zc.experts = info.experts;
    for (int p = 0; p < kPools; ++p) {
      zc.capacity[p] = plan.experts[p];
      zc.expert_bytes[p] = plan.expert_bytes[p];
      // Full tensors live where the GPU computes; chunks in host memory (shared memory on UMA devices).
      zc.tier[p] =
          cfg.unified_memory ? MemoryTier::kUnified : (p == 0 ? MemoryTier::kDevice : MemoryTier::kHost);
    }
    zc.delta = delta_;
    zc.evict = eviction;
    return make_zipmoe_residency(zc);
  }

 private:
  uint32_t delta_, shards_;
  double grid_, e_ratio_;
  std::string pools_, pool_set_;
  std::string io_;  // "fused" or "thread"
};

}  // namespace

MOESIM_REGISTER(
    SystemRegistry, "zipmoe",
    "ZipMoE: compressed expert pools F/C/S/E per layer, planned (Alg. 4) or given, rank-based "
    "dispatch, the cache-affinity scheduler (Alg. 1); --policy is the in-pool eviction",
    {{"delta", "0", "dispatch tolerance in ranks (§3.4; flag --delta)", ParamType::kWhole},
     {"shards", "4", "K: E-chunk shards per tensor (flag --shards; default: a --store's K)",
      ParamType::kWhole, ParamRange::closed(1, kMaxShards)},
     {"grid", "0.05", "planner grid step (flag --grid)", ParamType::kReal, ParamRange::open_closed(0, 1)},
     {"pools", "",
      "the pools the planner may use (F+C+S), or fixed ratios such as F=0.2+C=0.5+S=0.3 "
      "(no planning); empty: pool_set (flag --pools)"},
     {"pool_set", "F+C+S+E", "the pools the planner may use (Lambda) when pools is empty"},
     {"e_ratio", "0",
      "rho, compressed / raw exponent bytes; 0: measured on Gaussian BF16 weights "
      "(flag --ratio; default: a --store's)",
      ParamType::kReal, ParamRange::closed(0, kMaxExponentRatio)},
     {"io",
      "fused",
      "E-chunk reads: fused (each read with its decompression on a CPU worker, "
      "buffered: the prototype of ZipMoE §4) or thread (every read on the one I/O "
      "thread, §3.3); the planner's Alg. 3 assumes the same",
      ParamType::kChoice,
      {},
      {"fused", "thread"}}},
    [](const Params& p) -> std::unique_ptr<System> { return std::make_unique<ZipMoE>(p); }, PolicyNeeds{},
    kTraits);

}  // namespace moesim::serving
