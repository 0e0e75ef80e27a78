#include "harness/compare_job.h"

#include <cstdio>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "base/atomic_file.h"
#include "base/error.h"
#include "base/parallel.h"
#include "base/progress.h"
#include "base/units.h"
#include "base/warnings.h"
#include "core/prefetch.h"
#include "core/routing.h"
#include "core/run_info.h"
#include "harness/arguments.h"
#include "harness/routing_table.h"
#include "harness/sim_runner.h"
#include "serving/metrics.h"
#include "traces/lookup_stream.h"
#include "traces/token_routing.h"
#include "traces/trace_io.h"

namespace moesim::harness {
namespace {


// A CSV number, empty when not measured (null in JSON).
std::string csv_num(const Json& v) {
  if (v.is_null()) return "";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.17g", v.get<double>());
  return buf;
}

std::string seconds_or_dash(const Json& v) {
  return v.is_null() ? "-" : format_seconds(v.get<double>());
}

}  // namespace

void compare(const CompareArgs& a) {
  require_trace_input(a.trace);
  require_at_least("--batch", a.batch, 1);
  require_at_least("--io-depth", a.io_depth, 1);
  require_at_least("--jobs", a.threads, 1);
  const CacheScope scope = parse_scope_option("--scope", a.scope);
  std::vector<std::string> policies = resolve_policy_list(a.policies);
  if (policies.empty())
    for (const auto& e : EvictionRegistry::instance().entries()) policies.push_back(e.name);
  std::vector<std::string> budgets = split_budget_list(a.budgets);
  if (budgets.empty()) budgets = {"1GiB", "2GiB", "4GiB", "8GiB"};
  std::vector<CacheCapacity> caps;
  for (const auto& b : budgets) caps.push_back(parse_budget_option("--budget", b));
  check_output_writable(a.out);
  if (!a.csv.empty()) check_output_writable(a.csv);

  const traces::Trace trace = traces::load_trace(a.trace, a.load);
  const HardwareProfile hw = load_hardware(a.hw);
  std::optional<ModelSpec> model;
  if (!a.load.model.empty()) model = load_model(a.load.model);
  const serving::SizedCosts costs = serving::model_costs(trace.info(), model);
  warn_trace_plausibility(a.trace, trace, a.batch);
  for (const auto& c : caps)
    check_budget_plausibility("--budget", c, scope, trace.info(),
                              costs.sizes["all_experts_bytes"].get<uint64_t>(), &hw, a.force);
  const traces::LookupStream stream = traces::build_lookup_stream(trace, a.batch);
  std::vector<std::string> routings = split_routing_list(a.routing);
  if (routings.empty()) routings = {"identity"};
  for (const auto& r : routings)  // a policy the trace cannot serve (no logits) fails before any cell runs
    make_routing_policy(r, traces::routing_setup(trace.info(), trace));
  const size_t R = routings.size();
  // ',' separates specs only before a registered prefetch policy's name: "transition:train=T,top=6" is one.
  std::vector<std::string> prefetches = split_spec_list(a.prefetch, [](const std::string& w) {
    for (const auto& e : PrefetchRegistry::instance().entries())
      if (w.rfind(e.name, 0) == 0 && (w.size() == e.name.size() || w[e.name.size()] == ':')) return true;
    return false;
  });
  if (prefetches.empty()) prefetches = {"none"};
  for (const auto& pf : prefetches)  // a bad spec or training trace fails before any cell runs
    make_prefetch_policy(pf, PrefetchSetup{trace.info().layers, trace.info().experts, trace.info().top_k, 1});
  const size_t P = prefetches.size();
  const size_t RP = R * P;
  const bool show_prefetch = P > 1 || prefetches[0] != "none";

  // Cells in (budget, policy, routing, prefetch) order; each lands in its own slot, so --jobs does not
  // change the output.
  const size_t cells = budgets.size() * policies.size() * RP;
  std::vector<serving::RunResult> results(cells);
  std::vector<Json> cell_metrics(cells);
  HwReads reads;  // every cell's, together: the table rests on each
  {
    // Counted in simulated steps, not cells: a few large cells would otherwise leave the bar still for
    // minutes.
    Progress bar("compare", cells * stream.steps(), "steps");
    parallel_for(cells, a.threads, [&](size_t i) {
      serving::SystemConfig cfg;
      cfg.eviction = policies[(i / RP) % policies.size()];
      cfg.routing = routings[(i / P) % R];
      cfg.prefetch = prefetches[i % P];
      cfg.trace = &trace;
      cfg.scope = scope;
      cfg.budget = caps[i / (policies.size() * RP)];
      uint64_t reported = 0;  // this cell's steps already added (on_step gives a running count per cell)
      cfg.on_step = [&bar, &reported](uint64_t done, uint64_t) {
        bar.add(done - reported);
        reported = done;
      };
      sim::SimOptions sim;
      sim.io_depth = a.io_depth;
      results[i] = run_simulated(cfg, stream, trace.info(), costs, hw, sim, nullptr, &reads);
      cell_metrics[i] = metrics_json(results[i].result);
      results[i].result = {};  // the per-cell timing details are not needed any more
    });
    bar.finish();
  }

  Json rows = Json::array();
  std::vector<std::string> lines;
  std::string csv =
      "budget,eviction,cache_capacity_experts,hit_rate,decode_hit_rate,tpot_mean_s,tpot_p50_s,tpot_p90_s,"
      "tpot_p99_s,"
      "ttft_mean_s,decode_tokens_per_s,ssd_bytes_read,routing,changed_fraction,mass_replaced_mean,"
      "lifetime_mean_tokens,lifetime_sd_tokens,prefetch,prefetch_accuracy,prefetch_coverage,"
      "prefetch_useless_bytes\n";
  for (size_t i = 0; i < cells; ++i) {
    {
      const std::string& b = budgets[i / (policies.size() * RP)];
      const CacheCapacity& budget = caps[i / (policies.size() * RP)];
      const serving::RunResult& r = results[i];
      const Json& m = cell_metrics[i];
      Json row;
      row["eviction"] = r.eviction;
      row["routing"] = r.routing;
      row["prefetch"] = r.prefetch;
      row["budget"] = budget.to_string();
      row["cache_capacity_experts"] = r.cache_capacity_experts;
      row["metrics"] = m;
      rows.push_back(row);
      const Json& dev = m["routing_deviation"];
      const Json& life = m["cache_lifetime"];
      std::string line = strprintf("%-10s %-24s %8s%% %8s%% %10s %10s %9s %10s",
                    budget.to_string().c_str(), r.eviction.c_str(),
                    num_or_dash(m["cache"]["hit_rate"], "%.2f", 100).c_str(),
                    num_or_dash(m["cache"]["decode_hit_rate"], "%.2f", 100).c_str(),
                    seconds_or_dash(m["tpot"]["mean_s"]).c_str(), seconds_or_dash(m["tpot"]["p90_s"]).c_str(),
                    num_or_dash(m["decode_tokens_per_s"], "%.2f").c_str(),
                    num_or_dash(life["mean_tokens"], "%.0f").c_str());
      if (R > 1 || routings[0] != "identity")
        line += strprintf(" %8.2f%% %9s  %s", 100 * dev["changed_fraction"].get<double>(),
                          num_or_dash(dev["mass_replaced_mean"], "%.3f").c_str(), routing_label(r.routing).c_str());
      const Json& pf = m["prefetch"];
      if (show_prefetch)
        line += strprintf(" %9s %9s  %s", num_or_dash(pf["accuracy"], "%.1f%%", 100).c_str(),
                          num_or_dash(pf["coverage"], "%.1f%%", 100).c_str(), r.prefetch.c_str());
      lines.push_back(line);
      csv += b + ",\"" + r.eviction + "\"," + std::to_string(r.cache_capacity_experts) + "," +
             csv_num(m["cache"]["hit_rate"]) + "," + csv_num(m["cache"]["decode_hit_rate"]) + "," +
             csv_num(m["tpot"]["mean_s"]) + "," + csv_num(m["tpot"]["p50_s"]) + "," +
             csv_num(m["tpot"]["p90_s"]) + "," + csv_num(m["tpot"]["p99_s"]) + "," +
             csv_num(m["ttft"]["mean_s"]) + "," + csv_num(m["decode_tokens_per_s"]) + "," +
             std::to_string(m["ssd_bytes_read"].get<uint64_t>()) + ",\"" + r.routing + "\"," +
             csv_num(m["routing_deviation"]["changed_fraction"]) + "," +
             csv_num(m["routing_deviation"]["mass_replaced_mean"]) + "," + csv_num(m["cache_lifetime"]["mean_tokens"]) +
             "," + csv_num(m["cache_lifetime"]["sd_tokens"]) + ",\"" + r.prefetch + "\"," +
             csv_num(m["prefetch"]["accuracy"]) + "," + csv_num(m["prefetch"]["coverage"]) + "," +
             std::to_string(m["prefetch"]["useless_bytes"].get<uint64_t>()) + "\n";
    }
  }
  const auto& info = trace.info();
  if (!a.csv.empty()) write_file_atomic(a.csv, csv);
  warn_if_unoptimized();
  if (a.json) {
    Json config;
    config["trace"] = a.trace;
    config["format"] = a.load.format;
    config["fields"] = a.load.fields;
    config["model"] = a.load.model.empty() ? Json(nullptr) : Json(a.load.model);
    config["hardware"] = hw.name;
    config["scope"] = scope_name(scope);
    config["batch"] = a.batch;
    config["io_depth"] = a.io_depth;
    config["threads"] = a.threads;
    config["force"] = a.force;
    config["policies"] = policies;
    config["routing"] = routings;
    config["prefetch"] = prefetches;
    config["budgets"] = budgets;
    config["synthetic"] = info.synthetic;
    config["sizes"] = costs.sizes;
    Json out;
    out["header"] = run_header("compare", config);
    out["warnings"] = warnings_json();
    out["rows"] = rows;
    out["rests_on"] = rests_on(hw, reads);
    write_json_file(a.out, out);
    return;
  }
  std::string text;
  char buf[1024];
  std::snprintf(buf, sizeof buf, "Policy comparison: %s%s on %s (simulated), %s scope, batch %u\n",
                info.model.c_str(), info.synthetic ? " (SYNTHETIC trace)" : "", hw.display_name.c_str(),
                scope_name(scope), a.batch);
  text += buf;
  std::snprintf(buf, sizeof buf, "experts %s .. %s each, %s in all (%s); dense weights resident\n",
                format_bytes(costs.sizes["expert_bytes_min"].get<uint64_t>()).c_str(),
                format_bytes(costs.sizes["expert_bytes_max"].get<uint64_t>()).c_str(),
                format_bytes(costs.sizes["all_experts_bytes"].get<uint64_t>()).c_str(),
                costs.sizes["expert_bytes_source"].get<std::string>().c_str());
  text += buf;
  text += strprintf("\n%-10s %-24s %9s %9s %10s %10s %9s %10s", "budget", "eviction", "hit", "hit(dec)", "TPOT",
                    "TPOT p90", "tok/s", "lifetime");
  if (R > 1 || routings[0] != "identity") text += strprintf(" %9s %9s  %s", "changed", "mass", "routing");
  if (show_prefetch) text += strprintf(" %9s %9s  %s", "pf acc", "pf cover", "prefetch");
  text += "\n";
  for (const auto& l : lines) text += l + "\n";
  text += rests_on_line(rests_on(hw, reads));
  write_file_atomic(a.out, text);
}

}  // namespace moesim::harness
