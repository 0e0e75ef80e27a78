// EmulatedNetwork's namespaces, links, routes and shaping (exec/net_emulation.h), made with iproute2's ip and
// tc run as child processes, and the clean-up of dead runs. The server processes are net_processes.cpp's.
#include "exec/net_emulation.h"

#include <dirent.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>
#include <utility>

#include "base/error.h"
#include "base/hash64.h"
#include "exec/net_emulation_state.h"

namespace moesim::exec {
namespace {

constexpr const char* kNetnsDir = "/var/run/netns";  // where `ip netns add` bind-mounts a namespace
constexpr const char* kNsPrefix = "moesim-";
constexpr int kCapNetAdmin = 12;
constexpr int kCapSysAdmin = 21;
constexpr double kMinBandwidth = 1000;  // bytes/s

std::string join(const std::vector<std::string>& argv) {
  std::string s;
  for (const auto& a : argv) s += (s.empty() ? "" : " ") + a;
  return s;
}

struct ToolResult {
  int status = 0;      // wait status; -1 when the fork failed
  std::string output;  // stdout and stderr together
};

// Runs argv (argv[0] a full path) with stdin from /dev/null and its output captured. Between fork and exec the
// child makes only async-signal-safe calls: the caller may have other threads.
ToolResult run_tool(const std::vector<std::string>& argv) {
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) return {-1, std::string("pipe: ") + std::strerror(errno)};
  int devnull = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  pid_t pid = ::fork();
  if (pid == 0) {
    if (devnull >= 0) ::dup2(devnull, 0);
    ::dup2(fds[1], 1);
    ::dup2(fds[1], 2);
    ::execv(args[0], args.data());
    ::_exit(127);
  }
  ::close(fds[1]);
  if (devnull >= 0) ::close(devnull);
  ToolResult r;
  if (pid < 0) {
    ::close(fds[0]);
    return {-1, std::string("fork: ") + std::strerror(errno)};
  }
  char buf[4096];
  for (;;) {
    ssize_t n = ::read(fds[0], buf, sizeof buf);
    if (n > 0) r.output.append(buf, static_cast<size_t>(n));
    else if (n == 0 || errno != EINTR) break;
  }
  ::close(fds[0]);
  while (::waitpid(pid, &r.status, 0) < 0 && errno == EINTR) {
  }
  while (!r.output.empty() && (r.output.back() == '\n' || r.output.back() == ' ')) r.output.pop_back();
  return r;
}

bool succeeded(const ToolResult& r) { return r.status >= 0 && WIFEXITED(r.status) && WEXITSTATUS(r.status) == 0; }

void must(const std::vector<std::string>& argv) {
  ToolResult r = run_tool(argv);
  if (!succeeded(r)) {
    std::string how = r.status < 0                 ? "could not start"
                      : WIFEXITED(r.status)        ? "exited with status " + std::to_string(WEXITSTATUS(r.status))
                                                   : "was killed by signal " + std::to_string(WTERMSIG(r.status));
    throw Error("network emulation: `" + join(argv) + "` " + how + ": " + (r.output.empty() ? "(no output)" : r.output));
  }
}

std::string ns_path(const std::string& name) { return std::string(kNetnsDir) + "/" + name; }

bool process_alive(pid_t pid) {
  if (::kill(pid, 0) != 0 && errno != EPERM) return false;
  // A zombie (ended, not yet reaped by a parent that may never reap it) holds no namespace: it counts as dead.
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  if (!std::getline(stat, line)) return false;
  size_t close_paren = line.rfind(')');
  return close_paren == std::string::npos || close_paren + 2 >= line.size() || line[close_paren + 2] != 'Z';
}

// SIGKILL to every process (but this one) whose network namespace is the one mounted at `path`, as
// `ip netns pids` finds them: a namespace outlives its file while a process is in it.
void kill_processes_in(const std::string& path) {
  struct stat ns{};
  if (::stat(path.c_str(), &ns) != 0) return;
  DIR* proc = ::opendir("/proc");
  if (!proc) return;
  while (const dirent* e = ::readdir(proc)) {
    char* end = nullptr;
    long pid = std::strtol(e->d_name, &end, 10);
    if (pid <= 0 || *end != '\0' || pid == ::getpid()) continue;
    struct stat st{};
    std::string link = std::string("/proc/") + e->d_name + "/ns/net";
    if (::stat(link.c_str(), &st) == 0 && st.st_ino == ns.st_ino && st.st_dev == ns.st_dev)
      ::kill(static_cast<pid_t>(pid), SIGKILL);
  }
  ::closedir(proc);
}

// Every namespace name "moesim-<run_prefix>*" in kNetnsDir.
std::vector<std::string> namespaces_with(const std::string& run_prefix) {
  std::vector<std::string> names;
  const std::string prefix = kNsPrefix + run_prefix;
  if (DIR* d = ::opendir(kNetnsDir)) {
    while (const dirent* e = ::readdir(d)) {
      std::string name = e->d_name;
      if (name.compare(0, prefix.size(), prefix) == 0) names.push_back(name);
    }
    ::closedir(d);
  }
  std::sort(names.begin(), names.end());
  return names;
}

// The run id of a namespace name "moesim-<run>-<n>" ("" when it is not one of ours).
std::string run_of(const std::string& name) {
  size_t dash = name.rfind('-');
  if (name.compare(0, std::strlen(kNsPrefix), kNsPrefix) != 0 || dash == std::string::npos ||
      dash <= std::strlen(kNsPrefix))
    return "";
  return name.substr(std::strlen(kNsPrefix), dash - std::strlen(kNsPrefix));
}

void remove_namespace_named(const std::string& name) {
  const std::string path = ns_path(name);
  kill_processes_in(path);
  net_registry::delete_namespace_path(path.c_str());
}

// The effective capability set of this process (/proc/self/status CapEff); nullopt when unreadable.
std::optional<uint64_t> effective_capabilities() {
  std::ifstream status("/proc/self/status");
  for (std::string line; std::getline(status, line);)
    if (line.compare(0, 7, "CapEff:") == 0) return std::strtoull(line.c_str() + 7, nullptr, 16);
  return std::nullopt;
}

// ---- the spec ----

std::string hex(uint64_t v) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "%llx", static_cast<unsigned long long>(v));
  return buf;
}

std::string number(double v) {
  std::ostringstream os;
  os << v;
  return os.str();
}

void check_spec(const NetEmulationSpec& spec) {
  const size_t n = spec.server_names.size();
  auto fail = [](const std::string& what) { throw Error("network emulation: " + what); };
  if (n == 0) fail("server_names: no servers");
  if (n > 65536) fail("server_names: " + std::to_string(n) + " servers, at most 65536 have an address");
  if (spec.run_id.empty() || spec.run_id.size() > 32 ||
      !std::all_of(spec.run_id.begin(), spec.run_id.end(),
                   [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.'; }))
    fail("run_id '" + spec.run_id + "': 1 to 32 letters, digits, '_' or '.'");
  std::map<std::pair<uint32_t, uint32_t>, size_t> pairs;
  for (size_t k = 0; k < spec.links.size(); ++k) {
    const auto& l = spec.links[k];
    const std::string at = "links[" + std::to_string(k) + "]";
    if (l.a >= n || l.b >= n || l.a == l.b)
      fail(at + ": servers " + std::to_string(l.a) + " and " + std::to_string(l.b) + " (of " + std::to_string(n) +
           "): a link joins two different servers");
    // tc keeps a bucket's size as its time at the rate in 32 bits of ticks: below about 1 kB/s, a 32 KiB
    // bucket overflows them and the rate shapes nothing like what was asked.
    if (!(l.bandwidth >= kMinBandwidth) || !std::isfinite(l.bandwidth))
      fail(at + ".bandwidth: " + number(l.bandwidth) + " bytes/s; the emulation shapes finite rates of " +
           std::to_string(static_cast<int>(kMinBandwidth)) + " bytes/s (8 kbit/s) and more");
    if (!(l.latency >= 0) || !std::isfinite(l.latency))
      fail(at + ".latency: " + number(l.latency) + " s, must be finite and >= 0");
    auto key = std::minmax(l.a, l.b);
    if (!pairs.emplace(key, k).second)
      fail(at + ": servers " + std::to_string(key.first) + " and " + std::to_string(key.second) +
           " are already linked by links[" + std::to_string(pairs[key]) + "]");
  }
  if (spec.next_hop.size() != n) fail("next_hop: " + std::to_string(spec.next_hop.size()) + " rows for " + std::to_string(n) + " servers");
  for (size_t s = 0; s < n; ++s) {
    if (spec.next_hop[s].size() != n)
      fail("next_hop[" + std::to_string(s) + "]: " + std::to_string(spec.next_hop[s].size()) + " entries for " + std::to_string(n) + " servers");
    for (size_t t = 0; t < n; ++t) {
      const int h = spec.next_hop[s][t];
      const std::string at = "next_hop[" + std::to_string(s) + "][" + std::to_string(t) + "]";
      if (s == t ? h != -1 : (h < 0 || static_cast<size_t>(h) >= n || !pairs.count(std::minmax<uint32_t>(s, h))))
        fail(at + ": " + std::to_string(h) + (s == t ? ", must be -1 (self)" : ", not a server linked to server " + std::to_string(s)));
    }
  }
  for (size_t s = 0; s < n; ++s)
    for (size_t t = 0; t < n; ++t) {
      size_t cur = s, hops = 0;
      while (cur != t && hops++ <= n) cur = static_cast<size_t>(spec.next_hop[cur][t]);
      if (cur != t)
        fail("next_hop: the route from server " + std::to_string(s) + " to server " + std::to_string(t) + " loops");
    }
}

std::string server_address(size_t n) {
  return "10.255." + std::to_string(n / 256) + "." + std::to_string(n % 256);
}

std::string link_address(size_t k, int side) {
  const uint64_t base = 2 * static_cast<uint64_t>(k) + static_cast<uint64_t>(side);
  return "10." + std::to_string((base >> 16) & 255) + "." + std::to_string((base >> 8) & 255) + "." +
         std::to_string(base & 255);
}

// The control link of server n in the run's control block `block` (a /22 of 10.254/16: runs on one machine
// share the root namespace, so each takes a block no other holds): /31 10.254.<4 block + 2n/256>.<2n%256>,
// side 0 the root namespace's, 1 the server's.
std::string control_link_address(uint32_t block, size_t n, int side) {
  const uint64_t base = 2 * static_cast<uint64_t>(n) + static_cast<uint64_t>(side);
  return "10.254." + std::to_string(4 * block + ((base >> 8) & 3)) + "." + std::to_string(base & 255);
}

// A control block that no address of the root namespace is in, starting from the run's hash.
uint32_t free_control_block(const std::string& ip, uint32_t start) {
  const ToolResult r = run_tool({ip, "-o", "-4", "addr", "show"});
  for (uint32_t i = 0; i < 64; ++i) {
    const uint32_t block = (start + i) % 64;
    bool used = false;
    for (uint32_t third = 4 * block; third < 4 * block + 4 && !used; ++third)
      used = r.output.find("10.254." + std::to_string(third) + ".") != std::string::npos;
    if (!used) return block;
  }
  throw Error("network emulation: no free control block in 10.254.0.0/16 (64 runs at once?)");
}

std::string rate_arg(double bandwidth) { return std::to_string(std::llround(bandwidth)) + "bps"; }

// tbf's bucket holds 1 ms of traffic (at least 32 KiB: several full-size frames, so that a hrtimer's wake-up
// granularity does not starve the link), and its queue 50 ms more, as a switch port's buffer would; a longer
// queue only adds queueing delay, a shorter one drops and stalls TCP.
std::vector<std::string> tbf_args(double bandwidth) {
  const double burst = std::max(32768.0, std::ceil(bandwidth * 1e-3));
  const double limit = std::min(burst + std::max(65536.0, bandwidth * 0.05), 2147483647.0);
  return {"tbf", "rate", rate_arg(bandwidth), "burst", std::to_string(std::llround(burst)), "limit",
          std::to_string(std::llround(limit))};
}

// netem's queue (in packets) holds the link's bandwidth-delay product plus 50 ms, twice over: netem drops
// past it, and a drop on an emulated link is not one of the cluster model's events.
std::vector<std::string> netem_args(double bandwidth, double latency) {
  const double packets = std::max(1000.0, std::ceil(2 * bandwidth * (latency + 0.05) / 1500));
  return {"netem", "delay", std::to_string(std::llround(latency * 1e6)) + "us", "rate", rate_arg(bandwidth),
          "limit", std::to_string(std::llround(std::min(packets, 1e9)))};
}

// Writes the namespace's sysctls from a child that joined it (/proc/sys/net is the reading process's
// namespace's): forwarding for multi-hop routes, reverse-path filtering off for asymmetric next_hop tables.
void set_namespace_sysctls(const std::string& ns) {
  const std::string path = ns_path(ns);
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw Error("network emulation: open " + path + ": " + std::strerror(errno));
  static const char* const kFiles[] = {"/proc/sys/net/ipv4/ip_forward", "/proc/sys/net/ipv4/conf/all/rp_filter",
                                       "/proc/sys/net/ipv4/conf/default/rp_filter"};
  static const char kValues[] = {'1', '0', '0'};
  pid_t pid = ::fork();
  if (pid == 0) {
    if (::setns(fd, CLONE_NEWNET) != 0) ::_exit(100);
    for (int i = 0; i < 3; ++i) {
      int f = ::open(kFiles[i], O_WRONLY | O_CLOEXEC);
      if (f < 0 || ::write(f, &kValues[i], 1) != 1) ::_exit(101 + i);
      ::close(f);
    }
    ::_exit(0);
  }
  ::close(fd);
  int status = 0;
  while (pid > 0 && ::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (pid < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    const int code = pid < 0 || !WIFEXITED(status) ? -1 : WEXITSTATUS(status);
    throw Error("network emulation: namespace " + ns + ": " +
                (code == 100 ? std::string("setns failed")
                 : code > 100 ? std::string("writing ") + kFiles[code - 101] + " failed"
                              : std::string("the sysctl child failed")));
  }
}

}  // namespace

std::string find_program(const std::string& name) {
  std::vector<std::string> dirs;
  if (const char* path = std::getenv("PATH")) {
    std::stringstream ss(path);
    for (std::string d; std::getline(ss, d, ':');)
      if (!d.empty()) dirs.push_back(d);
  }
  for (const char* d : {"/usr/sbin", "/sbin", "/usr/bin", "/bin"}) dirs.emplace_back(d);
  for (const auto& d : dirs) {
    std::string p = d + "/" + name;
    if (::access(p.c_str(), X_OK) == 0) return p;
  }
  return "";
}

std::string EmulatedNetwork::unavailable_reason_for(bool net_admin, bool sys_admin, bool have_ip, bool have_tc) {
  std::vector<std::string> missing;
  if (!net_admin) missing.emplace_back("CAP_NET_ADMIN");
  if (!sys_admin) missing.emplace_back("CAP_SYS_ADMIN");
  if (!have_ip) missing.emplace_back("the ip command");
  if (!have_tc) missing.emplace_back("the tc command");
  if (missing.empty()) return "";
  std::string list;
  for (const auto& m : missing) list += (list.empty() ? "" : ", ") + m;
  return "network emulation needs root (CAP_NET_ADMIN and CAP_SYS_ADMIN, for namespaces, links and tc) and "
         "iproute2's ip and tc (Debian package iproute2); missing here: " + list;
}

std::string EmulatedNetwork::unavailable_reason() {
  const auto caps = effective_capabilities();
  const bool root = ::geteuid() == 0;
  const bool net_admin = caps ? ((*caps >> kCapNetAdmin) & 1) != 0 : root;
  const bool sys_admin = caps ? ((*caps >> kCapSysAdmin) & 1) != 0 : root;
  return unavailable_reason_for(net_admin, sys_admin, !find_program("ip").empty(), !find_program("tc").empty());
}

std::string EmulatedNetwork::new_run_id() {
  static std::atomic<uint32_t> sequence{0};
  return std::to_string(::getpid()) + "." + std::to_string(sequence++);
}

std::string EmulatedNetwork::veth_prefix(const std::string& run_id) {
  char buf[8];
  std::snprintf(buf, sizeof buf, "m%04x", static_cast<unsigned>(hash64(run_id.data(), run_id.size()) & 0xffff));
  return buf;
}

std::vector<std::string> EmulatedNetwork::list_namespaces(const std::string& run_prefix) {
  return namespaces_with(run_prefix);
}

namespace {

// The root ends of a run's control links: a namespace's deletion takes its veths, but the kernel removes the
// peers in the root namespace later, from a work queue; deleting them first leaves nothing behind at once.
void remove_control_links(const std::string& run_id) {
  const std::string prefix = EmulatedNetwork::veth_prefix(run_id) + "c";
  std::vector<std::string> names;
  if (DIR* d = ::opendir("/sys/class/net")) {
    while (const dirent* e = ::readdir(d))
      if (std::string(e->d_name).rfind(prefix, 0) == 0) names.emplace_back(e->d_name);
    ::closedir(d);
  }
  if (names.empty()) return;
  const std::string ip = find_program("ip");
  for (const auto& name : names) run_tool({ip, "link", "del", name});
}

}  // namespace

void EmulatedNetwork::remove_stale(const std::string& run_prefix) {
  for (const auto& name : namespaces_with(run_prefix)) {
    const std::string run = run_of(name);
    size_t digits = 0;
    while (digits < run.size() && std::isdigit(static_cast<unsigned char>(run[digits]))) ++digits;
    if (digits == 0 || digits > 9) continue;  // no owner pid to tell a dead run by: its owner's to remove
    const pid_t owner = static_cast<pid_t>(std::stol(run.substr(0, digits)));
    if (!process_alive(owner)) remove_namespace_named(name);
  }
}

void EmulatedNetwork::remove_run(const std::string& run_id) {
  remove_control_links(run_id);
  for (const auto& name : namespaces_with(run_id + "-"))
    if (run_of(name) == run_id) remove_namespace_named(name);
}

namespace {

// One direction's shaping: netem while the kernel has it (the first attempt decides), tbf otherwise.
void shape(EmulatedNetwork::State& st, const std::string& tc, size_t k, int side) {
  const auto& l = st.spec.links[k];
  const uint32_t server = side == 0 ? l.a : l.b;
  std::vector<std::string> head = {tc, "-n", st.ns[server], "qdisc", "add", "dev", st.links[k].iface[side], "root"};
  if (st.qdisc.empty()) {
    std::vector<std::string> argv = head;
    for (auto& a : netem_args(l.bandwidth, l.latency)) argv.push_back(a);
    ToolResult r = run_tool(argv);
    if (succeeded(r)) {
      st.qdisc = "netem";
      st.kernel_latency = true;
      st.links[k].qdisc[side] = join(netem_args(l.bandwidth, l.latency));
      return;
    }
    st.qdisc = "tbf";
    st.netem_error = "`" + join(argv) + "`: " + r.output;
  }
  const auto args = st.qdisc == "netem" ? netem_args(l.bandwidth, l.latency) : tbf_args(l.bandwidth);
  for (auto& a : args) head.push_back(a);
  must(head);
  st.links[k].qdisc[side] = join(args);
}

void build(EmulatedNetwork::State& st, const std::string& ip, const std::string& tc) {
  const auto& spec = st.spec;
  for (size_t n = 0; n < st.ns.size(); ++n) {
    must({ip, "netns", "add", st.ns[n]});
    set_namespace_sysctls(st.ns[n]);
    must({ip, "-n", st.ns[n], "link", "set", "lo", "up"});
    must({ip, "-n", st.ns[n], "addr", "add", st.addresses[n] + "/32", "dev", "lo"});
  }
  const std::string vp = EmulatedNetwork::veth_prefix(spec.run_id);
  if (spec.control && st.ns.size() > 512)
    throw Error("network emulation: control links for at most 512 servers (" + std::to_string(st.ns.size()) + ")");
  if (spec.control) st.control_block = free_control_block(ip, static_cast<uint32_t>(std::hash<std::string>{}(spec.run_id)));
  for (size_t n = 0; spec.control && n < st.ns.size(); ++n) {
    const std::string root_end = vp + "c" + hex(n), server_end = vp + "C" + hex(n);
    must({ip, "link", "add", root_end, "type", "veth", "peer", "name", server_end, "netns", st.ns[n]});
    must({ip, "addr", "add", control_link_address(st.control_block, n, 0) + "/31", "dev", root_end});
    must({ip, "link", "set", root_end, "up"});
    must({ip, "-n", st.ns[n], "addr", "add", control_link_address(st.control_block, n, 1) + "/31", "dev", server_end});
    must({ip, "-n", st.ns[n], "link", "set", server_end, "up"});
  }
  for (size_t k = 0; k < spec.links.size(); ++k) {
    const auto& l = spec.links[k];
    auto& link = st.links[k];
    const uint32_t ends[2] = {l.a, l.b};
    for (int side = 0; side < 2; ++side) {
      link.iface[side] = vp + "s" + hex(ends[side]) + "l" + hex(k);
      link.address[side] = link_address(k, side);
    }
    must({ip, "link", "add", link.iface[0], "netns", st.ns[l.a], "type", "veth", "peer", "name", link.iface[1],
          "netns", st.ns[l.b]});
    for (int side = 0; side < 2; ++side) {
      must({ip, "-n", st.ns[ends[side]], "addr", "add", link.address[side] + "/31", "dev", link.iface[side]});
      must({ip, "-n", st.ns[ends[side]], "link", "set", link.iface[side], "up"});
      shape(st, tc, k, side);
    }
  }
  std::map<std::pair<uint32_t, uint32_t>, size_t> link_of;
  for (size_t k = 0; k < spec.links.size(); ++k) link_of[std::minmax(spec.links[k].a, spec.links[k].b)] = k;
  for (uint32_t s = 0; s < st.ns.size(); ++s)
    for (uint32_t t = 0; t < st.ns.size(); ++t) {
      if (s == t) continue;
      const auto h = static_cast<uint32_t>(spec.next_hop[s][t]);
      const size_t k = link_of.at(std::minmax(s, h));
      const int mine = spec.links[k].a == s ? 0 : 1;
      must({ip, "-n", st.ns[s], "route", "add", st.addresses[t] + "/32", "via", st.links[k].address[1 - mine], "dev",
            st.links[k].iface[mine], "src", st.addresses[s]});
    }
}

}  // namespace

EmulatedNetwork EmulatedNetwork::create(const NetEmulationSpec& spec) {
  check_spec(spec);
  if (std::string why = unavailable_reason(); !why.empty()) throw Error(why);
  const size_t n = spec.server_names.size();
  const std::string vp = veth_prefix(spec.run_id);
  if ((vp + "s" + hex(n - 1) + "l" + hex(spec.links.empty() ? 0 : spec.links.size() - 1)).size() > 15)
    throw Error("network emulation: " + std::to_string(n) + " servers and " + std::to_string(spec.links.size()) +
                " links do not fit in 15-character interface names");
  // Teardown deletes every namespace of the run, so none may be another's: a run id in use is refused.
  for (const auto& name : namespaces_with(spec.run_id + "-"))
    if (run_of(name) == spec.run_id)
      throw Error("network emulation: run id " + spec.run_id + " is in use: namespace " + name +
                  " exists (EmulatedNetwork::remove_stale removes a dead run's namespaces)");
  auto st = std::make_unique<State>();
  st->spec = spec;
  st->links.resize(spec.links.size());
  for (size_t i = 0; i < n; ++i) {
    st->ns.push_back(kNsPrefix + spec.run_id + "-" + std::to_string(i));
    st->addresses.push_back(server_address(i));
  }
  EmulatedNetwork net(std::move(st));
  // Registered before `ip netns add`, so that a signal during creation deletes what was made so far.
  for (const auto& name : net.state_->ns) net.state_->ns_slots.push_back(net_registry::add_namespace(ns_path(name)));
  try {
    build(*net.state_, find_program("ip"), find_program("tc"));
  } catch (...) {
    net.teardown();
    throw;
  }
  return net;
}

EmulatedNetwork::EmulatedNetwork(std::unique_ptr<State> state) : state_(std::move(state)) {}
EmulatedNetwork::EmulatedNetwork(EmulatedNetwork&&) noexcept = default;
EmulatedNetwork& EmulatedNetwork::operator=(EmulatedNetwork&& other) noexcept {
  if (this != &other) {
    teardown();
    state_ = std::move(other.state_);
  }
  return *this;
}
EmulatedNetwork::~EmulatedNetwork() { teardown(); }

void EmulatedNetwork::teardown() noexcept {
  if (!state_ || state_->torn_down) return;
  kill_all();
  if (state_->spec.control) {
    try {
      remove_control_links(state_->spec.run_id);
    } catch (...) {  // the namespaces' deletion below takes them, a little later
    }
  }
  for (size_t i = 0; i < state_->ns.size(); ++i) {
    try {
      remove_namespace_named(state_->ns[i]);
    } catch (...) {  // a failed allocation: the next run's remove_stale() removes it
    }
    if (i < state_->ns_slots.size()) net_registry::remove_namespace(state_->ns_slots[i]);
  }
  state_->torn_down = true;
}

uint32_t EmulatedNetwork::servers() const { return static_cast<uint32_t>(state_->ns.size()); }
const std::string& EmulatedNetwork::run_id() const { return state_->spec.run_id; }
const std::string& EmulatedNetwork::address(uint32_t server) const { return state_->addresses.at(server); }
const std::string& EmulatedNetwork::ns_name(uint32_t server) const { return state_->ns.at(server); }
bool EmulatedNetwork::kernel_latency() const { return state_->kernel_latency; }

std::string EmulatedNetwork::control_address(uint32_t server) const {
  return state_->spec.control ? control_link_address(state_->control_block, server, 1) : "";
}

Json EmulatedNetwork::describe() const {
  const State& st = *state_;
  Json servers = Json::array();
  for (size_t i = 0; i < st.ns.size(); ++i)
    servers.push_back({{"name", st.spec.server_names[i]}, {"namespace", st.ns[i]}, {"address", st.addresses[i]}});
  Json links = Json::array();
  for (size_t k = 0; k < st.links.size(); ++k) {
    const auto& l = st.spec.links[k];
    const auto& e = st.links[k];
    links.push_back({{"a", l.a}, {"b", l.b}, {"bandwidth", l.bandwidth}, {"latency", l.latency},
                     {"interfaces", {e.iface[0], e.iface[1]}}, {"addresses", {e.address[0], e.address[1]}},
                     {"qdisc", {e.qdisc[0], e.qdisc[1]}}});
  }
  return {{"run_id", st.spec.run_id},  {"kernel_latency", st.kernel_latency},
          {"qdisc", st.qdisc.empty() ? Json(nullptr) : Json(st.qdisc)},
          {"netem_error", st.netem_error}, {"servers", servers}, {"links", links}};
}

}  // namespace moesim::exec
