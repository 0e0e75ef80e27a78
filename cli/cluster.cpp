// `moesim cluster`: Prism's edge cluster (Accelerating Edge Inference for Distributed MoE Models with
// Latency-Optimized Expert Placement) in simulated time.
//   moesim cluster SERVERS.json --placement P [--migrate-every 5m] [--duration 30m] [--seed N]
//                  [--profile-tokens K] [--draw round-robin|random] [--bucket 1m] [--json] [-o F]
//                  [--timeline F [--timeline-window A:B]]
// The engine is sim/cluster_sim.h; SERVERS.json is core/cluster_spec.h; docs/cluster.md has both and the keys.
#include <cmath>
#include <string>

#include "cli/cli_util.h"
#include "cli/command.h"
#include "core/atomic_file.h"
#include "core/cluster_spec.h"
#include "core/error.h"
#include "core/placement.h"
#include "core/progress.h"
#include "core/run_info.h"
#include "core/units.h"
#include "core/warnings.h"
#include "sim/cluster_sim.h"

namespace moesim::cli {
namespace {

struct ClusterArgs {
  std::string spec, placement, migrate_every, duration = "30m", bucket = "1m", draw = "round-robin", out = "-",
                                               timeline, timeline_window;
  uint64_t seed = 1, profile_tokens = 1000;
  bool json = false;
};

double duration_option(const std::string& option, const std::string& text) {
  double s = 0;
  try {
    s = parse_duration(text);
  } catch (const Error& e) {
    throw UsageError(option + ": " + e.what());
  }
  if (!(s > 0) || !std::isfinite(s)) throw UsageError(option + " must be a positive time (got '" + text + "')");
  return s;
}

// "A:B", "A:" or ":B" in simulated time ("0:2m"): the slices a timeline keeps.
void timeline_window_option(const std::string& text, sim::ClusterOptions& opt) {
  const auto colon = text.find(':');
  if (colon == std::string::npos)
    throw UsageError("--timeline-window: expected A:B, A: or :B in simulated time, such as 0:2m (got '" + text + "')");
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

std::string summary_text(const sim::ClusterInput& in, const Json& j) {
  std::string t = strprintf("cluster: %zu servers, model %s, placement %s, %llu requests, simulated %s\n",
                            in.servers.size(), in.model.name.c_str(), j["config"]["placement"].get<std::string>().c_str(),
                            static_cast<unsigned long long>(j["requests"].get<uint64_t>()),
                            format_seconds(j["simulated_s"].get<double>()).c_str());
  const Json& lat = j["latency"];
  t += strprintf("latency:   mean %s  p50 %s  p90 %s  p99 %s  (s)\n", num_or_dash(lat["mean_s"], "%.3f").c_str(),
                 num_or_dash(lat["p50_s"], "%.3f").c_str(), num_or_dash(lat["p90_s"], "%.3f").c_str(),
                 num_or_dash(lat["p99_s"], "%.3f").c_str());
  for (const auto& s : in.servers) {
    const Json& l = lat["per_server"][s.name];
    t += strprintf("  %-10s %6llu requests, mean %s s, local compute %s\n", s.name.c_str(),
                   static_cast<unsigned long long>(l["count"].get<uint64_t>()), num_or_dash(l["mean_s"], "%.3f").c_str(),
                   num_or_dash(j["local_compute_ratio"]["per_server"][s.name], "%.3f").c_str());
  }
  t += strprintf("local compute ratio %s, remote invocations %llu, proxy cost (Eq. 2) %.0f\n",
                 num_or_dash(j["local_compute_ratio"]["overall"], "%.3f").c_str(),
                 static_cast<unsigned long long>(j["remote_invocations"].get<uint64_t>()),
                 j["proxy_cost"].get<double>());
  t += strprintf("migrations: %zu of %u checks\n", j["migrations"].size(), j["migration_checks"].get<uint32_t>());
  for (const Json& m : j["migrations"])
    t += strprintf("  at %s: %u experts loaded, %u dropped, %s; Eq. 4: %.3f + %.3f < %.3f s; done at %s\n",
                   format_seconds(m["time_s"].get<double>()).c_str(), m["experts_loaded"].get<uint32_t>(),
                   m["experts_dropped"].get<uint32_t>(), format_bytes(m["bytes"].get<uint64_t>()).c_str(),
                   m["cost_new_s"].get<double>(), m["migration_s"].get<double>(), m["cost_current_s"].get<double>(),
                   format_seconds(m["done_s"].get<double>()).c_str());
  return t;
}

void execute(const ClusterArgs& a) {
  if (a.placement.empty()) throw UsageError("--placement is required (" + PlacementRegistry::instance().names() + ")");
  (void)PlacementRegistry::instance().params(a.placement, "placement");  // unknown name or parameter: exit 2
  sim::ClusterOptions opt;
  opt.placement = a.placement;
  opt.duration_s = duration_option("--duration", a.duration);
  if (!a.migrate_every.empty()) {
    opt.migrate_every_s = duration_option("--migrate-every", a.migrate_every);
    // Each check runs the placement policy on the whole cluster: a few thousand are minutes of planning.
    if (opt.duration_s / opt.migrate_every_s > 10000)
      throw UsageError("--migrate-every " + a.migrate_every + " checks more than 10000 times in --duration " +
                       a.duration + "; choose a longer interval (Prism re-plans every 5 minutes)");
  }
  opt.bucket_s = duration_option("--bucket", a.bucket);
  opt.seed = a.seed;
  opt.profile_tokens = a.profile_tokens;
  require_at_least("--profile-tokens", a.profile_tokens, 1);
  if (a.draw != "round-robin" && a.draw != "random")
    throw UsageError("--draw must be round-robin or random (got '" + a.draw + "')");
  opt.random_draw = a.draw == "random";
  opt.record_timeline = !a.timeline.empty();
  if (!a.timeline_window.empty()) {
    if (a.timeline.empty()) throw UsageError("--timeline-window needs --timeline FILE");
    timeline_window_option(a.timeline_window, opt);
  }
  check_output_writable(a.out);
  if (!a.timeline.empty()) check_output_writable(a.timeline);

  const ClusterSpec spec = load_cluster_spec(a.spec);
  const sim::ClusterInput in = sim::load_cluster_input(spec);
  Progress bar("cluster", static_cast<uint64_t>(std::ceil(opt.duration_s)), "simulated s");
  opt.on_progress = [&bar](double now) { bar.set(static_cast<uint64_t>(now)); };
  const sim::ClusterResult r = sim::run_cluster(in, opt);
  bar.finish();

  Json config;
  config["spec"] = a.spec;
  Json j = sim::cluster_result_json(in, opt, r);
  if (!a.timeline.empty()) sim::write_cluster_timeline(a.timeline, in, r);
  if (a.json) {
    Json out;
    out["header"] = run_header("cluster", config, a.seed);
    out["warnings"] = warnings_json();
    for (auto& [k, v] : j.items()) out[k] = v;
    write_json_file(a.out, out);
  } else {
    write_file_atomic(a.out, summary_text(in, j));
  }
}

void setup(CLI::App& app) {
  auto a = std::make_shared<ClusterArgs>();
  app.add_option("spec", a->spec, "SERVERS.json: the servers, their traces and arrivals, the network")->required();
  app.add_option("--placement", a->placement,
                 "expert placement policy (uniform, redundance, smartmoe, eplb, prism; see `moesim policies`)");
  app.add_option("--migrate-every", a->migrate_every,
                 "re-plan every interval and migrate when Prism's Eq. 4 holds (e.g. 5m; default: never)");
  app.add_option("--duration", a->duration, "requests arrive during this simulated time")->capture_default_str();
  app.add_option("--seed", a->seed, "seed of the arrivals, the random draws and the random placements")
      ->capture_default_str();
  app.add_option("--profile-tokens", a->profile_tokens,
                 "tokens per server (whole sequences from the start of its traces) the placement is planned on")
      ->capture_default_str();
  app.add_option("--draw", a->draw, "how a request picks its sequence: round-robin or random")->capture_default_str();
  app.add_option("--bucket", a->bucket, "time bucket of the local compute ratio over time")->capture_default_str();
  app.add_flag("--json", a->json, "print JSON (header, warnings, metrics) instead of a summary");
  app.add_option("-o,--output", a->out, "output file ('-' = standard output)")->capture_default_str();
  app.add_option("--timeline", a->timeline, "write a Chrome/Perfetto timeline: a process per server and per link");
  app.add_option("--timeline-window", a->timeline_window,
                 "keep only the timeline's slices that start in this simulated window, A:B (e.g. 0:2m)");
  app.callback([a] { execute(*a); });
}

}  // namespace

MOESIM_CLI_COMMAND("cluster", "Simulate MoE inference across edge servers with expert placement (Prism)", setup);

}  // namespace moesim::cli
