#include "harness/compare_systems.h"

#include <algorithm>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "base/atomic_file.h"
#include "base/error.h"
#include "base/parallel.h"
#include "base/progress.h"
#include "base/units.h"
#include "base/warnings.h"
#include "core/cache_config.h"
#include "core/model_spec.h"
#include "core/params.h"
#include "core/run_info.h"
#include "harness/arguments.h"
#include "harness/plot_script.h"
#include "harness/run_outcome.h"
#include "serving/model_costs.h"
#include "serving/system.h"
#include "traces/trace_io.h"

namespace moesim::harness {
namespace {

// One system of the comparison: its spec without policy= (parsed once, where the --system list is read),
// and the eviction spec ("" = the system's default).
struct Entry {
  PolicySpec system;
  std::string policy;
  std::string label() const { return policy.empty() ? system.text() : system.text() + " [" + policy + "]"; }
};

namespace compare_systems_detail {
struct Cell {
  size_t entry = 0, budget = 0;
  std::string scope;  // the scope it runs at (a per-layer system's: layer)
};
}  // namespace compare_systems_detail

struct Grid {
  std::vector<Entry> entries;
  std::vector<std::string> budgets, scopes;
  std::vector<compare_systems_detail::Cell> cells;
};

// The --system list split on ',' before a system name (so "zipmoe:delta=1,shards=4" stays one spec), each
// spec's policy= taken out; a spec without one runs once per --policy.
std::vector<Entry> system_entries(const CompareArgs& a) {
  const std::vector<std::string> names = serving::system_names();
  const std::vector<std::string> specs = split_spec_list(a.systems, [&](const std::string& w) {
    for (const auto& n : names)
      if (w.rfind(n, 0) == 0 && (w.size() == n.size() || w[n.size()] == ':')) return true;
    return false;
  });
  if (specs.empty())
    throw UsageError("--system: no system given (known: " + serving::systems_with_host_tier() + ", ...)");
  const std::vector<std::string> policies = split_policy_list(a.policies);
  std::vector<Entry> out;
  for (const std::string& text : specs) {
    const PolicySpec spec = parse_system_option(text);  // UsageError: bad syntax, unknown system
    SystemAndPolicies split = take_policy_param(spec);
    const PolicySpec& rest = split.system;
    std::string policy;
    for (std::string& v : split.policies) {
      if (!policy.empty()) throw UsageError("--system " + text + ": policy= given twice");
      policy = std::move(v);
    }
    (void)serving::make_system(rest);  // UsageError: unknown parameter or value
    if (serving::system_traits(rest).cluster)
      throw UsageError("--system " + spec.name + " serves a cluster: compare it with `moesim cluster`");
    if (!policy.empty()) {
      eviction_canonical_name(policy);  // unknown policy: fail before the trace is read
      out.push_back({rest, policy});
    } else if (policies.empty()) {
      out.push_back({rest, ""});
    } else {
      for (const auto& p : policies) {
        eviction_canonical_name(p);
        out.push_back({rest, p});
      }
    }
  }
  return out;
}

Grid make_grid(const CompareArgs& a) {
  if (!a.routing.empty() || !a.prefetch.empty())
    throw UsageError(
        "--routing and --prefetch do not combine with --system (a lossless comparison of systems); vary them "
        "with `moesim run` or a sweep");
  Grid g;
  g.entries = system_entries(a);
  g.budgets = split_budget_list(a.budgets);
  if (g.budgets.empty()) g.budgets = {"1GiB", "2GiB", "4GiB", "8GiB"};
  for (const auto& b : g.budgets) parse_budget_option("--budget", b);
  for (CacheScope s : parse_scope_list(a.scope)) g.scopes.push_back(scope_name(s));
  for (size_t e = 0; e < g.entries.size(); ++e) {
    const bool per_layer = serving::system_traits(g.entries[e].system).per_layer_scope;
    for (size_t b = 0; b < g.budgets.size(); ++b) {
      if (per_layer) {
        g.cells.push_back({e, b, "layer"});
        continue;
      }
      for (const auto& s : g.scopes) g.cells.push_back({e, b, s});
    }
  }
  return g;
}

RunArgs cell_args(const CompareArgs& a, const Grid& g, const compare_systems_detail::Cell& c,
                  const std::shared_ptr<const traces::Trace>& trace) {
  RunArgs r;
  r.load = a.load;
  r.trace = a.trace;
  r.loaded = trace;
  r.hw = a.hw;
  r.system = g.entries[c.entry].system;
  if (!g.entries[c.entry].policy.empty()) {
    r.policies = {g.entries[c.entry].policy};
    r.policy_given = true;
  }
  r.budgets = {g.budgets[c.budget]};
  r.scope = c.scope;
  r.batch = a.batch;
  r.io_depth = a.io_depth;
  r.force = a.force;
  r.allow_overcommit = a.allow_overcommit;
  return r;
}

struct CellResult {
  std::string skipped;  // why the cell has no row: its budget cannot hold top-k experts at its scope
  RunOutcome outcome;
  std::string policy, budget;  // as run (the system's default policy; the budget as it resolved)
  std::vector<std::string> warnings;
  std::optional<std::string> error;
};

struct Compared {
  Grid g;
  std::vector<CellResult> cells;
  Json rows = Json::array();
  std::string csv, text;
  Json rests = Json::array();
};

std::string cell_name(const Grid& g, const compare_systems_detail::Cell& c) {
  return "--system " + g.entries[c.entry].label() + " --budget " + g.budgets[c.budget] + " --scope " +
         c.scope;
}

namespace compare_systems_detail {
Compared run_cells(const CompareArgs& a) {
  require_trace_input(a.trace);
  require_at_least("--batch", a.batch, 1);
  check_io_depth("--io-depth", a.io_depth);
  require_at_least("--jobs", a.threads, 1);
  Compared out;
  out.g = make_grid(a);
  check_output_writable(a.out);
  if (!a.csv.empty()) check_output_writable(a.csv);
  if (!a.plot.empty()) check_output_writable(a.plot);
  const auto trace = std::make_shared<const traces::Trace>(traces::load_trace(a.trace, a.load));
  const Grid& g = out.g;
  out.cells.resize(g.cells.size());
  // A budget that a scope cannot hold (fewer than top-k experts a layer) leaves that scope's cells of an
  // expert-cache system out, with a warning, as the policy comparison does; a per-layer system's pools are
  // its own to size, and its refusal stays an error.
  {
    std::optional<ModelSpec> model;
    if (!a.load.model.empty()) model = load_model(a.load.model);
    const serving::SourcedCosts costs = serving::model_costs(trace->info(), model);
    const auto& info = trace->info();
    std::map<std::pair<size_t, std::string>, std::string> infeasible;
    for (size_t b = 0; b < g.budgets.size(); ++b)
      for (const auto& scope : g.scopes) try {
          const CacheCapacity cap =
              resolve_budget_option("--budget", parse_budget_option("--budget", g.budgets[b]), info,
                                    costs.sizes["all_experts_bytes"].get<uint64_t>());
          make_cache_config(info.layers, info.experts, info.top_k, parse_scope(scope), cap,
                            costs.costs.expert_bytes);
        } catch (const Error& e) {
          infeasible[{b, scope}] = e.what();
          warn("compare: --budget " + g.budgets[b] + " has no " + scope + " scope: " + e.what() +
               " (its rows are left out)");
        }
    for (size_t i = 0; i < g.cells.size(); ++i) {
      const compare_systems_detail::Cell& c = g.cells[i];
      const auto it = infeasible.find({c.budget, c.scope});
      if (it != infeasible.end() && !serving::system_traits(g.entries[c.entry].system).per_layer_scope)
        out.cells[i].skipped = it->second;
    }
  }
  Progress bar("compare", g.cells.size(), "cells");
  parallel_for(g.cells.size(), a.threads, [&](size_t i) {
    CellResult& r = out.cells[i];
    if (!r.skipped.empty()) {
      bar.add(1);
      return;
    }
    ThreadWarningScope captured;
    try {
      RunArgs args = cell_args(a, g, g.cells[i], trace);
      r.outcome = run_outcome(args);
      // The eviction as run: the one given, or the system's own default as its run reports it (ZipMoE's
      // in-pool policy is not RunArgs' lru).
      r.policy = g.entries[g.cells[i].entry].policy.empty() ? r.outcome.config.value("eviction", args.policy)
                                                            : g.entries[g.cells[i].entry].policy;
      r.budget = r.outcome.config.value("budget", args.budget);
    } catch (const UsageError& e) {
      r.error = e.what();
    } catch (const Error& e) {
      r.error = e.what();
    }
    r.warnings = captured.items();
    bar.add(1);
  });
  bar.finish();
  // The first failed cell fails the comparison, named as the run it is (its budget does not fit, say).
  for (size_t i = 0; i < g.cells.size(); ++i)
    if (out.cells[i].error) throw Error(cell_name(g, g.cells[i]) + ": " + *out.cells[i].error);
  // Each distinct warning once, with how many cells raised it.
  std::map<std::string, size_t> count;
  std::vector<std::string> order;
  for (const auto& c : out.cells)
    for (const auto& w : c.warnings)
      if (count[w]++ == 0) order.push_back(w);
  for (const auto& w : order)
    warn(count[w] == g.cells.size() ? w : strprintf("[%zu of %zu cells] ", count[w], g.cells.size()) + w);
  return out;
}
}  // namespace compare_systems_detail

void tabulate(const CompareArgs& a, Compared& c) {
  const Grid& g = c.g;
  // The best mean TPOT per (budget, scope).
  std::map<std::pair<size_t, std::string>, size_t> best;
  for (size_t i = 0; i < g.cells.size(); ++i) {
    if (!c.cells[i].skipped.empty()) continue;
    const Json& t = c.cells[i].outcome.metrics["tpot"]["mean_s"];
    if (t.is_null()) continue;
    const auto key = std::make_pair(g.cells[i].budget, g.cells[i].scope);
    const auto it = best.find(key);
    if (it == best.end() ||
        t.get<double>() < c.cells[it->second].outcome.metrics["tpot"]["mean_s"].get<double>())
      best[key] = i;
  }
  c.text =
      strprintf("%-12s %-6s %-34s %8s %8s %10s %10s %10s %9s %10s\n", "budget", "scope", "system [eviction]",
                "hit", "hit(dec)", "TPOT s", "p90 s", "TTFT s", "tok/s", "SSD read");
  std::set<std::string> seen_rests;
  for (const std::string& scope : {std::string("global"), std::string("layer")})
    for (size_t b = 0; b < g.budgets.size(); ++b)
      for (size_t i = 0; i < g.cells.size(); ++i) {
        const compare_systems_detail::Cell& cell = g.cells[i];
        if (cell.budget != b || cell.scope != scope || !c.cells[i].skipped.empty()) continue;
        const CellResult& r = c.cells[i];
        const Json& m = r.outcome.metrics;
        const Entry& e = g.entries[cell.entry];
        const std::string label =
            e.system.text() + " [" + (e.policy.empty() ? std::string("its default") : r.policy) + "]";
        const auto it = best.find({b, scope});
        const bool is_best = it != best.end() && it->second == i;
        c.text += strprintf(
            "%-12s %-6s %-34s %7s%% %7s%% %10s %10s %10s %9s %10s%s\n", r.budget.c_str(), scope.c_str(),
            label.c_str(), num_or_dash(m["cache"]["hit_rate"], "%.2f", 100).c_str(),
            num_or_dash(m["cache"]["decode_hit_rate"], "%.2f", 100).c_str(),
            num_or_dash(m["tpot"]["mean_s"], "%.4f").c_str(), num_or_dash(m["tpot"]["p90_s"], "%.4f").c_str(),
            num_or_dash(m["ttft"]["mean_s"], "%.3f").c_str(),
            num_or_dash(m["decode_tokens_per_s"], "%.2f").c_str(),
            format_bytes(m["ssd_bytes_read"].get<uint64_t>()).c_str(), is_best ? " *" : "");
        Json row;
        row["system"] = e.system.text();
        row["eviction"] = r.policy;
        row["eviction_is_default"] = e.policy.empty();
        row["budget"] = r.budget;
        row["budget_requested"] = g.budgets[b];
        row["scope"] = scope;
        row["best_tpot_at_budget_and_scope"] = is_best;
        row["metrics"] = m;
        c.rows.push_back(std::move(row));
        // The policy comparison's columns (so scripts/plot_compare.py reads both), then the system.
        c.csv += "\"" + r.budget + "\",\"" + r.policy + "\"," + csv_num(m["cache"]["hit_rate"]) + "," +
                 csv_num(m["cache"]["decode_hit_rate"]) + "," + csv_num(m["tpot"]["mean_s"]) + "," +
                 csv_num(m["tpot"]["p50_s"]) + "," + csv_num(m["tpot"]["p90_s"]) + "," +
                 csv_num(m["tpot"]["p99_s"]) + "," + csv_num(m["ttft"]["mean_s"]) + "," +
                 csv_num(m["decode_tokens_per_s"]) + "," +
                 std::to_string(m["ssd_bytes_read"].get<uint64_t>()) + ",identity,none," + scope + ",\"" +
                 e.system.text() + "\"\n";
        for (const Json& x : r.outcome.rests_on)
          if (seen_rests.insert(x.dump()).second) c.rests.push_back(x);
      }
  c.csv =
      "budget,eviction,hit_rate,decode_hit_rate,tpot_mean_s,tpot_p50_s,tpot_p90_s,tpot_p99_s,ttft_mean_s,"
      "decode_tokens_per_s,ssd_bytes_read,routing,prefetch,scope,system\n" +
      c.csv;
  (void)a;
}

// The first cell that ran (every cell reads the same trace and hardware).
const RunOutcome& first_run(const Compared& c) {
  for (const auto& r : c.cells)
    if (r.skipped.empty()) return r.outcome;
  throw Error("compare: no budget fits any scope (see the warnings)");
}

Json compare_systems_json(const CompareArgs& a, const Compared& c) {
  const RunOutcome& first = first_run(c);
  Json config;
  config["trace"] = a.trace;
  config["format"] = a.load.format;
  config["fields"] = a.load.fields;
  config["model"] = a.load.model.empty() ? Json(nullptr) : Json(a.load.model);
  config["hardware"] = first.hw.name;
  config["systems"] = a.systems;
  config["policies"] = a.policies;
  config["budgets"] = c.g.budgets;
  config["scope"] = c.g.scopes;
  config["batch"] = a.batch;
  config["io_depth"] = a.io_depth;
  config["threads"] = a.threads;
  config["force"] = a.force;
  config["synthetic"] = first.info.synthetic;
  Json out;
  out["header"] = run_header("compare", config);
  out["warnings"] = warnings_json();
  out["rows"] = c.rows;
  out["rests_on"] = c.rests;
  return out;
}

Compared compared(const CompareArgs& a) {
  Compared c = compare_systems_detail::run_cells(a);
  tabulate(a, c);
  return c;
}

}  // namespace

CompareResult compare_systems_result(const CompareArgs& a) {
  const Compared c = compared(a);
  return CompareResult{compare_systems_json(a, c), c.csv};
}

std::string compare_systems_output(const CompareArgs& a) {
  const Compared c = compared(a);
  if (!a.csv.empty()) write_file_atomic(a.csv, c.csv);
  if (!a.plot.empty()) plot_table("plot_compare.py", c.csv, a.csv, a.plot);
  if (a.json) return compare_systems_json(a, c).dump(2) + "\n";
  const RunOutcome& first = first_run(c);
  std::string text = strprintf(
      "System comparison: %s%s on %s (simulated), batch %u; * = lowest mean TPOT at its "
      "budget and scope (a per-layer system is ranked at layer scope only)\n\n",
      first.info.model.c_str(), first.info.synthetic ? " (SYNTHETIC trace)" : "",
      first.hw.display_name.c_str(), a.batch);
  text += c.text;
  text += rests_on_line(c.rests);
  return text;
}

}  // namespace moesim::harness
