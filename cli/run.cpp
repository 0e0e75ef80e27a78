// `moesim run` and `moesim exec`: options, help and the text summary; the run itself is harness/run_outcome.h
// (run_outcome(), and run_outcome_json() for --json).
#include <string>

#include "base/atomic_file.h"
#include "base/units.h"
#include "cli/command.h"
#include "cli/run_options.h"
#include "harness/arguments.h"
#include "harness/exec_runner.h"
#include "harness/planner_report.h"
#include "harness/run_outcome.h"

namespace moesim::cli {
namespace run_cmd {

std::string print_dist(const char* name, const Json& d) {
  if (d["count"].get<uint64_t>() == 0) return strprintf("  %-22s %10s\n", name, "-");
  return strprintf(
      "  %-22s %10s %10s %10s %10s %10s %8llu\n", name, format_seconds(d["mean_s"].get<double>()).c_str(),
      format_seconds(d["p50_s"].get<double>()).c_str(), format_seconds(d["p90_s"].get<double>()).c_str(),
      format_seconds(d["p99_s"].get<double>()).c_str(), format_seconds(d["max_s"].get<double>()).c_str(),
      static_cast<unsigned long long>(d["count"].get<uint64_t>()));
}

std::string print_plan(const Json& p) {
  std::string t = strprintf("pools:   %s", p.value("source", std::string("plan")).c_str());
  if (p.contains("pools"))
    for (const auto& [name, q] : p["pools"].items())
      if (q["ratio"].get<double>() > 0)
        t += strprintf("  %s %.0f%% (%llu experts/layer)", name.c_str(), 100 * q["ratio"].get<double>(),
                       static_cast<unsigned long long>(q["experts_per_layer"].get<uint64_t>()));
  if (p.contains("rho"))
    t += strprintf("; rho %.4f (%s), K = %u", p["rho"].get<double>(),
                   p["rho_source"].get<std::string>().c_str(), p["shards"].get<uint32_t>());
  if (p.contains("io"))  // who read the E-chunks, and what the planner assumed (zipmoe's io)
    t += p["io"] == "fused" ? "; E-chunks read by the CPU workers (io=fused)"
                            : "; every read on the I/O thread (io=thread)";
  if (p.contains("expected_makespan_s") && !p["expected_makespan_s"].is_null())
    t += strprintf("; expected layer I/O+decompression %s",
                   format_seconds(p["expected_makespan_s"].get<double>()).c_str());
  return t + "\n";
}

// Lookups by the state they found, when there is more than hit/miss to say.
std::string print_states(const Json& s) {
  const Json& l = s["lookups"];
  uint64_t total = 0;
  for (const auto& [k, v] : l.items()) total += v.get<uint64_t>();
  const bool split = l["C"].get<uint64_t>() + l["S"].get<uint64_t>() + l["E"].get<uint64_t>() > 0;
  if (total == 0 || (!split && s["host_hits"].get<uint64_t>() == 0 && s["in_flight"].get<uint64_t>() == 0))
    return "";
  std::string t = "states:     ";
  for (const char* k : {"F", "C", "S", "E", "M"})
    t += strprintf(" %s %.2f%%", k,
                   100.0 * static_cast<double>(l[k].get<uint64_t>()) / static_cast<double>(total));
  t += strprintf(" of lookups; F in host memory %llu, waited for a load in flight %llu\n",
                 static_cast<unsigned long long>(s["host_hits"].get<uint64_t>()),
                 static_cast<unsigned long long>(s["in_flight"].get<uint64_t>()));
  return t;
}

std::string print_prefetch(const Json& p) {
  if (p["proposed"].get<uint64_t>() == 0) return "";
  return strprintf(
      "prefetch:    %llu issued (%llu proposed, %llu already resident, %llu declined); accuracy %s%%, "
      "coverage %s%%, "
      "%llu late, %llu useless (%s of %s read)\n",
      static_cast<unsigned long long>(p["issued"].get<uint64_t>()),
      static_cast<unsigned long long>(p["proposed"].get<uint64_t>()),
      static_cast<unsigned long long>(p["already_resident"].get<uint64_t>()),
      static_cast<unsigned long long>(p["declined"].get<uint64_t>()),
      num_or_dash(p["accuracy"], "%.2f", 100).c_str(), num_or_dash(p["coverage"], "%.2f", 100).c_str(),
      static_cast<unsigned long long>(p["late"].get<uint64_t>()),
      static_cast<unsigned long long>(p["useless"].get<uint64_t>()),
      format_bytes(p["useless_bytes"].get<uint64_t>()).c_str(),
      format_bytes(p["bytes"].get<uint64_t>()).c_str());
}

std::string print_pools(const Json& m) {
  std::string t = strprintf("memory:      peak %s", format_bytes(m["memory_peak"].get<uint64_t>()).c_str());
  if (m["pools"].size() > 1)
    for (const auto& q : m["pools"])
      t += strprintf("; %s (%s) peak %s", q["name"].get<std::string>().c_str(),
                     q["tier"].get<std::string>().c_str(),
                     format_bytes(q["peak_bytes"].get<uint64_t>()).c_str());
  return t + "\n";
}

std::string print_summary(const RunArgs& a, const Json& config, const Json& m, const traces::TraceInfo& info,
                          const HardwareProfile& hw, bool partial_states) {
  std::string t;
  if (a.exec)
    t += strprintf("moesim exec --system %s on this machine (measured; estimates from %s)\n",
                   a.system.text().c_str(), hw.display_name.c_str());
  else
    t += strprintf("moesim run --system %s on %s (simulated)\n", a.system.text().c_str(),
                   hw.display_name.c_str());
  t += strprintf("trace:   %s (%s, %u layers x %u experts, top-%u)%s\n", a.trace.c_str(), info.model.c_str(),
                 info.layers, info.experts, info.top_k,
                 info.synthetic ? "  ** SYNTHETIC trace **" : "  real trace");
  const Json& sz = config["sizes"];
  t += strprintf("experts: %s .. %s each, %s in all (%s)\n",
                 format_bytes(sz["expert_bytes_min"].get<uint64_t>()).c_str(),
                 format_bytes(sz["expert_bytes_max"].get<uint64_t>()).c_str(),
                 format_bytes(sz["all_experts_bytes"].get<uint64_t>()).c_str(),
                 sz["expert_bytes_source"].get<std::string>().c_str());
  t += strprintf("dense:   %s per layer, resident (%s)\n",
                 format_bytes(sz["dense_bytes_layer0"].get<uint64_t>()).c_str(),
                 sz["dense_bytes_source"].get<std::string>().c_str());
  t += strprintf("cache:   %s, budget %s, scope %s (%llu experts), batch %u\n",
                 config["eviction"].get<std::string>().c_str(), config["budget"].get<std::string>().c_str(),
                 config["scope"].get<std::string>().c_str(),
                 static_cast<unsigned long long>(config["cache_capacity_experts"].get<uint64_t>()), a.batch);
  if (config.contains("warm") && config["warm"].is_string())
    t += "warm:    caches warmed by " + config["warm"].get<std::string>() +
         " before the measured pass (its figures exclude the warm-up)\n";
  t += strprintf("policies: scheduling %s, prefetch %s, routing %s; recovery on %s, expert compute on %s\n",
                 config["scheduling"].get<std::string>().c_str(),
                 config["prefetch"].get<std::string>().c_str(), config["routing"].get<std::string>().c_str(),
                 config["recover_on"].get<std::string>().c_str(),
                 config["compute_on"].get<std::string>().c_str());
  if (!config["plan"].is_null()) t += print_plan(config["plan"]);
  t += strprintf("\n  %-22s %10s %10s %10s %10s %10s %8s\n", "latency", "mean", "p50", "p90", "p99", "max",
                 "count");
  t += print_dist("TTFT", m["ttft"]);
  t += print_dist("TPOT", m["tpot"]);
  t += print_dist("end-to-end (sequence)", m["end_to_end"]);
  t += print_dist("layer makespan", m["layer_makespan"]);
  t += print_dist("layer makespan (dec.)", m["layer_makespan_decode"]);
  const Json& c = m["cache"];
  t += strprintf("\nthroughput:  %s tokens/s overall, %s tokens/s decode; makespan %s for %llu tokens\n",
                 num_or_dash(m["tokens_per_s"], "%.2f").c_str(),
                 num_or_dash(m["decode_tokens_per_s"], "%.2f").c_str(),
                 format_seconds(m["makespan_s"].get<double>()).c_str(),
                 static_cast<unsigned long long>(m["generated_tokens"].get<uint64_t>()));
  // A system with partial states counts an expert found in any of them as a hit (docs/cli-json.md); what each
  // state saved is the states line's. Say so.
  t += strprintf("hit rate:    %s%% cumulative (%llu lookups), %s%% decode-only (%llu lookups)%s\n",
                 num_or_dash(c["hit_rate"], "%.2f", 100).c_str(),
                 static_cast<unsigned long long>(c["lookups"].get<uint64_t>()),
                 num_or_dash(c["decode_hit_rate"], "%.2f", 100).c_str(),
                 static_cast<unsigned long long>(c["decode_lookups"].get<uint64_t>()),
                 partial_states ? "; any resident state (F, C, S, E): the split is under states" : "");
  if (c["over_capacity_invocations"].get<uint64_t>() > 0)
    t += strprintf(
        "WARNING:     %llu invocations needed more experts than the cache holds (they passed through)\n",
        static_cast<unsigned long long>(c["over_capacity_invocations"].get<uint64_t>()));
  const Json& life = m["cache_lifetime"];
  t += strprintf("lifetime:    %s (± %s) tokens resident, %llu residencies ended, %llu still resident\n",
                 num_or_dash(life["mean_tokens"], "%.1f").c_str(),
                 num_or_dash(life["sd_tokens"], "%.1f").c_str(),
                 static_cast<unsigned long long>(life["residencies"].get<uint64_t>()),
                 static_cast<unsigned long long>(life["censored"].get<uint64_t>()));
  const Json& dev = m["routing_deviation"];
  if (dev["selections"].get<uint64_t>() > 0) {
    t += strprintf(
        "deviation:   %.2f%% of %llu (token, layer) selections changed; router weight replaced mean %s, "
        "p95 %s; removed experts by rank:",
        100 * dev["changed_fraction"].get<double>(),
        static_cast<unsigned long long>(dev["selections"].get<uint64_t>()),
        num_or_dash(dev["mass_replaced_mean"], "%.3f").c_str(),
        num_or_dash(dev["mass_replaced_p95"], "%.3f").c_str());
    for (const auto& n : dev["removed_rank_histogram"])
      t += strprintf(" %llu", static_cast<unsigned long long>(n.get<uint64_t>()));
    t += "\n";
    if (!m["routing_policy_counters"].empty() &&
        !m["routing_policy_counters"].contains("delta_avg_per_layer"))
      t += "routing:     " + m["routing_policy_counters"].dump() + "\n";
  }
  t += print_states(m["states"]);
  t += strprintf("SSD read:    %s", format_bytes(m["ssd_bytes_read"].get<uint64_t>()).c_str());
  const Json& bp = m["ssd_bytes_read_by_component"];
  if (bp["sm"].get<uint64_t>() + bp["e"].get<uint64_t>() > 0)
    t += strprintf(
        " (whole tensors %s, SM-chunks %s, E-chunks %s)", format_bytes(bp["whole"].get<uint64_t>()).c_str(),
        format_bytes(bp["sm"].get<uint64_t>()).c_str(), format_bytes(bp["e"].get<uint64_t>()).c_str());
  t += "\n";
  t += print_prefetch(m["prefetch"]);
  t += print_pools(m);
  t += strprintf("utilization:");
  for (const auto& [name, u] : m["resources"].items())
    t += strprintf(" %s %.1f%%", name.c_str(), 100 * u["utilization"].get<double>());
  t += strprintf("\n");
  return t;
}

// The text `moesim run` prints: the summary, the device memory, the planner's line, what the result rests on,
// exec's report and the timeline written.
std::string run_text(const RunArgs& a, const RunOutcome& o) {
  const Json& mem = o.config["device_memory"];
  std::string text = print_summary(a, o.config, o.metrics, o.info, o.hw, o.partial_states) +
                     strprintf("device memory (context %llu tokens x batch %u, dense %s%s):\n",
                               static_cast<unsigned long long>(mem["context_tokens"].get<uint64_t>()),
                               a.batch, a.dense.c_str(), o.memory.fits() ? "" : "; OVERCOMMITTED") +
                     memory_breakdown_text(o.memory) +
                     strprintf("  the trace touches %s of %s of experts\n",
                               format_bytes(mem["trace_touched_expert_bytes"].get<uint64_t>()).c_str(),
                               format_bytes(mem["all_experts_bytes"].get<uint64_t>()).c_str()) +
                     planner_report_line(planner_report(o.config["plan"], o.metrics)) +
                     rests_on_line(o.rests_on);
  if (a.exec) text += exec_report_text(o.exec_report);
  if (!a.timeline.empty())
    text += strprintf("timeline:    %s (%zu ops)\n", a.timeline.c_str(), o.timeline_ops);
  return text;
}

// Runs (simulated, or for real when a.exec) and writes the text or JSON summary to a.out.
void run_and_report(RunArgs& a) {
  const harness::RunOutcome o = harness::run_outcome(a);
  write_file_atomic(a.out, a.json ? harness::run_outcome_json(a, o).dump(2) + "\n" : run_text(a, o));
}

void setup(CLI::App& app) {
  auto a = std::make_shared<RunArgs>();
  add_run_options(app, a);
  app.callback([a] { run_and_report(*a); });
}

void setup_exec(CLI::App& app) {
  auto a = std::make_shared<RunArgs>();
  a->exec = true;
  add_run_options(app, a);
  add_exec_options(app, a);
  app.callback([a] {
    harness::require_exec("exec serves a trace for real from an expert store (`moesim run` simulates it)");
    run_and_report(*a);
  });
}

}  // namespace run_cmd
MOESIM_CLI_COMMAND("run", "Simulate serving a trace (TTFT, TPOT, hit rates, utilization)", run_cmd::setup);
MOESIM_CLI_COMMAND(
    "exec",
    "Serve a trace for real from a packed expert store (threads, O_DIRECT reads, decompression, "
    "recovery, expert compute): the metrics of `run`, measured",
    run_cmd::setup_exec);
}  // namespace moesim::cli
