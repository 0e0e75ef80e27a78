// Helpers of the network-emulation tests (net_emulation_test.cpp, net_emulation_longtest.cpp): specs, TCP
// transfers between namespaces from forked children, and a fixture that removes its runs even when a test
// fails half-way.
#pragma once

#include <arpa/inet.h>
#include <fcntl.h>
#include <net/if.h>
#include <netinet/in.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "exec/net_emulation.h"

namespace moesim::exec::testing {

constexpr uint16_t kPort = 7070;

// n servers "s0".."s<n-1>" joined by `links`, routed by hop(from, to) (the neighbour to go through).
inline NetEmulationSpec topology(uint32_t n, const std::string& run_id, std::vector<EmulatedLink> links,
                                 const std::function<uint32_t(uint32_t, uint32_t)>& hop) {
  NetEmulationSpec spec;
  spec.run_id = run_id;
  spec.links = std::move(links);
  spec.next_hop.assign(n, std::vector<int>(n, -1));
  for (uint32_t a = 0; a < n; ++a) {
    spec.server_names.push_back("s" + std::to_string(a));
    for (uint32_t b = 0; b < n; ++b)
      if (a != b) spec.next_hop[a][b] = static_cast<int>(hop(a, b));
  }
  return spec;
}

inline NetEmulationSpec full_mesh(uint32_t n, const std::string& run_id, double bandwidth = 125e6) {
  std::vector<EmulatedLink> links;
  for (uint32_t a = 0; a < n; ++a)
    for (uint32_t b = a + 1; b < n; ++b) links.push_back({a, b, bandwidth, 0.001});
  return topology(n, run_id, links, [](uint32_t, uint32_t to) { return to; });
}

// A line of n servers: i - i+1 linked, no other link, so that server 0 reaches server n-1 in n-1 hops.
inline NetEmulationSpec line(uint32_t n, const std::string& run_id) {
  std::vector<EmulatedLink> links;
  for (uint32_t a = 0; a + 1 < n; ++a) links.push_back({a, a + 1, 125e6, 0.001});
  return topology(n, run_id, links, [](uint32_t from, uint32_t to) { return to > from ? from + 1 : from - 1; });
}

// Forks a child that joins the namespace `ns` and exits with fn()'s value (255 when setns fails).
inline pid_t in_namespace(const std::string& ns, const std::function<int()>& fn) {
  pid_t pid = ::fork();
  if (pid == 0) {
    int fd = ::open(("/var/run/netns/" + ns).c_str(), O_RDONLY);
    if (fd < 0 || ::setns(fd, CLONE_NEWNET) != 0) ::_exit(255);
    ::_exit(fn());
  }
  return pid;
}

inline int wait_exit_code(pid_t pid) {
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

inline sockaddr_in address_of(const std::string& ip) {
  sockaddr_in sa{};
  sa.sin_family = AF_INET;
  sa.sin_port = htons(kPort);
  ::inet_pton(AF_INET, ip.c_str(), &sa.sin_addr);
  return sa;
}

struct Transfer {
  uint64_t received = 0;
  double seconds = 0;
  int sender_exit = -1;
};

// Sends `bytes` over TCP from server `from` to server `to`'s address; the listener (in `to`'s namespace)
// reports how many bytes it read. The time runs from the listener being ready to its report.
inline Transfer transfer(const EmulatedNetwork& net, uint32_t from, uint32_t to, uint64_t bytes) {
  int ready[2], report[2];
  if (::pipe(ready) != 0 || ::pipe(report) != 0) return {};
  const sockaddr_in dst = address_of(net.address(to));
  pid_t listener = in_namespace(net.ns_name(to), [&] {
    int s = ::socket(AF_INET, SOCK_STREAM, 0);
    int one = 1;
    ::setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (::bind(s, reinterpret_cast<const sockaddr*>(&dst), sizeof dst) != 0 || ::listen(s, 1) != 0) return 1;
    char c = 1;
    if (::write(ready[1], &c, 1) != 1) return 2;
    int conn = ::accept(s, nullptr, nullptr);
    uint64_t got = 0;
    char buf[65536];
    for (ssize_t n; (n = ::read(conn, buf, sizeof buf)) > 0;) got += static_cast<uint64_t>(n);
    return ::write(report[1], &got, sizeof got) == sizeof got ? 0 : 3;
  });
  char c = 0;
  pollfd pfd{ready[0], POLLIN, 0};
  Transfer t;
  if (::poll(&pfd, 1, 10000) != 1 || ::read(ready[0], &c, 1) != 1) {
    ::kill(listener, SIGKILL);
    wait_exit_code(listener);
    return t;
  }
  const auto start = std::chrono::steady_clock::now();
  pid_t sender = in_namespace(net.ns_name(from), [&] {
    int s = ::socket(AF_INET, SOCK_STREAM, 0);
    timeval tv{10, 0};
    ::setsockopt(s, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
    if (::connect(s, reinterpret_cast<const sockaddr*>(&dst), sizeof dst) != 0) return 1;
    std::vector<char> data(65536, 'x');
    for (uint64_t sent = 0; sent < bytes;) {
      ssize_t n = ::write(s, data.data(), static_cast<size_t>(std::min<uint64_t>(data.size(), bytes - sent)));
      if (n <= 0) return 2;
      sent += static_cast<uint64_t>(n);
    }
    ::shutdown(s, SHUT_WR);
    return 0;
  });
  t.sender_exit = wait_exit_code(sender);
  pfd = {report[0], POLLIN, 0};
  if (t.sender_exit == 0 && ::poll(&pfd, 1, 10000) == 1 && ::read(report[0], &t.received, sizeof t.received) > 0)
    t.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  ::kill(listener, SIGKILL);
  wait_exit_code(listener);
  for (int fd : {ready[0], ready[1], report[0], report[1]}) ::close(fd);
  return t;
}

// The interfaces of the calling process's namespace whose names start with `prefix`.
inline int interfaces_with(const std::string& prefix) {
  int count = 0;
  if (struct if_nameindex* all = ::if_nameindex()) {
    for (auto* i = all; i->if_index != 0; ++i)
      if (std::string(i->if_name).rfind(prefix, 0) == 0) ++count;
    ::if_freenameindex(all);
  }
  return count;
}

inline bool alive(pid_t pid) {
  if (::kill(pid, 0) != 0) return false;
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  std::getline(stat, line);
  size_t p = line.rfind(')');
  return p != std::string::npos && p + 2 < line.size() && line[p + 2] != 'Z';
}

// Every test's runs are removed at its end, also when it failed half-way.
class NetEmulationFixture : public ::testing::Test {
 protected:
  void SetUp() override {
    if (std::string why = EmulatedNetwork::unavailable_reason(); !why.empty()) GTEST_SKIP() << why;
  }
  void TearDown() override {
    for (const auto& r : runs_) EmulatedNetwork::remove_run(r);
    for (const auto& p : stale_prefixes_) EmulatedNetwork::remove_stale(p);
  }
  std::string new_run() { return runs_.emplace_back(EmulatedNetwork::new_run_id()); }
  void expect_nothing_left(const std::string& run) {
    EXPECT_TRUE(EmulatedNetwork::list_namespaces(run + "-").empty()) << "namespaces of run " << run << " left";
    EXPECT_EQ(interfaces_with(EmulatedNetwork::veth_prefix(run)), 0)
        << "veths of run " << run << " in the root namespace";
  }
  std::vector<std::string> runs_, stale_prefixes_;
};

}  // namespace moesim::exec::testing
