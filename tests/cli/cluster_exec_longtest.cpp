// `moesim cluster --platform exec` when a run ends early (docs/cluster-exec.md, teardown guarantees): a
// server killed mid-run makes the coordinator fail within seconds, naming it; SIGINT or SIGTERM to the
// coordinator ends it by that signal. Either way the run's namespaces, veths, server processes and
// temporary folder are gone when the coordinator has exited. Root only (network namespaces).
#include <fcntl.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <string>
#include <vector>

#include "base/json_io.h"
#include "cluster_exec_util.h"

namespace moesim::test {
namespace {

using ::testing::AnyOf;
using ::testing::HasSubstr;

// A coordinator running in the background: `moesim cluster SPEC --platform exec --duration 30s`.
struct Coordinator {
  pid_t pid = -1;
  std::string err_path;
  int status = 0;
  bool ended = false;
  // Waits up to timeout_s for it to end (true when it has).
  bool wait(double timeout_s) {
    ended = eventually(timeout_s, [&] { return ::waitpid(pid, &status, WNOHANG) == pid; });
    return ended;
  }
  ~Coordinator() {
    if (pid > 0 && !ended) {
      ::kill(pid, SIGKILL);
      ::waitpid(pid, &status, 0);
    }
  }
};

void start_coordinator(const ExecCluster& c, Coordinator& co) {
  co.err_path = (c.dir / "coordinator.err").string();
  const std::string command = std::string("exec ") + MOESIM_CLI_PATH + " -q cluster " + c.spec +
                              " --placement prism --platform exec --duration 30s --json -o " +
                              (c.dir / "out.json").string() + " 2> " + co.err_path;
  co.pid = ::fork();
  if (co.pid == 0) {
    ::execl("/bin/sh", "sh", "-c", command.c_str(), static_cast<char*>(nullptr));
    ::_exit(127);
  }
}

// The --rendezvous folder on a process's command line ("" when it has none).
std::string rendezvous_of(pid_t pid) {
  const std::string cmdline = read_text("/proc/" + std::to_string(pid) + "/cmdline");
  std::vector<std::string> args;
  for (size_t at = 0, end; at < cmdline.size(); at = end + 1) {
    end = cmdline.find('\0', at);
    if (end == std::string::npos) end = cmdline.size();
    args.push_back(cmdline.substr(at, end - at));
  }
  for (size_t i = 0; i + 1 < args.size(); ++i)
    if (args[i] == "--rendezvous") return args[i + 1];
  return "";
}

// Requests every 0.2 s for the whole 30 s, so that every server has calls in flight at any moment.
std::vector<double> busy_arrivals() {
  std::vector<double> t;
  for (double s = 0.1; s < 29.5; s += 0.2) t.push_back(s);
  return t;
}

// Starts a run and waits until it serves: its three servers up and each one's control address published,
// which they do once they have all their peers. Returns the run's folder ("" on failure).
std::string start_serving_run(const ExecCluster& c, Coordinator& co, RunCleanup& cleanup) {
  start_coordinator(c, co);
  cleanup.run_id = std::to_string(co.pid) + ".0";  // the coordinator's first network (exec/net_emulation.h)
  std::string dir;
  const bool serving = eventually(60, [&] {
    const std::vector<pid_t> servers = cluster_servers_of(c.spec);
    if (servers.size() != 3) return false;
    dir = rendezvous_of(servers[0]);
    for (const char* s : {"a", "b", "c"})
      if (dir.empty() || !std::filesystem::exists(std::filesystem::path(dir) / (std::string(s) + ".control")))
        return false;
    return true;
  });
  cleanup.rendezvous = dir;
  return serving ? dir : "";
}

struct KilledServerRun {
  pid_t killed = -1;
  bool ended = false;
  int status = 0;
  double exit_after_s = 0;
  std::string err, left;
};

// SIGKILL to server b of a serving run, then waits for the coordinator.
KilledServerRun kill_server_mid_run(const std::string& test) {
  const ExecCluster c = make_exec_cluster(test, busy_arrivals());
  const EmulatedRunLock lock;
  RunCleanup cleanup{c.spec, "", ""};
  Coordinator co;
  KilledServerRun k;
  const std::string dir = start_serving_run(c, co, cleanup);
  if (dir.empty()) {
    k.err = "the run never served: " + read_text(co.err_path);
    return k;
  }
  const std::vector<pid_t> b = cluster_servers_of(c.spec, "b");
  if (b.size() != 1) return k;
  k.killed = b[0];
  const auto t0 = std::chrono::steady_clock::now();
  ::kill(k.killed, SIGKILL);
  k.ended = co.wait(10);
  k.exit_after_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  k.status = co.status;
  k.err = read_text(co.err_path);
  if (k.ended) k.left = leftovers(c.spec, cleanup.run_id, dir);
  std::filesystem::remove_all(c.dir);
  return k;
}

#define SKIP_WITHOUT_NAMESPACES() \
  if (const std::string why = exec::EmulatedNetwork::unavailable_reason(); !why.empty()) GTEST_SKIP() << why

TEST(ClusterExecTeardown, ServerKilledMidRunFailsTheRunAndLeavesNothing) {
  SKIP_WITHOUT_NAMESPACES();
  const KilledServerRun k = kill_server_mid_run("killed");
  ASSERT_GT(k.killed, 0) << k.err;
  ASSERT_TRUE(k.ended) << "the coordinator still runs 10 s after its server b died: " << k.err;
  EXPECT_TRUE(WIFEXITED(k.status) && WEXITSTATUS(k.status) == 1)
      << "wait status " << k.status << ": " << k.err;
  EXPECT_LT(k.exit_after_s, 5.0);
  // Server b is index 1: its expert service listens on 10.255.0.1:7000, its control on 10.254.0.3:7001; a
  // call to either fails. Killed before the coordinator saw every address, b is named by its exit instead.
  EXPECT_THAT(k.err, AnyOf(HasSubstr("10.255.0.1:7000"), HasSubstr("10.254.0.3:7001"),
                           HasSubstr("b: server 1 (pid " + std::to_string(k.killed) + ")")));
  EXPECT_EQ(k.left, "");
}

// The failed call is often a peer's call to b, from server a's control: the run says which server died and
// how (harness/cluster/real_cluster.cpp checks the servers' exits when a call fails), then the call.
TEST(ClusterExecTeardown, ServerKilledMidRunIsNamedWithItsExit) {
  SKIP_WITHOUT_NAMESPACES();
  const KilledServerRun k = kill_server_mid_run("killed_named");
  ASSERT_TRUE(k.ended) << k.err;
  EXPECT_THAT(k.err, HasSubstr("b: server 1 (pid " + std::to_string(k.killed) + ") was killed by signal 9"));
}

struct SignalledRun {
  bool served = false, ended = false, folder_left = false;
  int status = 0;
  std::string err, spec, run_id, dir;
};

// SIGNAL to the coordinator of a serving run, then waits for it.
SignalledRun signal_mid_run(int sig) {
  const ExecCluster c = make_exec_cluster("signal_" + std::to_string(sig), busy_arrivals());
  const EmulatedRunLock lock;
  RunCleanup cleanup{c.spec, "", ""};
  Coordinator co;
  SignalledRun s;
  s.dir = start_serving_run(c, co, cleanup);
  s.served = !s.dir.empty();
  if (s.served) {
    ::kill(co.pid, sig);
    s.ended = co.wait(10);
    s.status = co.status;
    s.folder_left = std::filesystem::exists(s.dir);  // before the clean-up removes it
  }
  s.err = read_text(co.err_path);
  s.spec = c.spec;
  s.run_id = cleanup.run_id;
  return s;
}

class ClusterExecSignal : public ::testing::TestWithParam<int> {};

TEST_P(ClusterExecSignal, CoordinatorEndsByTheSignalAndTearsDown) {
  SKIP_WITHOUT_NAMESPACES();
  const int sig = GetParam();
  const SignalledRun s = signal_mid_run(sig);
  ASSERT_TRUE(s.served) << "the run never served: " << s.err;
  ASSERT_TRUE(s.ended) << "the coordinator still runs 10 s after signal " << sig;
  EXPECT_TRUE(WIFSIGNALED(s.status) && WTERMSIG(s.status) == sig)
      << "wait status " << s.status << ": " << s.err;
  EXPECT_TRUE(exec::EmulatedNetwork::list_namespaces(s.run_id + "-").empty());
  EXPECT_TRUE(cluster_servers_of(s.spec).empty());
  // The signal handler deletes the namespaces; the kernel removes the control links' root ends after them,
  // from a work queue (exec/net_emulation.cpp), so they may outlive the coordinator by a moment.
  EXPECT_TRUE(eventually(
      5, [&] { return root_interfaces_with(exec::EmulatedNetwork::veth_prefix(s.run_id)).empty(); }));
  std::filesystem::remove_all(std::filesystem::path(s.spec).parent_path());
}

// The signal handler removes the run's temporary folder (its addresses and the servers' logs) with the
// network.
TEST_P(ClusterExecSignal, CoordinatorRemovesItsFolderOnTheSignal) {
  SKIP_WITHOUT_NAMESPACES();
  const SignalledRun s = signal_mid_run(GetParam());
  ASSERT_TRUE(s.ended) << s.err;
  EXPECT_FALSE(s.folder_left) << s.dir;
  std::filesystem::remove_all(std::filesystem::path(s.spec).parent_path());
}

// Poisson arrivals in real time: each next arrival is drawn from the time the previous one was due, not from
// when a real clock woke for it, so the run keeps every arrival of the same seed simulated (chaining off the
// platform's now() lost 15 of 436 in one 3 s run).
TEST(ClusterExecArrivals, PoissonArrivalsKeepTheirTimesInRealTime) {
  SKIP_WITHOUT_NAMESPACES();
  const ExecCluster c = make_exec_cluster("poisson", {}, "poisson:20ms");
  const EmulatedRunLock lock;
  RunCleanup cleanup{c.spec, "", ""};
  const std::string args = "-q cluster " + c.spec + " --placement prism --duration 3s --json -o ";
  const CliResult real = moesim_cli(args + (c.dir / "exec.json").string() + " --platform exec");
  ASSERT_EQ(real.code, 0) << real.err;
  const Json r = load_json_file((c.dir / "exec.json").string());
  cleanup.run_id = r["platform"]["network"]["run_id"].get<std::string>();
  const CliResult sim = moesim_cli(args + (c.dir / "sim.json").string());
  ASSERT_EQ(sim.code, 0) << sim.err;
  EXPECT_EQ(r["requests"], load_json_file((c.dir / "sim.json").string())["requests"]);
  std::filesystem::remove_all(c.dir);
}

// Two emulated runs at once: the control links' root ends share the root namespace, so each run takes a block
// of addresses no live run holds; with the same addresses one coordinator reached the other run's servers and
// was refused for its secret.
TEST(ClusterExecConcurrent, TwoRunsAtOnceEachServeTheirOwn) {
  SKIP_WITHOUT_NAMESPACES();
  const ExecCluster c1 = make_exec_cluster("concurrent_1", {0.1, 0.6, 1.1});
  const ExecCluster c2 = make_exec_cluster("concurrent_2", {0.1, 0.6, 1.1});
  const EmulatedRunLock lock;
  RunCleanup clean1{c1.spec, "", ""}, clean2{c2.spec, "", ""};
  auto command = [](const ExecCluster& c) {
    return std::string(MOESIM_CLI_PATH) + " -q cluster " + c.spec +
           " --placement prism --platform exec --duration 2s -o " + (c.dir / "out.txt").string() + " 2> " +
           (c.dir / "err.txt").string() + "; echo $? > " + (c.dir / "rc").string();
  };
  ASSERT_EQ(run_shell("(" + command(c1) + ") & (" + command(c2) + ") & wait").status, 0);
  for (const ExecCluster* c : {&c1, &c2})
    EXPECT_EQ(read_text((c->dir / "rc").string()), "0\n") << read_text((c->dir / "err.txt").string());
  std::filesystem::remove_all(c1.dir);
  std::filesystem::remove_all(c2.dir);
}

INSTANTIATE_TEST_SUITE_P(Signals, ClusterExecSignal, ::testing::Values(SIGINT, SIGTERM),
                         [](const ::testing::TestParamInfo<int>& p) {
                           return p.param == SIGINT ? "SIGINT" : "SIGTERM";
                         });

}  // namespace
}  // namespace moesim::test
