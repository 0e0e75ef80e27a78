#include "harness/cluster/cluster_server_job.h"

#include <stdlib.h>

#include <cstdlib>
#include <filesystem>
#include <future>

#include "base/error.h"
#include "core/cluster_spec.h"
#include "core/model_spec.h"
#include "exec/cluster_control.h"
#include "exec/expert_service.h"
#include "harness/cluster/cluster_rendezvous.h"
#include "serving/cluster_serving.h"
#include "sim/network.h"

namespace moesim::harness {
namespace {

uint32_t server_index(const ClusterSpec& spec, const ClusterServerArgs& a) {
  if (!a.server.empty()) {
    for (size_t i = 0; i < spec.servers.size(); ++i)
      if (spec.servers[i].name == a.server) return static_cast<uint32_t>(i);
    throw UsageError("--server: " + spec.origin + " has no server \"" + a.server + "\"");
  }
  int64_t rank = a.rank;
  if (rank < 0) {
    const char* env = std::getenv("SLURM_PROCID");
    if (!env)
      throw UsageError(
          "name the server: --server NAME or --rank N (or run under srun, which sets SLURM_PROCID)");
    rank = std::strtoll(env, nullptr, 10);
  }
  if (rank < 0 || static_cast<size_t>(rank) >= spec.servers.size())
    throw UsageError("rank " + std::to_string(rank) + ": " + spec.origin + " has " +
                     std::to_string(spec.servers.size()) + " servers");
  return static_cast<uint32_t>(rank);
}

// The route latency from `self` to every server (0 to itself), for links whose kernel adds none.
std::vector<double> route_latencies(const ClusterSpec& spec, uint32_t self) {
  std::vector<std::string> names;
  for (const auto& s : spec.servers) names.push_back(s.name);
  const sim::Network net(names, spec.topology());
  std::vector<double> out;
  for (uint32_t t = 0; t < names.size(); ++t) out.push_back(net.route_latency(self, t));
  return out;
}

// Default control address: the listen address's host, any port.
std::string control_default(const std::string& listen) {
  return listen.substr(0, listen.rfind(':')) + ":0";
}

}  // namespace

void run_cluster_server(const ClusterServerArgs& a) {
  if (a.rendezvous.empty()) throw UsageError("--rendezvous DIR is required (where the run's processes meet)");
  const ClusterSpec spec = load_cluster_spec(a.spec);
  const uint32_t self = server_index(spec, a);
  std::string secret;
  if (const char* env = std::getenv(kSecretEnv); env && a.secret_file.empty() && *env) {
    secret = env;
    ::unsetenv(kSecretEnv);
  } else {
    secret = read_secret_file(
        a.secret_file.empty() ? (std::filesystem::path(a.rendezvous) / "secret").string() : a.secret_file);
  }
  const double ready_timeout = parse_duration(a.ready_timeout);
  const ModelSpec model = serving::cluster_model(spec);
  exec::ModelShape shape{model.moe_layers, model.routed_experts, static_cast<uint32_t>(model.hidden_size),
                         static_cast<uint32_t>(model.expert_intermediate_size)};
  std::vector<exec::ExpertKey> all;
  for (uint32_t l = 0; l < shape.layers; ++l)
    for (uint32_t e = 0; e < shape.experts; ++e) all.emplace_back(l, e);
  exec::ExpertServerOptions eo;
  eo.address = a.listen;
  eo.secret = secret;
  eo.units = spec.servers[self].gpus;
  eo.max_tokens = a.max_tokens;
  exec::ExpertServer experts(a.store.empty() ? exec::synth_expert_weights(shape, all, a.seed)
                                             : exec::store_expert_weights(a.store, shape, all),
                             eo);
  const std::string& name = spec.servers[self].name;
  publish_address(a.rendezvous, name, "experts", experts.address());

  std::vector<std::string> names;
  for (const auto& s : spec.servers) names.push_back(s.name);
  exec::ClusterControlOptions co;
  co.address = a.control.empty() ? control_default(a.listen) : a.control;
  co.secret = secret;
  co.self = self;
  co.peers = await_addresses(a.rendezvous, names, "experts", ready_timeout);
  if (a.emulate_latency) co.peer_latency_s = route_latencies(spec, self);
  const uint64_t dense_elements = model.dense_elements_per_layer();
  co.dense_rows = model.hidden_size;
  co.dense_cols = model.hidden_size > 0 ? dense_elements / model.hidden_size : 0;
  co.seed = a.seed;
  co.max_tokens = a.max_tokens;
  std::promise<void> done;
  std::once_flag once;
  co.on_shutdown = [&] { std::call_once(once, [&] { done.set_value(); }); };
  exec::ClusterControl control(experts, co);
  publish_address(a.rendezvous, name, "control", control.address());
  done.get_future().wait();
  control.shutdown();
  experts.shutdown();
}

}  // namespace moesim::harness
