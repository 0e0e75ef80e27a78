#include "harness/cluster/cluster_job.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <string>

#include "base/atomic_file.h"
#include "base/error.h"
#include "base/progress.h"
#include "base/units.h"
#include "base/warnings.h"
#include "core/cluster_spec.h"
#include "core/placement.h"
#include "core/run_info.h"
#include "harness/arguments.h"
#include "harness/cluster/cluster_binary.h"
#include "harness/cluster/real_cluster.h"
#include "harness/exec_runner.h"
#include "harness/plot_script.h"
#include "serving/cluster_load.h"
#include "serving/cluster_serving.h"
#include "serving/system.h"
#include "sim/sim_cluster_platform.h"

namespace moesim::harness {
namespace {

constexpr double kMaxBuckets = 100000;

double duration_option(const std::string& option, const std::string& text) {
  double s = 0;
  try {
    s = parse_duration(text);
  } catch (const Error& e) {
    throw UsageError(option + ": " + e.what());
  }
  if (!(s > 0) || !std::isfinite(s))
    throw UsageError(option + " must be a positive time (got '" + text + "')");
  return s;
}

// "A:B", "A:" or ":B" in simulated time ("0:2m"): the slices a timeline keeps.
void timeline_window_option(const std::string& text, serving::ClusterOptions& opt) {
  const auto colon = text.find(':');
  if (colon == std::string::npos)
    throw UsageError("--timeline-window: expected A:B, A: or :B in simulated time, such as 0:2m (got '" +
                     text + "')");
  const std::string from = text.substr(0, colon), to = text.substr(colon + 1);
  try {
    if (!from.empty()) opt.timeline_from_s = parse_duration(from);
    if (!to.empty()) opt.timeline_to_s = parse_duration(to);
  } catch (const Error& e) {
    throw UsageError(std::string("--timeline-window: ") + e.what());
  }
  if (opt.timeline_to_s < opt.timeline_from_s)
    throw UsageError("--timeline-window: the window ends before it starts (got '" + text + "')");
}

std::string summary_text(const serving::ClusterInput& in, const Json& j) {
  const bool real = j["platform"]["kind"] == "exec";
  std::string t =
      strprintf("cluster: %zu servers, model %s, %s %s, %llu requests, %s %s\n", in.servers.size(),
                in.model.name.c_str(), j["config"]["placement"].is_string() ? "placement" : "system",
                (j["config"]["placement"].is_string() ? j["config"]["placement"] : j["config"]["system"])
                    .get<std::string>()
                    .c_str(),
                static_cast<unsigned long long>(j["requests"].get<uint64_t>()), real ? "ran" : "simulated",
                format_seconds(j["simulated_s"].get<double>()).c_str());
  if (real)
    t += strprintf("platform: exec, %s launch, %llu calls to the servers%s\n",
                   j["platform"]["launch"].get<std::string>().c_str(),
                   static_cast<unsigned long long>(j["platform"]["calls"].get<uint64_t>()),
                   j["platform"].value("cores_shared", false) ? " (servers share CPU cores)" : "");
  const Json& lat = j["latency"];
  t += strprintf("latency:   mean %s  p50 %s  p90 %s  p99 %s  (s)\n",
                 num_or_dash(lat["mean_s"], "%.3f").c_str(), num_or_dash(lat["p50_s"], "%.3f").c_str(),
                 num_or_dash(lat["p90_s"], "%.3f").c_str(), num_or_dash(lat["p99_s"], "%.3f").c_str());
  for (const auto& s : in.servers) {
    const Json& l = lat["per_server"][s.name];
    t += strprintf("  %-10s %6llu requests, mean %s s, local compute %s\n", s.name.c_str(),
                   static_cast<unsigned long long>(l["count"].get<uint64_t>()),
                   num_or_dash(l["mean_s"], "%.3f").c_str(),
                   num_or_dash(j["local_compute_ratio"]["per_server"][s.name], "%.3f").c_str());
  }
  const Json &f = j["ttft"], &tp = j["tpot"];
  t += strprintf("TTFT:      mean %s  p50 %s  p99 %s  (s); TPOT: mean %s  p50 %s  p99 %s  (s)\n",
                 num_or_dash(f["mean_s"], "%.3f").c_str(), num_or_dash(f["p50_s"], "%.3f").c_str(),
                 num_or_dash(f["p99_s"], "%.3f").c_str(), num_or_dash(tp["mean_s"], "%.4f").c_str(),
                 num_or_dash(tp["p50_s"], "%.4f").c_str(), num_or_dash(tp["p99_s"], "%.4f").c_str());
  const Json& passes = j["passes"]["overall"];
  t += strprintf(
      "time:      local compute %s, remote round trips %s (network busy %s over %zu directed links); "
      "%s of %llu layer passes invoked an expert on another server\n",
      format_seconds(passes["local_compute_s"].get<double>()).c_str(),
      format_seconds(passes["remote_round_trip_s"].get<double>()).c_str(),
      format_seconds(passes["network_busy_s"].get<double>()).c_str(), j["links"].size(),
      num_or_dash(passes["remote_pass_share"], "%.1f%%", 100).c_str(),
      static_cast<unsigned long long>(passes["passes"].get<uint64_t>()));
  for (const Json& l : j["links"])
    if (l["messages"].get<uint64_t>() > 0)
      t += strprintf("  link %s -> %s: %s in %llu messages, busy %s (%s of the run)\n",
                     l["from"].get<std::string>().c_str(), l["to"].get<std::string>().c_str(),
                     format_bytes(l["bytes"].get<uint64_t>()).c_str(),
                     static_cast<unsigned long long>(l["messages"].get<uint64_t>()),
                     format_seconds(l["busy_s"].get<double>()).c_str(),
                     num_or_dash(l["utilisation"], "%.2f%%", 100).c_str());
  const Json& load = j["load"]["overall"];
  t += strprintf(
      "load:      %.3g requests/s arrive, %.3g served (%.3g tokens/s; utilisation %.2f), unloaded service "
      "%s, latency x%.2f from the first third to the last%s\n",
      load["arrival_rate_per_s"].get<double>(), load["throughput_requests_per_s"].get<double>(),
      load["throughput_tokens_per_s"].get<double>(), load["utilisation"].get<double>(),
      format_seconds(load["service_s"].get<double>()).c_str(), load["latency_growth"].get<double>(),
      load["overloaded"].get<bool>() ? ": OVERLOADED (the mean latency grows with the run)" : "");
  t += strprintf("local compute ratio %s, remote invocations %llu, proxy cost (Eq. 2) %.0f\n",
                 num_or_dash(j["local_compute_ratio"]["overall"], "%.3f").c_str(),
                 static_cast<unsigned long long>(j["remote_invocations"].get<uint64_t>()),
                 j["proxy_cost"].get<double>());
  if (j.contains("offload"))
    for (const auto& s : in.servers) {
      const Json& o = j["offload"][s.name];
      t += strprintf(
          "  offload %-10s expert hit rate %s of %llu lookups, %s loaded host -> GPU; served %llu "
          "requests, %llu of its own elsewhere\n",
          s.name.c_str(), num_or_dash(o["hit_rate"], "%.3f").c_str(),
          static_cast<unsigned long long>(o["lookups"].get<uint64_t>()),
          format_bytes(o["load_bytes"].get<uint64_t>()).c_str(),
          static_cast<unsigned long long>(o["served"].get<uint64_t>()),
          static_cast<unsigned long long>(o["redirected"].get<uint64_t>()));
    }
  t += strprintf("migrations: %zu of %u checks\n", j["migrations"].size(),
                 j["migration_checks"].get<uint32_t>());
  for (const Json& m : j["migrations"])
    t += strprintf("  at %s: %u experts loaded, %u dropped, %s; Eq. 4: %.3f + %.3f < %.3f s; done at %s\n",
                   format_seconds(m["time_s"].get<double>()).c_str(), m["experts_loaded"].get<uint32_t>(),
                   m["experts_dropped"].get<uint32_t>(), format_bytes(m["bytes"].get<uint64_t>()).c_str(),
                   m["cost_new_s"].get<double>(), m["migration_s"].get<double>(),
                   m["cost_current_s"].get<double>(), format_seconds(m["done_s"].get<double>()).c_str());
  return t;
}

// The spec's inputs loaded. A trace importer's advice to pass --fields or another import option is for the
// command line of `trace import`, not for cluster, which reads each trace as it is: say what to do instead.
// --plot: the mean latency of each arrival bucket and the local compute ratio over time, as a table for
// scripts/plot_cluster.py.
void plot_over_time(const Json& j, const std::string& out) {
  const Json& lat = j["latency"]["over_time"];
  const Json& lcr = j["local_compute_ratio"]["over_time"];
  const double bucket = lat["bucket_s"].get<double>();
  const size_t n = std::max(lat["mean_s"].size(), lcr["overall"].size());
  std::string csv = "bucket_start_s,latency_mean_s,local_compute_ratio\n";
  auto cell = [](const Json& v, size_t i) {
    return i < v.size() && v[i].is_number() ? strprintf("%.17g", v[i].get<double>()) : std::string();
  };
  for (size_t i = 0; i < n; ++i)
    csv += strprintf("%.17g,", bucket * static_cast<double>(i)) + cell(lat["mean_s"], i) + "," +
           cell(lcr["overall"], i) + "\n";
  plot_table("plot_cluster.py", csv, "", out);
}

serving::ClusterInput cluster_input(const ClusterSpec& spec) {
  try {
    return serving::load_cluster_input(spec);
  } catch (const Error& e) {
    const std::string what = e.what();
    if (what.find("--fields") == std::string::npos && what.find("--layer-base") == std::string::npos) throw;
    throw Error(what +
                " (moesim cluster reads each trace as it is and takes no import options: import it with "
                "`moesim trace import TRACE --fields ... -o T.mtr` and name T.mtr in the spec)");
  }
}

}  // namespace

void warn_arrivals_after_duration(const ClusterSpec& spec, double duration_s,
                                  const std::string& duration_text) {
  for (size_t i = 0; i < spec.servers.size(); ++i) {
    const ArrivalSpec& arr = spec.servers[i].arrival;
    if (arr.kind != ArrivalSpec::Kind::kTimestamps) continue;
    const auto late = static_cast<size_t>(
        arr.times_s.end() - std::lower_bound(arr.times_s.begin(), arr.times_s.end(), duration_s));
    if (late > 0)
      warn(spec.origin + ": servers[" + std::to_string(i) + "].arrival: " + std::to_string(late) +
           " of the " + std::to_string(arr.times_s.size()) + " arrival times in " + arr.file +
           " are at or after --duration " + duration_text + " and were dropped");
  }
}

void refuse_outputs_over_spec_files(const ClusterSpec& spec, const std::vector<NamedPath>& outputs) {
  std::vector<NamedPath> inputs;
  for (const NamedFile& f : files_named(spec)) inputs.push_back({f.path, f.where});
  refuse_outputs_over_inputs(outputs, inputs);
}

serving::ClusterResult simulate_cluster(const serving::ClusterInput& in, const serving::ClusterOptions& opt) {
  std::vector<sim::SimClusterServer> servers;
  for (const serving::ClusterServer& s : in.servers)
    servers.push_back({s.name, s.hw, s.gpus, s.nic_bandwidth});
  sim::SimClusterOptions so;
  so.record_timeline = opt.record_timeline;
  so.timeline_from_s = opt.timeline_from_s;
  so.timeline_to_s = opt.timeline_to_s;
  sim::SimClusterPlatform platform(servers, in.links, so);
  serving::ClusterResult r = serving::serve_cluster(in, opt, platform);
  const sim::Network& net = platform.network();
  for (const sim::DirectedLink& l : net.links())
    r.links.push_back({l.from, l.to, l.fifo.bytes, l.fifo.jobs, l.fifo.busy_s});
  for (uint32_t n = 0; n < net.servers() && net.has_nic_queues(); ++n)
    r.nics.push_back({net.nic_bandwidth(n), net.nic_out(n).bytes, net.nic_in(n).bytes, net.nic_out(n).busy_s,
                      net.nic_in(n).busy_s});
  r.events = platform.events();
  r.timeline = std::move(platform.timeline());
  return r;
}

std::string cluster_output(const ClusterArgs& a) {
  (void)serving::make_cluster_system(a.system);  // unknown, or not a cluster's: exit 2 before any loading
  const bool places = serving::system_traits(a.system).places_experts;
  if (places && a.placement.empty())
    throw UsageError("--placement is required (" + PlacementRegistry::instance().names() + ")");
  if (!places && !a.placement.empty())
    throw UsageError("--placement: system " + a.system.text() +
                     " places no experts (each server holds the whole model): drop --placement");
  if (places)
    (void)PlacementRegistry::instance().params(a.placement,
                                               "placement");  // unknown name or parameter: exit 2
  serving::ClusterOptions opt;
  opt.system = a.system;
  opt.placement = a.placement;
  if (a.platform != "sim" && a.platform != "exec")
    throw UsageError("--platform must be sim or exec (got '" + a.platform + "')");
  const bool real = a.platform == "exec";
  // A system that places no experts loads them over each GPU's host link, which the real servers do not have:
  // refused before any server process starts.
  if (real && !places)
    throw UsageError(
        "--platform exec: system " + a.system.text() +
        " runs on the simulated cluster only (its servers load experts over host links, which the "
        "real servers do not have): use --platform sim");
  if (real) {
    require_exec(
        "cluster --platform exec runs real server processes over gRPC (--platform sim needs no exec)");
    enter_cluster_binary();  // before any warning or output, which moesim-cluster then gives once
  }
  // A real run takes its --duration in wall-clock time: no default that could hold a machine for half an
  // hour.
  if (real && a.duration.empty())
    throw UsageError("--platform exec runs in real time: give --duration (e.g. 1m)");
  if (real && !a.timeline.empty())
    throw UsageError("--timeline is the simulator's; --platform exec has none");
  const std::string duration_text = a.duration.empty() ? "30m" : a.duration;
  opt.duration_s = duration_option("--duration", duration_text);
  if (!a.migrate_every.empty()) {
    opt.migrate_every_s = duration_option("--migrate-every", a.migrate_every);
    // Each check runs the placement policy on the whole cluster: a few thousand are minutes of planning.
    if (opt.duration_s / opt.migrate_every_s > 10000)
      throw UsageError("--migrate-every " + a.migrate_every + " checks more than 10000 times in --duration " +
                       a.duration + "; choose a longer interval (Prism re-plans every 5 minutes)");
  }
  opt.bucket_s = duration_option("--bucket", a.bucket);
  // The local compute ratio keeps one slot per bucket: a 1us bucket over a minute took 51 s and a 1ns one ran
  // out of memory. kMaxBuckets is far more points than any plot of the ratio over time shows.
  if (opt.duration_s / opt.bucket_s > kMaxBuckets)
    throw UsageError("--bucket " + a.bucket + " makes " +
                     format_number(std::ceil(opt.duration_s / opt.bucket_s)) + " buckets of --duration " +
                     duration_text + "; it must be from " + format_seconds(opt.duration_s / kMaxBuckets) +
                     " (at most " + std::to_string(static_cast<uint64_t>(kMaxBuckets)) + " buckets) upwards");
  opt.seed = a.seed;
  opt.profile_tokens = a.profile_tokens;
  require_at_least("--profile-tokens", a.profile_tokens, 1);
  // --draw's values, and whether each draws at random.
  static const std::map<std::string, bool> kDraws = {{"round-robin", false}, {"random", true}};
  const auto draw = kDraws.find(a.draw);
  if (draw == kDraws.end()) throw UsageError("--draw must be round-robin or random (got '" + a.draw + "')");
  opt.random_draw = draw->second;
  opt.record_timeline = !a.timeline.empty();
  if (!a.timeline_window.empty()) {
    if (a.timeline.empty()) throw UsageError("--timeline-window needs --timeline FILE");
    timeline_window_option(a.timeline_window, opt);
  }
  check_output_writable(a.out);
  if (!a.timeline.empty()) check_output_writable(a.timeline);
  if (!a.plot.empty()) check_output_writable(a.plot);

  const ClusterSpec spec = load_cluster_spec(a.spec);
  refuse_outputs_over_spec_files(spec, {{a.out, "-o"}, {a.timeline, "--timeline"}, {a.plot, "--plot"}});
  warn_arrivals_after_duration(spec, opt.duration_s, duration_text);
  const serving::ClusterInput in = cluster_input(spec);
  Progress bar("cluster", static_cast<uint64_t>(std::ceil(opt.duration_s)), real ? "s" : "simulated s");
  opt.on_progress = [&bar](double now) { bar.set(static_cast<uint64_t>(now)); };
  serving::ClusterResult r;
  Json platform = {{"kind", "sim"}};
  if (real) {
    RealClusterArgs ra;
    ra.launch = a.launch;
    ra.rendezvous = a.rendezvous;
    ra.secret_file = a.secret_file;
    ra.weight_seed = a.seed;
    RealClusterRun run = run_real_cluster(a.spec, in, opt, ra);
    r = std::move(run.result);
    platform = run.platform;
    platform["calls"] = run.records.size();
  } else {
    r = simulate_cluster(in, opt);
  }
  bar.finish();
  for (const std::string& w : serving::overload_warnings(in, r)) warn(w);

  Json config;
  config["spec"] = a.spec;
  Json j = serving::cluster_result_json(in, opt, r);
  j["platform"] = platform;
  if (!a.timeline.empty()) serving::write_cluster_timeline(a.timeline, in, r);
  if (!a.plot.empty()) plot_over_time(j, a.plot);
  if (a.json) {
    Json out;
    out["header"] = run_header("cluster", config, a.seed);
    out["warnings"] = warnings_json();
    for (auto& [k, v] : j.items()) out[k] = v;
    return out.dump(2) + "\n";
  }
  return summary_text(in, j);
}

}  // namespace moesim::harness
