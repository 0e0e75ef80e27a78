// `moesim plan`: ZipMoE's hierarchical cache planning (§3.4, Appendix C Alg. 2-4; core/planning.h).
//   moesim plan --trace T --model M --hw H --budget B [--pools F,C,S,E] [--grid 0.05] [--batch B]
//               [--workers L] [--shards K] [--ratio rho | --store S] [--phase decode] [--inclusion LIST]
//               [--runners-up N] [--json] [-o FILE]
// Measures the rank-based inclusion probabilities f_r from the trace (or takes them from --inclusion), asks
// a SimPlatform of the hardware profile for the delays u, v, c of Alg. 3, and grid-searches the pool ratios.
// Prints the chosen ratios, the pool sizes (experts per layer and bytes), the expected makespan per layer
// and the runners-up. docs/planning.md explains the model.
#include <cmath>
#include <memory>
#include <numeric>
#include <optional>
#include <string>

#include "cli/cli_util.h"
#include "cli/command.h"
#include "cli/trace_options.h"
#include "core/atomic_file.h"
#include "core/error.h"
#include "core/hardware_profile.h"
#include "core/model_spec.h"
#include "core/planning.h"
#include "core/run_info.h"
#include "core/units.h"
#include "core/warnings.h"
#include "cli/store_layout.h"
#include "serving/system.h"
#include "sim/sim_platform.h"
#include "traces/lookup_stream.h"
#include "traces/rank_inclusion.h"
#include "traces/trace_io.h"
#include "traces/trace_summary.h"

namespace moesim::cli {
namespace {

struct PlanArgs {
  traces::LoadOptions load;  // --format, --fields, --model
  std::string trace, hw = "jetson-agx-orin-64gb", budget, pools = "F,C,S,E", store, inclusion,
                     phase = "decode", out = "-";
  double grid = 0.05;
  std::optional<double> ratio;
  std::optional<uint32_t> shards;
  uint32_t batch = 1, threads = 0, runners_up = 5;
  bool json = false, force = false;
};

std::string plan_row(const char* label, const PoolPlan& p) {
  std::string t = strprintf("  %-10s %-28s", label, pool_ratios_str(p.ratio).c_str());
  for (int i = 0; i < kPools; ++i) t += strprintf(" %5u", p.experts[i]);
  return t + strprintf(" %12s\n", format_seconds(p.expected_makespan).c_str());
}

void execute(PlanArgs& a) {
  if (a.trace.empty() && a.inclusion.empty())
    throw UsageError("a trace is required: --trace T (or T as the first argument), or --inclusion LIST");
  if (a.budget.empty()) throw UsageError("--budget is required (bytes for all layers, such as 8GiB)");
  require_at_least("--batch", a.batch, 1);
  require_at_least("--runners-up", a.runners_up, 0);
  if (a.threads > 4096)
    throw UsageError("--workers " + std::to_string(a.threads) + " is too large (at most 4096)");
  if (a.shards && (*a.shards < 1 || *a.shards > 65536))
    throw UsageError("--shards must be in [1, 65536] (got " + std::to_string(*a.shards) + ")");
  if (a.ratio && !(*a.ratio > 0 && *a.ratio <= 4))
    throw UsageError("--ratio rho must be in (0, 4] (got " + std::to_string(*a.ratio) + ")");
  if (a.ratio && !a.store.empty()) throw UsageError("--ratio and --store both give rho: pass one");
  if (!(a.grid > 0 && a.grid <= 1) || std::fabs(std::round(1 / a.grid) * a.grid - 1) > 1e-9 ||
      std::round(1 / a.grid) > 1000)
    throw UsageError("--grid must be 1/n for an integer n in [1, 1000], e.g. 0.05 (got " +
                     std::to_string(a.grid) + ")");
  const PoolsOption pools_opt = parse_pools_option(a.pools, "--pools");
  const PoolSet& pools = pools_opt.set;
  const traces::InclusionPhase phase = traces::parse_inclusion_phase(a.phase);
  const CacheCapacity budget_cap = parse_budget_option("--budget", a.budget);
  check_output_writable(a.out);

  const HardwareProfile hw = load_hardware(a.hw);
  std::optional<traces::Trace> trace;
  if (!a.trace.empty()) trace = traces::load_trace(a.trace, a.load);
  std::string model_name = a.load.model;
  if (model_name.empty()) {
    if (!trace) throw UsageError("--model is required with --inclusion and no trace");
    model_name = trace->info().model;
  }
  ModelSpec model;
  if (!a.load.model.empty()) {
    model = load_model(model_name);
  } else if (auto preset = preset_for_model_name(model_name)) {
    model = *preset;  // the preset the trace's model name starts with; BF16 sizes
  } else {
    throw UsageError("--model is required: no model preset matches the trace's model '" + model_name +
                     "' (see `moesim presets`)");
  }
  if (trace) {
    const traces::TraceInfo& info = trace->info();
    if (info.experts != model.routed_experts || info.layers > model.moe_layers)
      throw Error(a.trace + ": the trace has " + std::to_string(info.layers) + " layers x " +
                  std::to_string(info.experts) + " experts, the model " + model.name + " " +
                  std::to_string(model.moe_layers) + " MoE layers x " + std::to_string(model.routed_experts) +
                  " experts");
    warn_trace_plausibility(a.trace, *trace, a.batch);
  }

  // The rank profile f_r and k.
  traces::RankInclusion inc;
  if (!a.inclusion.empty()) {
    const std::vector<double> values = traces::parse_inclusion_list(a.inclusion);
    const double sum = std::accumulate(values.begin(), values.end(), 0.0);
    const uint32_t k = static_cast<uint32_t>(std::max(1.0, std::round(sum)));
    if (std::fabs(sum - k) > 0.01)
      warn("--inclusion: the probabilities sum to " + std::to_string(sum) +
           "; rescaled to k = " + std::to_string(k) + " (inclusion probabilities of k-subsets sum to k)");
    inc = traces::rank_inclusion_from_values(values, k, model.routed_experts,
                                             a.inclusion.front() == '[' ? "--inclusion" : a.inclusion);
    if (trace) warn("--inclusion given: the trace's own inclusion probabilities are not used");
  } else {
    inc = traces::rank_inclusion(traces::build_lookup_stream(*trace, a.batch), phase);
  }
  Json trace_json = nullptr;
  if (trace) trace_json = traces::trace_summary_json(*trace, a.trace, traces::build_lookup_stream(*trace, 1));

  // Sizes and layout.
  const uint32_t n_tensors = static_cast<uint32_t>(model.expert_tensors.size());
  if (n_tensors == 0) throw Error(model.origin + ": the model lists no expert tensors");
  const uint64_t expert_bytes = model.bytes_per_expert();
  TensorLayout layout;
  layout.compressed = true;
  layout.sm_fraction = 0.5;  // BF16: 8 sign-mantissa bits of 16
  std::string rho_source;
  std::optional<StoreLayout> store;
  if (!a.store.empty()) store = read_store_layout(a.store);
  if (a.ratio) {
    layout.e_ratio = *a.ratio;
    rho_source = "--ratio";
  } else if (store) {
    layout.e_ratio = store->rho;
    rho_source = "--store " + a.store;
  } else {
    layout.e_ratio = kGaussianBf16ExponentRatio;
    rho_source = std::string("default: ") + kGaussianBf16ExponentRatioSource;
  }
  if (layout.e_ratio > 1)
    warn("rho = " + std::to_string(layout.e_ratio) + " > 1: compression makes exponents larger");
  layout.shards = a.shards ? *a.shards : (store && store->shards ? store->shards : 4);
  if (model.dtype != DType::BF16)
    warn("model " + model.name + " is " + dtype_name(model.dtype) +
         ": ZipMoE's split assumes BF16 (8 exponent bits, 8 sign-mantissa bits)");

  uint64_t budget = budget_cap.value;
  if (budget_cap.unit == CacheCapacity::Unit::kExperts)
    budget = budget_cap.value * expert_bytes * model.moe_layers;
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
  if (budget >= all_bytes)
    warn("--budget " + format_bytes(budget) + " holds every expert uncompressed (" + format_bytes(all_bytes) +
         "): the F pool alone is best");

  sim::SimOptions so;
  so.cpu_workers = a.threads;
  const sim::SimPlatform platform(hw, so);
  const uint32_t L = platform.units(ResourceClass::kCpu);

  PlanningInput in;
  in.budget_bytes = budget;
  in.layers = model.moe_layers;
  in.experts = model.routed_experts;
  in.k = inc.k;
  in.expert_bytes = expert_bytes;
  in.layout = layout;
  in.f = inc.f;
  in.delays = zipmoe_plan_delays(platform, expert_bytes / n_tensors, layout, L, n_tensors);
  in.pools = pools;
  in.grid = a.grid;
  in.runners_up = a.runners_up;
  if (pool_expert_bytes(expert_bytes, layout)[static_cast<int>(Pool::kE)] > budget / in.layers)
    warn("--budget " + format_bytes(budget) + " gives each layer " + format_bytes(budget / in.layers) +
         ", less than one expert in any pool: everything misses");
  PlanResult r;
  if (pools_opt.ratios) {  // given ratios: no search, the same plan structure
    r.best = zipmoe_evaluate(in, *pools_opt.ratios);
    r.q = zipmoe_selection_probabilities(in.f, in.k);
  } else {
    r = PlanningRegistry::instance().create(serving::make_system("zipmoe")->traits().planner, "planning")->plan(in);
  }

  Json config;
  config["trace"] = a.trace.empty() ? Json(nullptr) : Json(a.trace);
  config["model"] = model.name;
  config["hardware"] = hw.name;
  config["budget_bytes"] = budget;
  config["budget_bytes_per_layer"] = budget / in.layers;
  config["pools"] = pools.str();
  config["given_ratios"] = pools_opt.ratios ? Json(pool_ratios_str(*pools_opt.ratios)) : Json(nullptr);
  config["grid"] = a.grid;
  config["batch"] = a.batch;
  config["layers"] = in.layers;
  config["experts"] = in.experts;
  config["k"] = in.k;
  config["expert_bytes"] = expert_bytes;
  config["tensors_per_expert"] = n_tensors;
  config["rho"] = layout.e_ratio;
  config["rho_source"] = rho_source;
  config["shards"] = layout.shards;
  config["sm_fraction"] = layout.sm_fraction;
  config["delays"] = {{"u_s", in.delays.u}, {"v_s", in.delays.v}, {"c_s", in.delays.c},
                      {"L", in.delays.L},   {"K", in.delays.K},   {"n", in.delays.n}};
  config["inclusion"] = {
      {"source", inc.source},
      {"phase", a.inclusion.empty() ? Json(traces::inclusion_phase_name(phase)) : Json(nullptr)},
      {"invocations", inc.invocations},
      {"mean_unique_experts", inc.mean_unique},
      {"f", inc.f}};
  config["force"] = a.force;

  std::string text;
  if (a.json) {
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
    text = out.dump(2) + "\n";
  } else {
    text += strprintf("moesim plan: ZipMoE cache pools (§3.4, Alg. 2-4) for %s on %s\n",
                      model.display_name.c_str(), hw.display_name.c_str());
    const std::string search = pools_opt.ratios ? std::string("ratios given, no search")
                                                : strprintf("grid %g (%llu points)", a.grid,
                                                            static_cast<unsigned long long>(r.grid_points));
    text +=
        strprintf("budget:    %s (%s per layer, %u MoE layers), pools %s, %s\n", format_bytes(budget).c_str(),
                  format_bytes(budget / in.layers).c_str(), in.layers, pools.str().c_str(), search.c_str());
    text += strprintf("workload:  f_r from %s; k = %u of %u experts (mean %.2f unique per invocation)\n",
                      inc.source.c_str(), in.k, in.experts, inc.mean_unique);
    text += strprintf("layout:    %u tensors/expert of %s, K = %u shards, SM fraction %.2f, rho %.4f (%s)\n",
                      n_tensors, format_bytes(expert_bytes / n_tensors).c_str(), layout.shards,
                      layout.sm_fraction, layout.e_ratio, rho_source.c_str());
    text += strprintf("delays:    u %s (SM-chunk read), v %s (E-chunk read), c %s (decompress), L = %u\n",
                      format_seconds(in.delays.u).c_str(), format_seconds(in.delays.v).c_str(),
                      format_seconds(in.delays.c).c_str(), in.delays.L);
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
  }
  write_file_atomic(a.out, text);
}

void setup(CLI::App& app) {
  auto a = std::make_shared<PlanArgs>();
  add_trace_input(app, a->trace);
  app.add_option("--model", a->load.model,
                 "model preset or JSON (expert sizes, tensors, layers); default: the trace's model name");
  app.add_option("--hw", a->hw, "hardware profile (see `moesim presets`): the delays u, v, c")
      ->capture_default_str();
  app.add_option("--budget", a->budget,
                 "memory for all layers' pools, in bytes (8GiB), or experts per layer (32)");
  app.add_option("--pools", a->pools,
                 "the active pools Lambda to plan over (a subset of F,C,S,E), or fixed ratios such as "
                 "F=0.2,C=0.5,S=0.3 "
                 "(no search)")
      ->capture_default_str();
  app.add_option("--grid", a->grid, "grid step delta of the ratios (1/n)")->capture_default_str();
  app.add_option("--batch", a->batch,
                 "sequences decoding together (>= 1): the invocations f_r is counted over")
      ->capture_default_str();
  app.add_option("--phase", a->phase, "invocations f_r is counted over: decode, prefill or all")
      ->capture_default_str();
  app.add_option(
      "--inclusion", a->inclusion,
      "rank-based inclusion probabilities instead of the trace's: a JSON list inline ('[0.9,0.7,...]') "
      "or a file; k = their sum, rounded");
  app.add_option("--workers", a->threads,
                 "CPU decompression workers L, as in `moesim run` (0 = the profile's CPU cores)")
      ->capture_default_str();
  // Elsewhere --threads means the host threads moesim itself uses; here it is only an alias of --workers.
  app.add_option("--threads", a->threads)->group("");
  app.add_option("--shards", a->shards, "K: exponent shards per tensor (default: the store's, else 4)");
  app.add_option(
      "--ratio", a->ratio,
      "rho: compressed / raw exponent bytes (default: the store's, else the Gaussian BF16 measurement)");
  app.add_option("--store", a->store, "a packed expert store (moesim pack) to read rho and K from");
  app.add_option("--runners-up", a->runners_up, "other grid points to list")->capture_default_str();
  app.add_flag("--force", a->force, "plan a budget above the hardware's memory (a warning, not an error)");
  add_trace_format_options(app, a->load);
  app.add_flag("--json", a->json, "print JSON (header, warnings, plan, runners_up) instead of a summary");
  app.add_option("-o,--output", a->out, "output file ('-' = standard output)")->capture_default_str();
  app.callback([a] { execute(*a); });
}

}  // namespace
MOESIM_CLI_COMMAND("plan", "Plan ZipMoE's cache pools (F/C/S/E ratios) for a trace, model and budget", setup);
}  // namespace moesim::cli
