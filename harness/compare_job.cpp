#include "harness/compare_job.h"

#include <algorithm>
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "base/atomic_file.h"
#include "base/error.h"
#include "base/parallel.h"
#include "base/progress.h"
#include "base/units.h"
#include "base/warnings.h"
#include "core/cache_config.h"
#include "core/prefetch.h"
#include "core/routing.h"
#include "core/run_info.h"
#include "harness/arguments.h"
#include "harness/compare_systems.h"
#include "harness/plot_script.h"
#include "harness/routing_table.h"
#include "harness/run_setup.h"
#include "harness/sim_runner.h"
#include "serving/metrics.h"
#include "traces/lookup_stream.h"
#include "traces/token_routing.h"
#include "traces/trace_io.h"

namespace moesim::harness {
namespace {

std::string seconds_or_dash(const Json& v) {
  return v.is_null() ? "-" : format_seconds(v.get<double>());
}

// Where a cell lies on each axis.
struct CellAxes {
  size_t budget, scope, policy, routing, prefetch;
};

// The comparison's axes. Cells run in (budget, scope, policy, routing, prefetch) order: a budget's rows at
// each scope side by side, so that no system is compared with another at a different cache scope unlabelled.
struct CompareGrid {
  std::vector<CacheScope> scopes;
  std::vector<std::string> policies, budgets, routings, prefetches;
  // The same specs parsed, once for the grid: every cell takes its own from here.
  std::vector<PolicySpec> policy_specs, routing_specs, prefetch_specs;
  std::vector<CacheCapacity> caps;
  size_t R = 0, P = 0, RP = 0;
  bool show_routing = false, show_prefetch = false;
  // [budget * scopes + scope]: why no cache of that budget exists at that scope (a per-layer share below
  // top_k experts), or empty. Such cells are left out, with a warning; a budget with no scope left fails.
  std::vector<std::string> infeasible;
  const std::string& why_not(const CellAxes& at) const {
    return infeasible[at.budget * scopes.size() + at.scope];
  }
  size_t cells() const { return budgets.size() * scopes.size() * policies.size() * RP; }
};

CellAxes cell_axes(const CompareGrid& g, size_t i) {
  const size_t per_scope = g.policies.size() * g.RP, per_budget = g.scopes.size() * per_scope;
  return CellAxes{i / per_budget, (i / per_scope) % g.scopes.size(), (i / g.RP) % g.policies.size(),
                  (i / g.P) % g.R, i % g.P};
}

// The trace and what its cells are simulated against.
struct CompareInputs {
  traces::Trace trace;
  HardwareProfile hw;
  serving::SourcedCosts costs;
};

// The outputs of the table: JSON rows, text lines and the CSV.
struct CompareTable {
  Json rows = Json::array();
  std::vector<std::string> lines;
  std::string csv =
      "budget,eviction,cache_capacity_experts,hit_rate,decode_hit_rate,tpot_mean_s,tpot_p50_s,tpot_p90_s,"
      "tpot_p99_s,"
      "ttft_mean_s,decode_tokens_per_s,ssd_bytes_read,routing,changed_fraction,mass_replaced_mean,"
      "lifetime_mean_tokens,lifetime_sd_tokens,prefetch,prefetch_accuracy,prefetch_coverage,"
      "prefetch_useless_bytes,scope\n";
};

// Checks the options and parses the budgets before the trace is loaded.
CompareGrid check_compare_args(const CompareArgs& a) {
  require_trace_input(a.trace);
  require_at_least("--batch", a.batch, 1);
  check_io_depth("--io-depth", a.io_depth);
  require_at_least("--jobs", a.threads, 1);
  CompareGrid g;
  g.scopes = parse_scope_list(a.scope);
  g.policies = resolve_policy_list(a.policies);
  if (g.policies.empty())
    for (const auto& e : EvictionRegistry::instance().entries()) g.policies.push_back(e.name);
  for (const auto& p : g.policies) g.policy_specs.push_back(PolicySpec::parse(p));
  g.budgets = split_budget_list(a.budgets);
  if (g.budgets.empty()) g.budgets = {"1GiB", "2GiB", "4GiB", "8GiB"};
  for (const auto& b : g.budgets) g.caps.push_back(parse_budget_option("--budget", b));
  check_output_writable(a.out);
  if (!a.csv.empty()) check_output_writable(a.csv);
  return g;
}

CompareInputs load_compare_inputs(const CompareArgs& a, CompareGrid& g) {
  traces::Trace trace = traces::load_trace(a.trace, a.load);
  HardwareProfile hw = load_hardware(a.hw);
  std::optional<ModelSpec> model;
  if (!a.load.model.empty()) model = load_model(a.load.model);
  serving::SourcedCosts costs = serving::model_costs(trace.info(), model);
  warn_trace_plausibility(a.trace, trace, a.batch);
  // Once per budget: the check's only scope-dependent warning is the global cache's, so checking at global
  // scope where the comparison has it raises every warning once (per scope, the others would come twice).
  const bool has_global = std::find(g.scopes.begin(), g.scopes.end(), CacheScope::kGlobal) != g.scopes.end();
  for (auto& c : g.caps)
    c = resolve_budget_option("--budget", c, trace.info(), costs.sizes["all_experts_bytes"].get<uint64_t>());
  for (const auto& c : g.caps)
    check_budget_plausibility("--budget", c, has_global ? CacheScope::kGlobal : g.scopes.front(),
                              trace.info(), costs.sizes["all_experts_bytes"].get<uint64_t>(), &hw, a.force);
  // The whole device's memory, per budget: the one check run and exec make (harness/run_setup.h).
  const ModelMemory mem = run_model_memory(model ? model : preset_for_model_name(trace.info().model), costs);
  MemoryRequest r;
  r.context_tokens = trace_context_tokens(trace);
  r.batch = a.batch;
  for (size_t i = 0; i < g.caps.size(); ++i) {
    r.gpu_budget = g.caps[i].unit == CacheCapacity::Unit::kBytes
                       ? g.caps[i].value
                       : g.caps[i].value * (mem.all_experts_bytes / std::max(trace.info().experts, 1u));
    check_memory_fits(hw, mem, r, "--budget " + g.budgets[i], a.allow_overcommit || a.force);
  }
  return CompareInputs{std::move(trace), std::move(hw), std::move(costs)};
}

// Fills g.infeasible: a budget that a global cache can hold may leave a per-layer cache less than top_k
// experts per layer (or the other way round with mixed expert sizes).
void check_scopes_hold_budgets(CompareGrid& g, const CompareInputs& in) {
  const auto& info = in.trace.info();
  g.infeasible.assign(g.budgets.size() * g.scopes.size(), "");
  for (size_t b = 0; b < g.budgets.size(); ++b) {
    std::string reasons;
    for (size_t s = 0; s < g.scopes.size(); ++s) {
      try {
        make_cache_config(info.layers, info.experts, info.top_k, g.scopes[s], g.caps[b],
                          in.costs.costs.expert_bytes);
        continue;
      } catch (const Error& e) {
        g.infeasible[b * g.scopes.size() + s] = e.what();
        reasons += std::string(reasons.empty() ? "" : "; ") + scope_name(g.scopes[s]) + " scope: " + e.what();
      }
    }
    size_t left = 0;
    for (size_t s = 0; s < g.scopes.size(); ++s) left += g.infeasible[b * g.scopes.size() + s].empty();
    if (left == 0) throw Error("--budget " + g.budgets[b] + ": " + reasons);
    if (!reasons.empty())
      warn("compare: --budget " + g.budgets[b] + " has no " + reasons + " (its rows are left out)");
  }
}

// The routing and prefetch policies; each is made once so that a bad one fails before any cell runs.
void resolve_routing_and_prefetch(const CompareArgs& a, const traces::Trace& trace, CompareGrid& g) {
  g.routings = split_routing_list(a.routing);
  if (g.routings.empty()) g.routings = {"identity"};
  for (const auto& r : g.routings)  // a policy the trace cannot serve (no logits) fails before any cell runs
    make_routing_policy(r, traces::routing_setup(trace.info(), trace));
  for (const auto& r : g.routings) g.routing_specs.push_back(PolicySpec::parse(r));
  g.R = g.routings.size();
  // ',' separates specs only before a registered prefetch policy's name: "transition:train=T,top=6" is one.
  g.prefetches = split_spec_list(a.prefetch, [](const std::string& w) {
    for (const auto& e : PrefetchRegistry::instance().entries())
      if (w.rfind(e.name, 0) == 0 && (w.size() == e.name.size() || w[e.name.size()] == ':')) return true;
    return false;
  });
  if (g.prefetches.empty()) g.prefetches = {"none"};
  for (const auto& pf : g.prefetches)  // a bad spec or training trace fails before any cell runs
    make_prefetch_policy(pf, PrefetchSetup{trace.info().layers, trace.info().experts, trace.info().top_k, 1});
  for (const auto& pf : g.prefetches) g.prefetch_specs.push_back(PolicySpec::parse(pf));
  g.P = g.prefetches.size();
  g.RP = g.R * g.P;
  g.show_routing = g.R > 1 || !RoutingRegistry::instance().entry(g.routings[0], "routing").traits.no_op;
  g.show_prefetch = g.P > 1 || !PrefetchRegistry::instance().entry(g.prefetches[0], "prefetch").traits.no_op;
}

// Runs every cell; each lands in its own slot, so --jobs does not change the output.
void run_cells(const CompareArgs& a, const CompareGrid& g, const CompareInputs& in,
               const traces::LookupStream& stream, std::vector<serving::RunResult>& results,
               std::vector<Json>& cell_metrics, HwReads& reads) {
  const size_t cells = results.size();
  // Counted in simulated steps, not cells: a few large cells would otherwise leave the bar still for
  // minutes.
  Progress bar("compare", cells * stream.steps(), "steps");
  parallel_for(cells, a.threads, [&](size_t i) {
    const CellAxes at = cell_axes(g, i);
    if (!g.why_not(at).empty()) {
      bar.add(stream.steps());
      return;
    }
    serving::SystemConfig cfg;
    cfg.eviction = g.policy_specs[at.policy];
    cfg.routing = g.routing_specs[at.routing];
    cfg.prefetch = g.prefetch_specs[at.prefetch];
    cfg.trace = &in.trace;
    cfg.scope = g.scopes[at.scope];
    cfg.budget = g.caps[at.budget];
    uint64_t reported = 0;  // this cell's steps already added (on_step gives a running count per cell)
    cfg.on_step = [&bar, &reported](uint64_t done, uint64_t) {
      bar.add(done - reported);
      reported = done;
    };
    sim::SimOptions sim;
    sim.io_depth = a.io_depth;
    results[i] = run_simulated(cfg, stream, in.trace.info(), in.costs, in.hw, sim, nullptr, &reads);
    cell_metrics[i] = metrics_json(results[i].result);
    results[i].result = {};  // the per-cell timing details are not needed any more
  });
  bar.finish();
}

std::string compare_line(const CompareGrid& g, const CacheCapacity& budget, CacheScope scope,
                         const serving::RunResult& r, const Json& m) {
  const Json& dev = m["routing_deviation"];
  const Json& life = m["cache_lifetime"];
  std::string line = strprintf(
      "%-10s %-6s %-24s %8s%% %8s%% %10s %10s %9s %10s", budget.to_string().c_str(), scope_name(scope),
      r.eviction.c_str(), num_or_dash(m["cache"]["hit_rate"], "%.2f", 100).c_str(),
      num_or_dash(m["cache"]["decode_hit_rate"], "%.2f", 100).c_str(),
      seconds_or_dash(m["tpot"]["mean_s"]).c_str(), seconds_or_dash(m["tpot"]["p90_s"]).c_str(),
      num_or_dash(m["decode_tokens_per_s"], "%.2f").c_str(),
      num_or_dash(life["mean_tokens"], "%.0f").c_str());
  if (g.show_routing)
    line +=
        strprintf(" %8.2f%% %9s  %s", 100 * dev["changed_fraction"].get<double>(),
                  num_or_dash(dev["mass_replaced_mean"], "%.3f").c_str(), routing_label(r.routing).c_str());
  const Json& pf = m["prefetch"];
  if (g.show_prefetch)
    line += strprintf(" %9s %9s  %s", num_or_dash(pf["accuracy"], "%.1f%%", 100).c_str(),
                      num_or_dash(pf["coverage"], "%.1f%%", 100).c_str(), r.prefetch.c_str());
  return line;
}

std::string compare_csv_row(const std::string& b, CacheScope scope, const serving::RunResult& r,
                            const Json& m) {
  return b + ",\"" + r.eviction + "\"," + std::to_string(r.cache_capacity_experts) + "," +
         csv_num(m["cache"]["hit_rate"]) + "," + csv_num(m["cache"]["decode_hit_rate"]) + "," +
         csv_num(m["tpot"]["mean_s"]) + "," + csv_num(m["tpot"]["p50_s"]) + "," +
         csv_num(m["tpot"]["p90_s"]) + "," + csv_num(m["tpot"]["p99_s"]) + "," +
         csv_num(m["ttft"]["mean_s"]) + "," + csv_num(m["decode_tokens_per_s"]) + "," +
         std::to_string(m["ssd_bytes_read"].get<uint64_t>()) + ",\"" + r.routing + "\"," +
         csv_num(m["routing_deviation"]["changed_fraction"]) + "," +
         csv_num(m["routing_deviation"]["mass_replaced_mean"]) + "," +
         csv_num(m["cache_lifetime"]["mean_tokens"]) + "," + csv_num(m["cache_lifetime"]["sd_tokens"]) +
         ",\"" + r.prefetch + "\"," + csv_num(m["prefetch"]["accuracy"]) + "," +
         csv_num(m["prefetch"]["coverage"]) + "," +
         std::to_string(m["prefetch"]["useless_bytes"].get<uint64_t>()) + "," + scope_name(scope) + "\n";
}

CompareTable compare_table(const CompareGrid& g, const std::vector<serving::RunResult>& results,
                           const std::vector<Json>& cell_metrics) {
  CompareTable t;
  for (size_t i = 0; i < results.size(); ++i) {
    const CellAxes at = cell_axes(g, i);
    if (!g.why_not(at).empty()) continue;
    const std::string& b = g.budgets[at.budget];
    const CacheCapacity& budget = g.caps[at.budget];
    const CacheScope scope = g.scopes[at.scope];
    const serving::RunResult& r = results[i];
    const Json& m = cell_metrics[i];
    Json row;
    row["scope"] = scope_name(scope);
    row["eviction"] = r.eviction;
    row["routing"] = r.routing;
    row["prefetch"] = r.prefetch;
    row["budget"] = budget.to_string();
    row["cache_capacity_experts"] = r.cache_capacity_experts;
    row["metrics"] = m;
    t.rows.push_back(row);
    t.lines.push_back(compare_line(g, budget, scope, r, m));
    t.csv += compare_csv_row(b, scope, r, m);
  }
  return t;
}

Json compare_json(const CompareArgs& a, const CompareGrid& g, const CompareInputs& in, const Json& rows,
                  const Json& rests) {
  const auto& info = in.trace.info();
  Json config;
  config["trace"] = a.trace;
  config["format"] = a.load.format;
  config["fields"] = a.load.fields;
  config["model"] = a.load.model.empty() ? Json(nullptr) : Json(a.load.model);
  config["hardware"] = in.hw.name;
  Json scopes = Json::array();
  for (CacheScope s : g.scopes) scopes.push_back(scope_name(s));
  config["scope"] = scopes;
  config["batch"] = a.batch;
  config["io_depth"] = a.io_depth;
  config["threads"] = a.threads;
  config["force"] = a.force;
  config["policies"] = g.policies;
  config["routing"] = g.routings;
  config["prefetch"] = g.prefetches;
  config["budgets"] = g.budgets;
  config["synthetic"] = info.synthetic;
  config["sizes"] = in.costs.sizes;
  Json out;
  out["header"] = run_header("compare", config);
  out["warnings"] = warnings_json();
  out["rows"] = rows;
  out["rests_on"] = rests;
  return out;
}

std::string compare_text(const CompareArgs& a, const CompareGrid& g, const CompareInputs& in,
                         const std::vector<std::string>& lines, const Json& rests) {
  const auto& info = in.trace.info();
  const serving::SourcedCosts& costs = in.costs;
  std::string text;
  char buf[1024];
  std::string scopes;
  for (CacheScope s : g.scopes) scopes += std::string(scopes.empty() ? "" : " and ") + scope_name(s);
  std::snprintf(buf, sizeof buf, "Policy comparison: %s%s on %s (simulated), %s scope, batch %u\n",
                info.model.c_str(), info.synthetic ? " (SYNTHETIC trace)" : "", in.hw.display_name.c_str(),
                scopes.c_str(), a.batch);
  text += buf;
  std::snprintf(buf, sizeof buf, "experts %s .. %s each, %s in all (%s); dense weights resident\n",
                format_bytes(costs.sizes["expert_bytes_min"].get<uint64_t>()).c_str(),
                format_bytes(costs.sizes["expert_bytes_max"].get<uint64_t>()).c_str(),
                format_bytes(costs.sizes["all_experts_bytes"].get<uint64_t>()).c_str(),
                costs.sizes["expert_bytes_source"].get<std::string>().c_str());
  text += buf;
  text += strprintf("\n%-10s %-6s %-24s %9s %9s %10s %10s %9s %10s", "budget", "scope", "eviction", "hit",
                    "hit(dec)", "TPOT", "TPOT p90", "tok/s", "lifetime");
  if (g.show_routing) text += strprintf(" %9s %9s  %s", "changed", "mass", "routing");
  if (g.show_prefetch) text += strprintf(" %9s %9s  %s", "pf acc", "pf cover", "prefetch");
  text += "\n";
  for (const auto& l : lines) text += l + "\n";
  text += rests_on_line(rests);
  return text;
}

// A comparison's results, before they are printed.
struct CompareRun {
  CompareGrid g;
  CompareInputs in;
  CompareTable t;
  Json rests;
};

CompareRun run_compare(const CompareArgs& a) {
  CompareGrid g = check_compare_args(a);
  CompareInputs in = load_compare_inputs(a, g);
  const traces::LookupStream stream = traces::build_lookup_stream(in.trace, a.batch);
  resolve_routing_and_prefetch(a, in.trace, g);
  check_scopes_hold_budgets(g, in);

  const size_t cells = g.cells();
  std::vector<serving::RunResult> results(cells);
  std::vector<Json> cell_metrics(cells);
  HwReads reads;  // every cell's, together: the table rests on each
  run_cells(a, g, in, stream, results, cell_metrics, reads);
  Json rests = rests_on(in.hw, reads);
  CompareTable t = compare_table(g, results, cell_metrics);
  warn_if_unoptimized();
  return CompareRun{std::move(g), std::move(in), std::move(t), std::move(rests)};
}

}  // namespace

CompareResult compare_result(const CompareArgs& a) {
  if (!a.systems.empty()) return compare_systems_result(a);
  CompareRun r = run_compare(a);
  return CompareResult{compare_json(a, r.g, r.in, r.t.rows, r.rests), std::move(r.t.csv)};
}

std::string compare_output(const CompareArgs& a) {
  if (!a.systems.empty()) return compare_systems_output(a);
  const CompareRun r = run_compare(a);
  if (!a.csv.empty()) write_file_atomic(a.csv, r.t.csv);
  if (!a.plot.empty()) plot_table("plot_compare.py", r.t.csv, a.csv, a.plot);
  if (a.json) return compare_json(a, r.g, r.in, r.t.rows, r.rests).dump(2) + "\n";
  return compare_text(a, r.g, r.in, r.t.lines, r.rests);
}

}  // namespace moesim::harness
