// Real-cluster CLI tests (`moesim cluster --platform exec`, docs/cluster-exec.md): a 3-server tiny-moe spec
// with arrivals at fixed times, and what a run may leave behind (its namespaces, its root-side
// veths, its server processes, its rendezvous folder), which a test checks after the run and removes itself
// when a run failed half-way, so that a failing test does not leave a mess for the next test.
#pragma once

#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "cli_test_util.h"
#include "exec/net_emulation.h"
#include "tests/fixtures.h"

namespace moesim::test {

struct ExecCluster {
  std::filesystem::path dir;
  std::string spec;  // its path is unique to the test: `pgrep -f SPEC` finds this test's servers only
};

// Servers a (1 GPU), b (1 GPU), c (2 GPUs) on tiny-moe with synthetic traces. Each server's requests arrive
// at `arrivals` (seconds), shifted a little per server: fixed times rather than Poisson ones, so that the
// simulated and the real run serve the same requests whatever the real run's timing. A non-empty `arrival`
// ("poisson:20ms") is every server's instead.
inline ExecCluster make_exec_cluster(const std::string& test, const std::vector<double>& arrivals,
                                     const std::string& arrival = "") {
  ExecCluster c;
  c.dir = fresh_test_dir("moesim_cluster_exec", test);
  const std::string model = test::test_data("models/tiny-moe.json");
  const char* names[] = {"a", "b", "c"};
  for (int s = 0; s < 3; ++s) {
    const std::string trace = (c.dir / (std::string(names[s]) + ".mtr")).string();
    const ShellResult r = moesim_combined("-q trace synth --model " + model +
                                          " --zipf 1.0 --sequences 12 --prompt-tokens 16 --tokens 8 --seed " +
                                          std::to_string(s + 1) + " -o " + trace);
    if (r.status != 0) throw std::runtime_error("trace synth failed: " + r.out);
    std::ofstream times(c.dir / (std::string(names[s]) + ".times"));
    for (double t : arrivals) times << t + 0.05 * s << "\n";
  }
  c.spec = (c.dir / "servers.json").string();
  auto arrival_of = [&](const std::string& s) {
    return arrival.empty() ? "timestamps:" + s + ".times" : arrival;
  };
  std::ofstream(c.spec) << R"({"model": ")" << model
                        << R"(", "network": {"bandwidth": "100Mbit/s", "latency": "2ms"},
    "servers": [
      {"name": "a", "hw": "desktop-rtx4090", "gpus": 1, "gpu_memory": "8MiB", "traces": ["a.mtr"], "arrival": ")"
                        << arrival_of("a") << R"("},
      {"name": "b", "hw": "desktop-rtx4090", "gpus": 1, "gpu_memory": "8MiB", "traces": ["b.mtr"], "arrival": ")"
                        << arrival_of("b") << R"("},
      {"name": "c", "hw": "desktop-rtx4090", "gpus": 2, "gpu_memory": "8MiB", "traces": ["c.mtr"], "arrival": ")"
                        << arrival_of("c") << R"("}]}
)";
  return c;
}

// The pids of the `cluster-server` processes serving `spec` (their command line names it). The pattern's
// "[ ]" keeps the shell that runs pgrep, whose own command line holds the pattern, from matching it.
inline std::vector<pid_t> cluster_servers_of(const std::string& spec, const std::string& server = "") {
  const ShellResult r = run_shell("pgrep -f -- 'cluster-server[ ]" + spec +
                                  (server.empty() ? "" : "[ ]--server[ ]" + server) + "'");
  std::vector<pid_t> pids;
  std::istringstream in(r.out);
  for (long p; in >> p;) pids.push_back(static_cast<pid_t>(p));
  return pids;
}

// The root namespace's interfaces whose name starts with `prefix`.
inline std::vector<std::string> root_interfaces_with(const std::string& prefix) {
  std::vector<std::string> out;
  for (const auto& e : std::filesystem::directory_iterator("/sys/class/net"))
    if (e.path().filename().string().rfind(prefix, 0) == 0) out.push_back(e.path().filename().string());
  return out;
}

// What one run left behind: "" when nothing; otherwise each leftover, one a line. `run_id` is the run's
// (exec/net_emulation.h: "<coordinator pid>.0" for a coordinator's first run), `rendezvous` its folder ("" to
// skip that check).
inline std::string leftovers(const std::string& spec, const std::string& run_id,
                             const std::string& rendezvous) {
  std::string out;
  for (const auto& ns : exec::EmulatedNetwork::list_namespaces(run_id + "-")) out += "namespace " + ns + "\n";
  for (const auto& i : root_interfaces_with(exec::EmulatedNetwork::veth_prefix(run_id)))
    out += "interface " + i + "\n";
  for (pid_t p : cluster_servers_of(spec)) out += "cluster-server pid " + std::to_string(p) + "\n";
  if (!rendezvous.empty() && std::filesystem::exists(rendezvous)) out += "folder " + rendezvous + "\n";
  return out;
}

// Waits up to timeout_s for `what` to hold, polling every 50 ms.
template <class F>
bool eventually(double timeout_s, F what) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
  for (;;) {
    if (what()) return true;
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
}

// Removes whatever a run of `spec` left, whether the test passed or not: its servers, the run's namespaces
// (and with them its veths) and its folder. A run id or folder learnt during the test is set on the guard.
struct RunCleanup {
  std::string spec, run_id, rendezvous;
  ~RunCleanup() {
    for (pid_t p : cluster_servers_of(spec)) ::kill(p, SIGKILL);
    if (!run_id.empty()) exec::EmulatedNetwork::remove_run(run_id);
    std::error_code ec;
    if (!rendezvous.empty()) std::filesystem::remove_all(rendezvous, ec);
  }
};

// Held by a test while its emulated runs exist: runs at once work (ClusterExecConcurrent), but on a 2-core CI
// machine they take each other's cores, and the tests' timeouts (a killed server named within 5 s) are for
// one run at a time; ctest runs these binaries in parallel.
struct EmulatedRunLock {
  int fd = ::open("/tmp/moesim-tests-emulated-run.lock", O_CREAT | O_RDWR | O_CLOEXEC, 0600);
  EmulatedRunLock() {
    if (fd >= 0) ::flock(fd, LOCK_EX);
  }
  ~EmulatedRunLock() {
    if (fd >= 0) ::close(fd);
  }
  EmulatedRunLock(const EmulatedRunLock&) = delete;
  EmulatedRunLock& operator=(const EmulatedRunLock&) = delete;
};

}  // namespace moesim::test
