// `moesim cluster`: options and help; what it does is harness/cluster/cluster_job.h.
#include "base/atomic_file.h"
#include "cli/command.h"
#include "cli/summary_json.h"
#include "harness/cluster/cluster_job.h"

namespace moesim::cli {
namespace cluster_cmd {

void setup(CLI::App& app) {
  auto a = std::make_shared<ClusterArgs>();
  app.add_option("spec", a->spec, "SERVERS.json: the servers, their traces and arrivals, the network")
      ->required();
  app.add_option(
      "--placement", a->placement,
      "expert placement policy (uniform, redundance, smartmoe, eplb, prism; see `moesim policies`); required "
      "by a system that places experts (prism), refused by one that does not (moe-infinity)");
  add_system_option(app, a->system, "the cluster system serving the requests (`moesim policies`)");
  app.add_option("--migrate-every", a->migrate_every,
                 "re-plan every interval and migrate when Prism's Eq. 4 holds (e.g. 5m; default: never)");
  app.add_option(
      "--duration", a->duration,
      "requests arrive during this time (simulated; real with --platform exec) [default: 30m for sim]");
  app.add_option(
         "--platform", a->platform,
         "sim (simulated time) or exec (real server processes: an emulated cluster, or servers started "
         "by a launcher)")
      ->capture_default_str();
  app.add_option(
         "--launch", a->launch,
         "with --platform exec: netns (start each server here in its own network namespace; root) or none "
         "(servers started by srun or another launcher publish in --rendezvous)")
      ->capture_default_str();
  app.add_option("--rendezvous", a->rendezvous,
                 "with --platform exec: the folder where the servers publish their addresses");
  app.add_option("--secret-file", a->secret_file,
                 "with --launch none: the run's secret (default: DIR/secret)");
  app.add_option("--seed", a->seed, "seed of the arrivals, the random draws and the random placements")
      ->capture_default_str();
  app.add_option(
         "--profile-tokens", a->profile_tokens,
         "tokens per server (whole sequences from the start of its traces) the placement is planned on")
      ->capture_default_str();
  app.add_option("--draw", a->draw, "how a request picks its sequence: round-robin or random")
      ->capture_default_str();
  app.add_option("--bucket", a->bucket, "time bucket of the local compute ratio over time")
      ->capture_default_str();
  app.add_flag("--json", a->json, "print JSON (header, warnings, metrics) instead of a summary");
  app.add_option("-o,--output", a->out, "output file ('-' = standard output)")->capture_default_str();
  app.add_option("--timeline", a->timeline,
                 "write a Chrome/Perfetto timeline: a process per server and per link");
  app.add_option(
      "--plot", a->plot,
      "draw the mean latency and the local compute ratio over time, by --bucket (PNG, PDF or SVG by "
      "extension; python3-matplotlib)");
  app.add_option("--timeline-window", a->timeline_window,
                 "keep only the timeline's slices that start in this simulated window, A:B (e.g. 0:2m)");
  app.callback([a] { write_file_atomic(a->out, cluster_output(*a)); });
}

}  // namespace cluster_cmd
MOESIM_CLI_COMMAND("cluster", "Simulate MoE inference across edge servers with expert placement (Prism)",
                   cluster_cmd::setup);

}  // namespace moesim::cli
