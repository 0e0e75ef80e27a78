// `moesim cluster-server`: options and help; what it does is harness/cluster/cluster_server_job.h.
#include "cli/command.h"
#include "harness/cluster/cluster_server_job.h"

namespace moesim::cli {
namespace cluster_server_cmd {

void setup(CLI::App& app) {
  auto a = std::make_shared<ClusterServerArgs>();
  app.add_option("spec", a->spec, "SERVERS.json: the cluster this server is one of")->required();
  app.add_option("--server", a->server, "this server's name in SERVERS.json");
  app.add_option("--rank", a->rank, "this server's index in SERVERS.json (default: $SLURM_PROCID)");
  app.add_option("--rendezvous", a->rendezvous,
                 "folder every process of the run can read and write, where they publish their addresses");
  app.add_option("--secret-file", a->secret_file, "the run's shared secret, mode 600 (default: DIR/secret)");
  app.add_option("--listen", a->listen, "address of the expert service, which peers call")
      ->capture_default_str();
  app.add_option("--control", a->control,
                 "address of the control service, which the coordinator calls "
                 "(default: the --listen host, any port)");
  app.add_flag(
      "--emulate-latency", a->emulate_latency,
      "wait each route's latency in user space before sending and after a reply (links shaped by tbf)");
  app.add_option("--seed", a->seed, "seed of the synthetic weights")->capture_default_str();
  app.add_option("--store", a->store, "hold the experts of this store (`moesim pack` of the model) instead");
  app.add_option("--max-tokens", a->max_tokens, "tokens per request, which bounds every message")
      ->capture_default_str();
  app.add_option("--ready-timeout", a->ready_timeout, "how long to wait for the peers' addresses")
      ->capture_default_str();
  app.callback([a] { run_cluster_server(*a); });
}

}  // namespace cluster_server_cmd
MOESIM_CLI_COMMAND("cluster-server",
                   "One server process of a real cluster (started by `cluster --platform exec` or srun)",
                   cluster_server_cmd::setup);

}  // namespace moesim::cli
