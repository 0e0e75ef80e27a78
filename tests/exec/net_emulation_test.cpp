// exec/net_emulation.h: namespaces joined by shaped veths, routes over next_hop, server processes in their
// namespaces, and teardown on every exit path. The network tests need root and iproute2; elsewhere they skip
// with EmulatedNetwork::unavailable_reason(). Socket work runs in forked children that join a namespace.
#include "exec/net_emulation.h"

#include <sched.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "base/error.h"
#include "tests/exec/exec_test_util.h"
#include "tests/exec/net_emulation_test_util.h"

namespace moesim::exec {
namespace {

using NetEmulation = testing::NetEmulationFixture;
using testing::alive;
using testing::full_mesh;
using testing::in_namespace;
using testing::interfaces_with;
using testing::line;
using testing::transfer;
using testing::Transfer;
using testing::wait_exit_code;

TEST_F(NetEmulation, FullMeshConnectsEveryPairAndTeardownRemovesEverything) {
  const std::string run = new_run();
  EmulatedNetwork net = EmulatedNetwork::create(full_mesh(3, run));
  EXPECT_EQ(EmulatedNetwork::list_namespaces(run + "-").size(), 3u);
  const std::string vp = EmulatedNetwork::veth_prefix(run);
  // Each server holds its two ends of the mesh's links, none of which is in the root namespace.
  EXPECT_EQ(wait_exit_code(in_namespace(net.ns_name(0), [&] { return interfaces_with(vp); })), 2);
  EXPECT_EQ(interfaces_with(vp), 0);
  for (uint32_t a = 0; a < 3; ++a)
    for (uint32_t b = 0; b < 3; ++b) {
      if (a == b) continue;
      Transfer t = transfer(net, a, b, 1000);
      EXPECT_EQ(t.sender_exit, 0) << a << " -> " << b;
      EXPECT_EQ(t.received, 1000u) << a << " -> " << b;
    }
  const Json d = net.describe();
  EXPECT_EQ(d["links"].size(), 3u);
  EXPECT_EQ(d["kernel_latency"].get<bool>(), d["qdisc"] == "netem");
  net.teardown();
  net.teardown();  // idempotent
  expect_nothing_left(run);
}

// The control links join the root namespace (a coordinator) to each server, unshaped, and go with the run.
TEST_F(NetEmulation, ControlLinksReachEachServerFromTheRootNamespace) {
  const std::string run = new_run();
  NetEmulationSpec spec = full_mesh(2, run);
  spec.control = true;
  EmulatedNetwork net = EmulatedNetwork::create(spec);
  EXPECT_EQ(net.control_address(0).rfind("10.254.", 0), 0u);
  EXPECT_NE(net.control_address(0), net.control_address(1));
  // A second run at once takes control addresses of its own (they share the root namespace).
  const std::string run2 = new_run();
  NetEmulationSpec spec2 = full_mesh(2, run2);
  spec2.control = true;
  EmulatedNetwork other = EmulatedNetwork::create(spec2);
  EXPECT_NE(other.control_address(0), net.control_address(0));
  other.teardown();
  int ready[2];
  ASSERT_EQ(::pipe(ready), 0);
  const sockaddr_in at = testing::address_of(net.control_address(1));
  const pid_t listener = in_namespace(net.ns_name(1), [&] {
    const int s = ::socket(AF_INET, SOCK_STREAM, 0);
    const int one = 1;
    ::setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (::bind(s, reinterpret_cast<const sockaddr*>(&at), sizeof at) != 0 || ::listen(s, 1) != 0) return 1;
    (void)!::write(ready[1], "r", 1);
    const int c = ::accept(s, nullptr, nullptr);
    char buf[16];
    return c >= 0 && ::read(c, buf, sizeof buf) == 5 ? 0 : 2;
  });
  char r = 0;
  ASSERT_EQ(::read(ready[0], &r, 1), 1);
  const int c = ::socket(AF_INET, SOCK_STREAM, 0);
  ASSERT_EQ(::connect(c, reinterpret_cast<const sockaddr*>(&at), sizeof at), 0) << std::strerror(errno);
  ASSERT_EQ(::write(c, "hello", 5), 5);
  ::close(c);
  EXPECT_EQ(wait_exit_code(listener), 0);
  const std::string vp = EmulatedNetwork::veth_prefix(run);
  EXPECT_EQ(interfaces_with(vp), 2);  // the root ends of the two control links
  net.teardown();
  expect_nothing_left(run);
  ::close(ready[0]);
  ::close(ready[1]);
}

TEST_F(NetEmulation, ChainRoutesThroughTheMiddleServer) {
  const std::string run = new_run();
  EmulatedNetwork net = EmulatedNetwork::create(line(3, run));
  Transfer ac = transfer(net, 0, 2, 5000);
  EXPECT_EQ(ac.received, 5000u);
  Transfer ca = transfer(net, 2, 0, 5000);
  EXPECT_EQ(ca.received, 5000u);
  // Server a has one link only: c's address is reached through b.
  EXPECT_EQ(wait_exit_code(in_namespace(net.ns_name(0), [&] { return interfaces_with(EmulatedNetwork::veth_prefix(run)); })), 1);
}

TEST_F(NetEmulation, LinkBandwidthIsShaped) {
  const std::string run = new_run();
  const double bandwidth = 20e6 / 8;  // 20 Mbit/s
  EmulatedNetwork net = EmulatedNetwork::create(full_mesh(2, run, bandwidth));
  const uint64_t bytes = 2000000;
  Transfer t = transfer(net, 0, 1, bytes);
  ASSERT_EQ(t.received, bytes);
  // A lower bound only: unshaped, a veth moves 2 MB in milliseconds.
  EXPECT_GE(t.seconds, 0.75 * static_cast<double>(bytes) / bandwidth) << net.describe().dump();
  EXPECT_EQ(net.kernel_latency(), net.describe()["qdisc"] == "netem");
}

TEST_F(NetEmulation, ServersRunInTheirNamespacesAndADeadOneIsReported) {
  const std::string run = new_run();
  EmulatedNetwork net = EmulatedNetwork::create(full_mesh(3, run));
  const CpuPlan plan = cpu_plan(3, allowed_cpus());
  std::vector<pid_t> pids;
  for (uint32_t s = 0; s < 3; ++s) pids.push_back(net.spawn(s, {"sleep", "60"}, plan.cpus[s]));
  for (uint32_t s = 0; s < 3; ++s) {
    struct stat ns{}, proc{};
    ASSERT_EQ(::stat(("/var/run/netns/" + net.ns_name(s)).c_str(), &ns), 0);
    ASSERT_EQ(::stat(("/proc/" + std::to_string(pids[s]) + "/ns/net").c_str(), &proc), 0);
    EXPECT_EQ(ns.st_ino, proc.st_ino) << "server " << s;
    cpu_set_t set;
    ASSERT_EQ(::sched_getaffinity(pids[s], sizeof set, &set), 0);
    EXPECT_EQ(CPU_COUNT(&set), static_cast<int>(plan.cpus[s].size()));
    for (int c : plan.cpus[s]) EXPECT_TRUE(CPU_ISSET(c, &set)) << "server " << s << " cpu " << c;
  }
  EXPECT_FALSE(net.wait_any(0.05).has_value());
  ::kill(pids[1], SIGKILL);
  auto dead = net.wait_any(10);
  ASSERT_TRUE(dead.has_value());
  EXPECT_EQ(dead->pid, pids[1]);
  EXPECT_EQ(dead->server, 1u);
  EXPECT_TRUE(WIFSIGNALED(dead->status) && WTERMSIG(dead->status) == SIGKILL) << dead->describe();
  EXPECT_EQ(net.running().size(), 2u);
  EXPECT_EQ(net.kill_all(5).size(), 2u);
  net.teardown();
  for (pid_t p : pids) EXPECT_FALSE(alive(p)) << p;
  expect_nothing_left(run);
}

TEST_F(NetEmulation, SpawnedOutputGoesToTheFilesGiven) {
  EmulatedNetwork net = EmulatedNetwork::create(full_mesh(2, new_run()));
  testing::TempDir dir("net_emulation_output");
  net.spawn(1, {"sh", "-c", "readlink /proc/self/ns/net; echo to-stderr >&2; exit 3"}, {},
            {dir.file("out"), dir.file("err")});
  auto e = net.wait_any(10);
  ASSERT_TRUE(e.has_value());
  EXPECT_TRUE(WIFEXITED(e->status) && WEXITSTATUS(e->status) == 3) << e->describe();
  struct stat ns{};
  ASSERT_EQ(::stat(("/var/run/netns/" + net.ns_name(1)).c_str(), &ns), 0);
  std::string out, err;
  std::getline(std::ifstream(dir.file("out")), out);
  std::getline(std::ifstream(dir.file("err")), err);
  EXPECT_EQ(out, "net:[" + std::to_string(ns.st_ino) + "]");  // the shell ran in server 1's namespace
  EXPECT_EQ(err, "to-stderr");
}

TEST_F(NetEmulation, SpawnFailuresNameTheStep) {
  EmulatedNetwork net = EmulatedNetwork::create(full_mesh(2, new_run()));
  try {
    net.spawn(0, {"/nonexistent/server"}, {});
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("execv of /nonexistent/server failed"), std::string::npos) << e.what();
  }
  EXPECT_THROW(net.spawn(2, {"sleep", "1"}, {}), Error);
  EXPECT_TRUE(net.running().empty());
}

TEST_F(NetEmulation, AFailedCommandIsNamedAndWhatWasMadeIsRemoved) {
  // A tc that fails, found first in PATH: creation stops at the first link's shaping, after the namespaces
  // and that link's veth were made.
  testing::TempDir dir("net_emulation_fake_tc");
  {
    std::ofstream tc(dir.file("tc"));
    tc << "#!/bin/sh\necho \"fake tc refuses: $*\" >&2\nexit 2\n";
  }
  ASSERT_EQ(::chmod(dir.file("tc").c_str(), 0755), 0);
  const char* old_path = std::getenv("PATH");
  const std::string saved = old_path ? old_path : "";
  ::setenv("PATH", (dir.file("") + ":" + saved).c_str(), 1);
  const std::string run = new_run();
  std::string message;
  try {
    EmulatedNetwork::create(full_mesh(3, run));
  } catch (const Error& e) {
    message = e.what();
  }
  ::setenv("PATH", saved.c_str(), 1);
  EXPECT_NE(message.find("tc -n moesim-" + run + "-0 qdisc add dev"), std::string::npos) << message;
  EXPECT_NE(message.find("fake tc refuses: -n moesim-" + run + "-0 qdisc add"), std::string::npos) << message;
  expect_nothing_left(run);
}

TEST_F(NetEmulation, ARunIdInUseIsRefused) {
  const std::string run = new_run();
  EmulatedNetwork net = EmulatedNetwork::create(full_mesh(2, run));
  try {
    EmulatedNetwork::create(full_mesh(2, run));
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("run id " + run + " is in use"), std::string::npos) << e.what();
  }
  EXPECT_EQ(EmulatedNetwork::list_namespaces(run + "-").size(), 2u);  // the first run's, untouched
}

TEST_F(NetEmulation, SigtermTearsDownTheRunAndEndsTheProcessWithTheSignal) {
  int info[2];
  ASSERT_EQ(::pipe(info), 0);
  pid_t child = ::fork();
  if (child == 0) {
    try {
      EmulatedNetwork net = EmulatedNetwork::create(full_mesh(2, EmulatedNetwork::new_run_id()));
      pid_t pids[2] = {net.spawn(0, {"sleep", "60"}, {}), net.spawn(1, {"sleep", "60"}, {})};
      install_teardown_on_signals();
      if (::write(info[1], pids, sizeof pids) != sizeof pids) ::_exit(2);
      for (;;) ::pause();
    } catch (...) {
      ::_exit(1);
    }
  }
  stale_prefixes_.push_back(std::to_string(child) + ".");
  pid_t pids[2] = {0, 0};
  pollfd pfd{info[0], POLLIN, 0};
  ASSERT_EQ(::poll(&pfd, 1, 30000), 1);
  ASSERT_EQ(::read(info[0], pids, sizeof pids), static_cast<ssize_t>(sizeof pids));
  EXPECT_EQ(EmulatedNetwork::list_namespaces(std::to_string(child) + ".").size(), 2u);
  ::kill(child, SIGTERM);
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGTERM) << "wait status " << status;
  EXPECT_TRUE(EmulatedNetwork::list_namespaces(std::to_string(child) + ".").empty());
  for (pid_t p : pids) EXPECT_FALSE(alive(p)) << p;
  ::close(info[0]);
  ::close(info[1]);
}

TEST_F(NetEmulation, RemoveStaleDeletesDeadRunsOnly) {
  EmulatedNetwork live = EmulatedNetwork::create(full_mesh(2, new_run()));
  pid_t child = ::fork();
  if (child == 0) {
    // Ends without its destructor, as a run killed by SIGKILL does.
    try {
      EmulatedNetwork net = EmulatedNetwork::create(full_mesh(2, EmulatedNetwork::new_run_id()));
      ::_exit(0);
    } catch (...) {
      ::_exit(1);
    }
  }
  const std::string dead = std::to_string(child) + ".";
  stale_prefixes_.push_back(dead);
  ASSERT_EQ(wait_exit_code(child), 0);
  EXPECT_EQ(EmulatedNetwork::list_namespaces(dead).size(), 2u);
  EmulatedNetwork::remove_stale();
  EXPECT_TRUE(EmulatedNetwork::list_namespaces(dead).empty());
  EXPECT_EQ(EmulatedNetwork::list_namespaces(live.run_id() + "-").size(), 2u);  // its owner lives
}

TEST_F(NetEmulation, WithoutPrivilegesCreateSaysWhatIsNeeded) {
  pid_t child = ::fork();
  if (child == 0) {
    // Dropping root's uid drops its capabilities.
    if (::setresgid(65534, 65534, 65534) != 0 || ::setresuid(65534, 65534, 65534) != 0) ::_exit(10);
    if (EmulatedNetwork::unavailable_reason().find("CAP_NET_ADMIN") == std::string::npos) ::_exit(11);
    try {
      EmulatedNetwork::create(full_mesh(2, EmulatedNetwork::new_run_id()));
      ::_exit(12);
    } catch (const Error& e) {
      ::_exit(std::string(e.what()).find("needs root (CAP_NET_ADMIN") == std::string::npos ? 13 : 0);
    }
  }
  EXPECT_EQ(wait_exit_code(child), 0);
}

TEST(NetEmulationReason, NamesWhatIsMissing) {
  EXPECT_EQ(EmulatedNetwork::unavailable_reason_for(true, true, true, true), "");
  const std::string no_root = EmulatedNetwork::unavailable_reason_for(false, false, true, true);
  EXPECT_NE(no_root.find("root (CAP_NET_ADMIN"), std::string::npos) << no_root;
  EXPECT_NE(no_root.find("missing here: CAP_NET_ADMIN, CAP_SYS_ADMIN"), std::string::npos) << no_root;
  const std::string no_tc = EmulatedNetwork::unavailable_reason_for(true, true, true, false);
  EXPECT_NE(no_tc.find("iproute2"), std::string::npos) << no_tc;
  EXPECT_NE(no_tc.find("missing here: the tc command"), std::string::npos) << no_tc;
}

void expect_spec_error(const NetEmulationSpec& spec, const std::string& part) {
  try {
    EmulatedNetwork::create(spec);
    ADD_FAILURE() << "no error for " << part;
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(part), std::string::npos) << e.what();
  }
}

// The spec is checked before anything is made (and before the privileges), so these run everywhere.
TEST(NetEmulationSpec, BadSpecsNameTheField) {
  NetEmulationSpec s = full_mesh(3, "1.0");
  s.links[1].b = s.links[1].a;
  expect_spec_error(s, "links[1]: servers 0 and 0");
  s = full_mesh(3, "1.0");
  s.links.push_back({1, 0, 1e6, 0});
  expect_spec_error(s, "links[3]: servers 0 and 1 are already linked by links[0]");
  s = full_mesh(3, "1.0");
  s.links[2].bandwidth = 999;
  expect_spec_error(s, "links[2].bandwidth: 999 bytes/s");
  s.links[2].bandwidth = 1e6;
  s.links[2].latency = -0.5;
  expect_spec_error(s, "links[2].latency: -0.5 s");
  s = line(3, "1.0");
  s.next_hop[0][2] = 2;
  expect_spec_error(s, "next_hop[0][2]: 2, not a server linked to server 0");
  s = line(3, "1.0");
  s.next_hop[1][2] = 0;
  expect_spec_error(s, "the route from server 0 to server 2 loops");
  s = line(3, "bad-id");
  expect_spec_error(s, "run_id 'bad-id'");
}

TEST(NetEmulationCpuPlan, DisjointWhenEnoughSharedOtherwise) {
  CpuPlan p = cpu_plan(3, {0, 1, 2, 3, 4, 5, 6, 7});
  EXPECT_FALSE(p.shared);
  EXPECT_EQ(p.cpus, (std::vector<std::vector<int>>{{0, 1, 2}, {3, 4, 5}, {6, 7}}));
  p = cpu_plan(3, {4, 6});
  EXPECT_TRUE(p.shared);
  EXPECT_NE(p.message.find("3 servers share 2 CPUs"), std::string::npos) << p.message;
  EXPECT_EQ(p.cpus, (std::vector<std::vector<int>>{{4, 6}, {4, 6}, {4, 6}}));
  EXPECT_THROW(cpu_plan(1, {}), Error);
}

}  // namespace
}  // namespace moesim::exec
