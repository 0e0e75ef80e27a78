// `moesim compare`: the policy comparison table -- eviction policies x budgets, each a full simulated
// `run --system offload` on the same trace, hardware and batch. Rows: hit rates (cumulative and
// decode-only) and simulated TPOT (mean, p90) with tokens/s. --json prints every cell's metrics.
#include <cstdio>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "cli/command.h"
#include "cli/trace_options.h"
#include "core/atomic_file.h"
#include "core/error.h"
#include "core/metrics.h"
#include "core/run_info.h"
#include "core/units.h"
#include "sim/offload.h"
#include "traces/lookup_stream.h"
#include "traces/trace_io.h"

namespace moesim::cli {
namespace {

struct CompareArgs {
  traces::LoadOptions load;  // --format, --fields, --model
  std::string trace, hw = "jetson-agx-orin-64gb", policies, budgets = "1GiB,2GiB,4GiB,8GiB",
                            scope = "global";
  uint32_t batch = 1, io_depth = 1;
  bool json = false;
  std::string csv;
};

std::vector<std::string> split_list(const std::string& s) {
  std::vector<std::string> out;
  std::string item;
  // Policy specs contain commas inside their parameters ("random:seed=7"); ';' separates specs then.
  const char sep = s.find(';') != std::string::npos ? ';' : ',';
  std::istringstream in(s);
  while (std::getline(in, item, sep))
    if (!item.empty()) out.push_back(item);
  return out;
}

void execute(const CompareArgs& a) {
  if (a.batch == 0) throw Error("--batch must be at least 1");
  const traces::Trace trace = traces::load_trace(a.trace, a.load);
  const HardwareProfile hw = load_hardware(a.hw);
  std::optional<ModelSpec> model;
  if (!a.load.model.empty()) model = load_model(a.load.model);
  const sim::OffloadCosts costs = sim::offload_costs(trace.info(), model);
  std::vector<std::string> policies = split_list(a.policies);
  if (policies.empty())
    for (const auto& e : EvictionRegistry::instance().entries()) policies.push_back(e.name);
  const std::vector<std::string> budgets = split_list(a.budgets);
  if (budgets.empty()) throw Error("--budgets: give at least one budget");
  const traces::LookupStream stream = traces::build_lookup_stream(trace, a.batch);

  Json rows = Json::array();
  std::vector<std::string> lines;
  std::string csv =
      "budget,eviction,cache_capacity_experts,hit_rate,decode_hit_rate,tpot_mean_s,tpot_p50_s,tpot_p90_s,"
      "tpot_p99_s,"
      "ttft_mean_s,decode_tokens_per_s,ssd_bytes_read\n";
  for (const auto& b : budgets) {
    for (const auto& p : policies) {
      sim::OffloadConfig cfg;
      cfg.eviction = p;
      cfg.scope = parse_scope(a.scope);
      cfg.budget = CacheCapacity::parse(b);
      cfg.sim.io_depth = a.io_depth;
      const sim::OffloadResult r = sim::run_offload(stream, trace.info(), costs, hw, cfg);
      const Json m = metrics_json(r.result);
      Json row;
      row["eviction"] = r.eviction;
      row["budget"] = cfg.budget.to_string();
      row["cache_capacity_experts"] = r.cache_capacity_experts;
      row["metrics"] = m;
      rows.push_back(row);
      char line[256];
      std::snprintf(
          line, sizeof line, "%-10s %-24s %8.2f%% %8.2f%% %10s %10s %9.2f", cfg.budget.to_string().c_str(),
          r.eviction.c_str(), 100 * m["cache"]["hit_rate"].get<double>(),
          100 * m["cache"]["decode_hit_rate"].get<double>(),
          format_seconds(m["tpot"]["mean_s"].get<double>()).c_str(),
          format_seconds(m["tpot"]["p90_s"].get<double>()).c_str(), m["decode_tokens_per_s"].get<double>());
      lines.push_back(line);
      char row_csv[512];
      std::snprintf(row_csv, sizeof row_csv,
                    "%s,\"%s\",%llu,%.17g,%.17g,%.17g,%.17g,%.17g,%.17g,%.17g,%.17g,%llu\n", b.c_str(),
                    r.eviction.c_str(), static_cast<unsigned long long>(r.cache_capacity_experts),
                    m["cache"]["hit_rate"].get<double>(), m["cache"]["decode_hit_rate"].get<double>(),
                    m["tpot"]["mean_s"].get<double>(), m["tpot"]["p50_s"].get<double>(),
                    m["tpot"]["p90_s"].get<double>(), m["tpot"]["p99_s"].get<double>(),
                    m["ttft"]["mean_s"].get<double>(), m["decode_tokens_per_s"].get<double>(),
                    static_cast<unsigned long long>(m["ssd_bytes_read"].get<uint64_t>()));
      csv += row_csv;
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
    config["scope"] = a.scope;
    config["batch"] = a.batch;
    config["io_depth"] = a.io_depth;
    config["synthetic"] = info.synthetic;
    config["sizes"] = costs.sizes;
    Json out;
    out["header"] = run_header("compare", config);
    out["rows"] = rows;
    std::fputs((out.dump(2) + "\n").c_str(), stdout);
    return;
  }
  std::printf("Policy comparison: %s%s on %s (simulated), %s scope, batch %u\n", info.model.c_str(),
              info.synthetic ? " (SYNTHETIC trace)" : "", hw.display_name.c_str(), a.scope.c_str(), a.batch);
  std::printf("experts %s .. %s each, %s in all (%s); dense weights resident\n",
              format_bytes(costs.sizes["expert_bytes_min"].get<uint64_t>()).c_str(),
              format_bytes(costs.sizes["expert_bytes_max"].get<uint64_t>()).c_str(),
              format_bytes(costs.sizes["all_experts_bytes"].get<uint64_t>()).c_str(),
              costs.sizes["expert_bytes_source"].get<std::string>().c_str());
  std::printf("\n%-10s %-24s %9s %9s %10s %10s %9s\n", "budget", "eviction", "hit", "hit(dec)", "TPOT",
              "TPOT p90", "tok/s");
  for (const auto& l : lines) std::printf("%s\n", l.c_str());
}

void setup(CLI::App& app) {
  auto a = std::make_shared<CompareArgs>();
  app.add_option("--trace", a->trace, "trace file")->required();
  add_trace_format_options(app, a->load);
  app.add_option("--model", a->load.model, "model preset: take sizes from it (default: the trace's own sizes)");
  app.add_option("--hw", a->hw, "hardware profile")->capture_default_str();
  app.add_option("--policies", a->policies,
                 "eviction policy specs, comma-separated (';' when specs have parameters); default: all");
  app.add_option("--budgets", a->budgets, "budgets, comma-separated (bytes, or experts per layer)")
      ->capture_default_str();
  app.add_option("--scope", a->scope, "cache scope: global or layer")->capture_default_str();
  app.add_option("--batch", a->batch, "sequences decoding together")->capture_default_str();
  app.add_option("--io-depth", a->io_depth, "reads the I/O thread keeps outstanding")->capture_default_str();
  app.add_flag("--json", a->json, "print JSON (header + one row per cell)");
  app.add_option("--csv", a->csv, "also write the table as CSV to this file (atomically)");
  app.callback([a] { execute(*a); });
}

}  // namespace
MOESIM_CLI_COMMAND("compare", "Compare eviction policies x budgets in simulated offloaded serving", setup);
}  // namespace moesim::cli
