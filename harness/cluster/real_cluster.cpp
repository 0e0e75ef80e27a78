#include "harness/cluster/real_cluster.h"

#include <signal.h>
#include <stdlib.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <optional>
#include <thread>
#include <tuple>

#include "base/error.h"
#include "base/warnings.h"
#include "exec/cluster_control.h"
#include "exec/net_emulation.h"
#include "harness/cluster/cluster_binary.h"
#include "harness/cluster/cluster_rendezvous.h"
#include "sim/network.h"

namespace moesim::harness {
namespace {

// A server's calls over its control service.
class ControlCalls : public exec::ServerCalls {
 public:
  ControlCalls(const std::string& address, const std::string& secret, uint32_t self)
      : client_(address, secret), self_(self) {}
  // A local expert is an invocation of the server itself: its one work is the op.
  exec::CallTiming compute(uint32_t unit, uint32_t layer, uint32_t expert, uint32_t tokens) override {
    exec::CallTiming c = client_.invoke(self_, layer, {{expert, unit, tokens}});
    if (!c.works.empty()) std::tie(c.start, c.end) = c.works[0];
    c.works.clear();
    return c;
  }
  exec::CallTiming dense(uint32_t unit, uint32_t layer, uint32_t tokens) override {
    return client_.dense(unit, layer, tokens);
  }
  exec::CallTiming invoke(uint32_t peer, uint32_t layer,
                          const std::vector<std::array<uint32_t, 3>>& works) override {
    std::vector<exec::RemoteWork> w;
    for (const auto& x : works) w.push_back({x[0], x[1], x[2]});
    return client_.invoke(peer, layer, w);
  }
  exec::CallTiming push(uint32_t peer, uint32_t layer, uint32_t expert) override {
    return client_.push(peer, layer, expert);
  }
  void shutdown() { client_.shutdown_server(); }

 private:
  exec::ClusterControlClient client_;
  uint32_t self_;
};

exec::NetEmulationSpec emulation_spec(const serving::ClusterInput& in) {
  exec::NetEmulationSpec ns;
  ns.server_names = serving::server_names(in);
  const sim::Network net(ns.server_names, in.links);
  for (const ClusterLinkSpec& l : in.links)
    ns.links.push_back({l.a, l.b, l.params.bandwidth, l.params.latency});
  const auto N = static_cast<uint32_t>(in.servers.size());
  ns.next_hop.assign(N, std::vector<int>(N, -1));
  for (uint32_t a = 0; a < N; ++a)
    for (uint32_t b = 0; b < N; ++b)
      if (a != b) ns.next_hop[a][b] = static_cast<int>(net.links()[net.route(a, b)[0]].to);
  ns.run_id = exec::EmulatedNetwork::new_run_id();
  ns.control = true;
  return ns;
}

std::string tail_of(const std::string& path) {
  std::ifstream f(path);
  std::string all((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  return all.size() > 2000 ? all.substr(all.size() - 2000) : all;
}

// Bytes of every call on the links of its route (there and back), as the simulator counts them.
void add_link_bytes(const serving::ClusterInput& in, const std::vector<exec::ExecCallRecord>& records,
                    serving::ClusterResult& r) {
  const sim::Network net(serving::server_names(in), in.links);
  r.links.clear();
  for (const sim::DirectedLink& l : net.links()) r.links.push_back({l.from, l.to, 0, 0, 0});
  auto add = [&](uint32_t from, uint32_t to, uint64_t bytes) {
    for (uint32_t l : net.route(from, to)) {
      r.links[l].bytes += bytes;
      ++r.links[l].messages;
    }
  };
  for (const exec::ExecCallRecord& c : records) {
    if (c.kind == 2) {
      add(c.server, c.peer, c.bytes);
      add(c.peer, c.server, c.bytes);
    } else if (c.kind == 3) {
      add(c.server, c.peer, c.bytes);
    }
  }
}

// The servers of a netns launch: namespaces, processes, their folder and secret.
struct Launched {
  std::optional<exec::EmulatedNetwork> net;
  std::string dir, secret_file, secret;
  bool own_dir = false;
  int folder_slot = -1;  // the signal teardown's registration of our own folder
  Json platform;
  ~Launched() {
    if (net) net->teardown();
    exec::keep_folder_on_signal(folder_slot);
    std::error_code ec;
    if (own_dir) std::filesystem::remove_all(dir, ec);
  }
};

constexpr char kFolderPrefix[] = "moesim-cluster-";

// Rendezvous folders of runs whose process is gone (a run ended by a signal leaves its folder: the addresses
// and the servers' logs, never the secret).
void remove_stale_folders() {
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator("/tmp", ec)) {
    const std::string name = e.path().filename().string();
    if (name.rfind(kFolderPrefix, 0) != 0) continue;
    const pid_t owner = static_cast<pid_t>(std::atol(name.c_str() + std::strlen(kFolderPrefix)));
    if (owner > 0 && ::kill(owner, 0) != 0 && errno == ESRCH) std::filesystem::remove_all(e.path(), ec);
  }
}

void launch_netns(const std::string& spec_path, const serving::ClusterInput& in, const RealClusterArgs& a,
                  Launched& out) {
  if (std::string why = exec::EmulatedNetwork::unavailable_reason(); !why.empty())
    throw Error("cluster --platform exec: " + why +
                "; or start the servers yourself and run with --launch none (docs/cluster-exec.md)");
  exec::EmulatedNetwork::remove_stale();
  out.net.emplace(exec::EmulatedNetwork::create(emulation_spec(in)));
  exec::install_teardown_on_signals();
  exec::EmulatedNetwork& net = *out.net;
  if (a.rendezvous.empty()) {
    remove_stale_folders();
    std::string tmpl = "/tmp/" + std::string(kFolderPrefix) + std::to_string(::getpid()) + "-XXXXXX";
    if (!::mkdtemp(tmpl.data())) throw Error("cluster: cannot make a rendezvous folder in /tmp");
    out.dir = tmpl;
    out.own_dir = true;
    out.folder_slot = exec::remove_folder_on_signal(out.dir);  // a signal removes it with the namespaces
  } else {
    out.dir = a.rendezvous;
    std::filesystem::create_directories(out.dir);
  }
  // The secret goes to the servers in their environment, never to a file that a signal could leave behind.
  out.secret = new_secret();
  ::setenv(kSecretEnv, out.secret.c_str(), 1);
  const exec::CpuPlan plan = exec::cpu_plan(net.servers(), exec::allowed_cpus());
  if (plan.shared) warn("cluster --platform exec: " + plan.message);
  Json cpus = Json::array();
  for (uint32_t n = 0; n < net.servers(); ++n) {
    std::vector<std::string> argv = {a.moesim,         "-q",
                                     "cluster-server", spec_path,
                                     "--server",       in.servers[n].name,
                                     "--rendezvous",   out.dir,
                                     "--listen",       net.address(n) + ":7000",
                                     "--control",      net.control_address(n) + ":7001",
                                     "--seed",         std::to_string(a.weight_seed),
                                     "--max-tokens",   std::to_string(a.max_tokens)};
    if (!net.kernel_latency()) argv.emplace_back("--emulate-latency");
    if (!a.store.empty()) {
      argv.emplace_back("--store");
      argv.push_back(std::filesystem::absolute(a.store).string());
    }
    const std::string log = (std::filesystem::path(out.dir) / (in.servers[n].name + ".log")).string();
    try {
      net.spawn(n, argv, plan.cpus[n], {log, log});
    } catch (...) {
      ::unsetenv(kSecretEnv);
      throw;
    }
    cpus.push_back(plan.cpus[n]);
  }
  ::unsetenv(kSecretEnv);
  out.platform = {{"kind", "exec"}, {"launch", "netns"},           {"network", net.describe()},
                  {"cpus", cpus},   {"cores_shared", plan.shared}, {"rendezvous", out.dir}};
}

}  // namespace

// This is moesim-cluster (or the Python module), which has the real cluster: nothing to hand over.
void enter_cluster_binary() {}

RealClusterRun run_real_cluster(const std::string& spec_path, const serving::ClusterInput& in,
                                serving::ClusterOptions opt, const RealClusterArgs& a) {
  // --launch's values, and whether each starts the servers in network namespaces here.
  static const std::map<std::string, bool> kLaunches = {{"netns", true}, {"none", false}};
  const auto launch = kLaunches.find(a.launch);
  if (launch == kLaunches.end()) throw UsageError("--launch must be netns or none (got '" + a.launch + "')");
  Launched l;
  std::function<void()> check;
  if (launch->second) {
    launch_netns(spec_path, in, a, l);
    check = [&] {
      if (const auto e = l.net->wait_any(0))
        throw Error("cluster: " + in.servers[e->server].name + ": " + e->describe() + "; its log:\n" +
                    tail_of((std::filesystem::path(l.dir) / (in.servers[e->server].name + ".log")).string()));
    };
  } else {
    if (a.rendezvous.empty())
      throw UsageError("--launch none needs --rendezvous DIR, where the servers publish");
    l.dir = a.rendezvous;
    l.secret_file =
        a.secret_file.empty() ? (std::filesystem::path(l.dir) / "secret").string() : a.secret_file;
    l.platform = {{"kind", "exec"}, {"launch", "none"}, {"rendezvous", l.dir}};
    l.secret = read_secret_file(l.secret_file);
  }
  const std::string& secret = l.secret;
  const std::vector<std::string> controls =
      await_addresses(l.dir, serving::server_names(in), "control", a.ready_timeout_s, check);
  std::vector<exec::ExecClusterServer> servers;
  std::vector<std::shared_ptr<ControlCalls>> calls;
  std::vector<std::shared_ptr<exec::ServerCalls>> plain;
  for (uint32_t n = 0; n < in.servers.size(); ++n) {
    calls.push_back(std::make_shared<ControlCalls>(controls[n], secret, n));
    plain.push_back(calls.back());
    servers.push_back(
        {in.servers[n].name, a.hw.empty() ? in.servers[n].hw : a.hw.at(n), in.servers[n].gpus, calls.back()});
  }
  opt.activation_bytes = sizeof(float);  // the servers ship FP32 activations
  RealClusterRun run;
  if (a.before_serving) a.before_serving(plain);
  if (a.serve) {
    try {
      exec::ExecClusterPlatform platform(servers, in.links);
      run.result = serving::serve_cluster(in, opt, platform);
      run.records = platform.records();
    } catch (const Error& e) {
      // A call failed: when a server process died, say which, with its log, before the call's own words.
      for (int i = 0; check && i < 20; ++i) {
        try {
          check();
        } catch (const Error& dead) {
          throw Error(std::string(dead.what()) + "\n(the call that failed: " + e.what() + ")");
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
      }
      throw;
    }
  }
  for (const auto& c : calls) {
    try {
      c->shutdown();
    } catch (const Error&) {  // already gone: the teardown kills what is left
    }
  }
  add_link_bytes(in, run.records, run.result);
  run.platform = l.platform;
  return run;
}

}  // namespace moesim::harness
