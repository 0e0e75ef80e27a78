// EmulatedNetwork's server processes (spawn, wait_any, kill_all), the CPU plan, and the signal teardown with
// its registry (exec/net_emulation.h).
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <string>

#include "base/error.h"
#include "exec/net_emulation.h"
#include "exec/net_emulation_state.h"

namespace moesim::exec {
namespace {

// ---- the registry the signal handler reads: fixed arrays of atomics, no allocation, no lock ----

constexpr int kMaxNamespaces = 1024;
constexpr int kMaxChildren = 4096;
constexpr size_t kPathMax = 128;

struct NamespaceSlot {
  std::atomic<int> state{0};  // 0 free, 1 being written, 2 ready
  char path[kPathMax];
};
NamespaceSlot g_namespaces[kMaxNamespaces];
std::atomic<pid_t> g_children[kMaxChildren];
// Folders of flat files (a run's rendezvous folder: its secret, addresses and logs) removed with the run.
constexpr int kMaxFolders = 64;
NamespaceSlot g_folders[kMaxFolders];

// Removes a folder's files and the folder, with async-signal-safe calls only (open, getdents64, unlinkat,
// rmdir): readdir may allocate. Subfolders are left, and so then is the folder.
void remove_flat_folder(const char* path) noexcept {
  const int fd = ::open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return;
  alignas(8) char buf[4096];
  for (;;) {
    const long n = ::syscall(SYS_getdents64, fd, buf, sizeof buf);
    if (n <= 0) break;
    for (long at = 0; at < n;) {
      struct Entry {
        uint64_t ino;
        int64_t off;
        unsigned short reclen;
        unsigned char type;
        char name[1];
      };
      const auto* e = reinterpret_cast<const Entry*>(buf + at);
      if (std::strcmp(e->name, ".") != 0 && std::strcmp(e->name, "..") != 0) ::unlinkat(fd, e->name, 0);
      at += e->reclen;
    }
  }
  ::close(fd);
  ::rmdir(path);
}

void sleep_ms(long ms) {
  timespec ts{ms / 1000, (ms % 1000) * 1000000L};
  while (::nanosleep(&ts, &ts) != 0 && errno == EINTR) {
  }
}

// Whether a child of ours has ended (reaping it), or is not ours to wait for.
bool reaped_or_gone(pid_t pid) {
  int status = 0;
  pid_t r = ::waitpid(pid, &status, WNOHANG);
  return r == pid || (r < 0 && errno == ECHILD);
}

// The teardown of every registered network. Async-signal-safe: it only reads the atomics and calls kill,
// waitpid, nanosleep, umount2 and unlink.
void on_teardown_signal(int sig) {
  const int saved_errno = errno;
  for (auto& c : g_children)
    if (pid_t p = c.load(std::memory_order_acquire); p > 0) ::kill(p, SIGTERM);
  // A short grace, so that servers flush their outputs; a signalled run should end promptly.
  for (int step = 0; step < 50; ++step) {
    bool any = false;
    for (auto& c : g_children)
      if (pid_t p = c.load(std::memory_order_acquire); p > 0 && !reaped_or_gone(p)) any = true;
    if (!any) break;
    sleep_ms(10);
  }
  for (auto& c : g_children)
    if (pid_t p = c.load(std::memory_order_acquire); p > 0) ::kill(p, SIGKILL);
  for (auto& s : g_namespaces)
    if (s.state.load(std::memory_order_acquire) == 2) net_registry::delete_namespace_path(s.path);
  for (auto& f : g_folders)
    if (f.state.load(std::memory_order_acquire) == 2) remove_flat_folder(f.path);
  errno = saved_errno;
  // SA_RESETHAND restored the default action on entry; the re-raised signal is delivered on return.
  ::raise(sig);
}

pid_t pidfd_open_or_none(pid_t pid) {
#ifdef SYS_pidfd_open
  return static_cast<pid_t>(::syscall(SYS_pidfd_open, pid, 0));
#else
  (void)pid;
  return -1;
#endif
}

// The child's side of spawn: only async-signal-safe calls; a failure writes {step, errno} to `report` (closed
// on a successful exec) and exits 127.
[[noreturn]] void spawn_child(int ns_fd, const cpu_set_t* cpus, int out_fd, int err_fd, int report, pid_t parent,
                              char* const* argv) {
  auto fail = [report](int step) {
    int msg[2] = {step, errno};
    (void)!::write(report, msg, sizeof msg);
    ::_exit(127);
  };
  sigset_t none;
  sigemptyset(&none);
  ::sigprocmask(SIG_SETMASK, &none, nullptr);
  if (::prctl(PR_SET_PDEATHSIG, SIGKILL) != 0) fail(0);
  if (::getppid() != parent) ::_exit(127);  // the parent died before the line above: nobody to serve
  if (::setns(ns_fd, CLONE_NEWNET) != 0) fail(1);
  if (cpus && ::sched_setaffinity(0, sizeof(cpu_set_t), cpus) != 0) fail(2);
  if (out_fd >= 0 && ::dup2(out_fd, 1) < 0) fail(3);
  if (err_fd >= 0 && ::dup2(err_fd, 2) < 0) fail(3);
  ::execv(argv[0], argv);
  fail(4);
  ::_exit(127);
}

int open_output(const std::string& path, uint32_t server) {
  if (path.empty()) return -1;
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0)
    throw Error("network emulation: server " + std::to_string(server) + ": cannot open output file " + path + ": " +
                std::strerror(errno));
  return fd;
}

}  // namespace

namespace net_registry {

int add_namespace(const std::string& path) {
  if (path.size() >= kPathMax) return -1;
  for (int i = 0; i < kMaxNamespaces; ++i) {
    int expected = 0;
    if (g_namespaces[i].state.compare_exchange_strong(expected, 1)) {
      std::memcpy(g_namespaces[i].path, path.c_str(), path.size() + 1);
      g_namespaces[i].state.store(2, std::memory_order_release);
      return i;
    }
  }
  return -1;
}

void remove_namespace(int slot) {
  if (slot >= 0 && slot < kMaxNamespaces) g_namespaces[slot].state.store(0, std::memory_order_release);
}

int add_child(pid_t pid) {
  for (int i = 0; i < kMaxChildren; ++i) {
    pid_t expected = 0;
    if (g_children[i].compare_exchange_strong(expected, pid)) return i;
  }
  return -1;
}

void remove_child(int slot) {
  if (slot >= 0 && slot < kMaxChildren) g_children[slot].store(0, std::memory_order_release);
}

void delete_namespace_path(const char* path) noexcept {
  ::umount2(path, MNT_DETACH);
  ::unlink(path);
}

}  // namespace net_registry

int remove_folder_on_signal(const std::string& dir) {
  if (dir.size() >= kPathMax) return -1;
  for (int i = 0; i < kMaxFolders; ++i) {
    int expected = 0;
    if (g_folders[i].state.compare_exchange_strong(expected, 1)) {
      std::memcpy(g_folders[i].path, dir.c_str(), dir.size() + 1);
      g_folders[i].state.store(2, std::memory_order_release);
      return i;
    }
  }
  return -1;
}

void keep_folder_on_signal(int slot) {
  if (slot >= 0 && slot < kMaxFolders) g_folders[slot].state.store(0, std::memory_order_release);
}

void install_teardown_on_signals() {
  struct sigaction sa{};
  sa.sa_handler = on_teardown_signal;
  sa.sa_flags = SA_RESETHAND;
  sigemptyset(&sa.sa_mask);
  // One teardown at a time: a second signal waits for the first's re-raise, which ends the process.
  for (int s : {SIGINT, SIGTERM, SIGHUP}) sigaddset(&sa.sa_mask, s);
  for (int s : {SIGINT, SIGTERM, SIGHUP}) ::sigaction(s, &sa, nullptr);
}

std::string ServerExit::describe() const {
  std::string who = "server " + std::to_string(server) + " (pid " + std::to_string(pid) + ")";
  if (WIFEXITED(status)) return who + " exited with status " + std::to_string(WEXITSTATUS(status));
  if (WIFSIGNALED(status)) return who + " was killed by signal " + std::to_string(WTERMSIG(status)) + " (" +
                                  ::strsignal(WTERMSIG(status)) + ")";
  return who + " ended with wait status " + std::to_string(status);
}

CpuPlan cpu_plan(uint32_t servers, const std::vector<int>& available) {
  if (available.empty()) throw Error("network emulation: no CPU to run the servers on");
  CpuPlan plan;
  plan.cpus.resize(servers);
  if (servers > available.size()) {
    plan.shared = true;
    plan.message = std::to_string(servers) + " servers share " + std::to_string(available.size()) +
                   " CPUs: each runs on all of them, so their compute times are not those of separate machines";
    for (auto& c : plan.cpus) c = available;
    return plan;
  }
  // Contiguous blocks (neighbouring CPU ids tend to share a core's caches), the remainder one each to the first.
  const size_t per = available.size() / servers, extra = available.size() % servers;
  size_t next = 0;
  for (uint32_t s = 0; s < servers; ++s) {
    const size_t take = per + (s < extra ? 1 : 0);
    plan.cpus[s].assign(available.begin() + static_cast<long>(next), available.begin() + static_cast<long>(next + take));
    next += take;
  }
  return plan;
}

std::vector<int> allowed_cpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  std::vector<int> cpus;
  if (::sched_getaffinity(0, sizeof set, &set) != 0) return cpus;
  for (int c = 0; c < CPU_SETSIZE; ++c)
    if (CPU_ISSET(c, &set)) cpus.push_back(c);
  return cpus;
}

pid_t EmulatedNetwork::spawn(uint32_t server, const std::vector<std::string>& argv, const std::vector<int>& cpus,
                             const SpawnOutput& output) {
  const std::string who = "network emulation: server " + std::to_string(server);
  if (!state_ || state_->torn_down) throw Error(who + ": the network is torn down");
  if (server >= servers()) throw Error(who + ": no such server (of " + std::to_string(servers()) + ")");
  if (argv.empty()) throw Error(who + ": no command to run");
  cpu_set_t set;
  CPU_ZERO(&set);
  for (int c : cpus) {
    if (c < 0 || c >= CPU_SETSIZE) throw Error(who + ": CPU " + std::to_string(c) + " out of range");
    CPU_SET(c, &set);
  }
  std::vector<std::string> args = argv;
  if (argv[0].find('/') == std::string::npos)
    if (std::string path = find_program(argv[0]); !path.empty()) args[0] = path;
  std::vector<char*> cargs;
  for (auto& a : args) cargs.push_back(a.data());
  cargs.push_back(nullptr);
  const std::string ns = "/var/run/netns/" + state_->ns[server];
  int ns_fd = ::open(ns.c_str(), O_RDONLY | O_CLOEXEC);
  if (ns_fd < 0) throw Error(who + ": open " + ns + ": " + std::strerror(errno));
  int out_fd = -1, err_fd = -1, report[2] = {-1, -1};
  auto close_all = [&] {
    for (int fd : {ns_fd, out_fd, err_fd, report[0], report[1]})
      if (fd >= 0) ::close(fd);
  };
  try {
    out_fd = open_output(output.stdout_path, server);
    err_fd = open_output(output.stderr_path, server);
  } catch (...) {
    close_all();
    throw;
  }
  if (::pipe2(report, O_CLOEXEC) != 0) {
    close_all();
    throw Error(who + ": pipe: " + std::strerror(errno));
  }
  const pid_t parent = ::getpid();
  const pid_t pid = ::fork();
  if (pid == 0) spawn_child(ns_fd, cpus.empty() ? nullptr : &set, out_fd, err_fd, report[1], parent, cargs.data());
  if (pid < 0) {
    close_all();
    throw Error(who + ": fork: " + std::strerror(errno));
  }
  // Registered at once, so that a signal from here on kills it too.
  State::Child child{pid, server, net_registry::add_child(pid), -1};
  ::close(report[1]);
  report[1] = -1;
  int msg[2] = {0, 0};
  ssize_t got;
  while ((got = ::read(report[0], msg, sizeof msg)) < 0 && errno == EINTR) {
  }
  close_all();
  if (got > 0) {
    net_registry::remove_child(child.registry_slot);
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    static const char* const kSteps[] = {"prctl(PR_SET_PDEATHSIG)", "setns(CLONE_NEWNET)",
                                         "sched_setaffinity", "dup2 of an output", "execv"};
    const std::string step = msg[0] >= 0 && msg[0] < 5 ? kSteps[msg[0]] : "the child";
    throw Error(who + ": " + step + (msg[0] == 1 ? " into " + ns : msg[0] == 4 ? " of " + args[0] : "") +
                " failed: " + std::strerror(msg[1]));
  }
  child.pidfd = pidfd_open_or_none(pid);
  state_->children.push_back(child);
  return pid;
}

std::optional<ServerExit> EmulatedNetwork::wait_any(double timeout_s) {
  if (!state_) return std::nullopt;
  auto& kids = state_->children;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(std::max(0.0, timeout_s));
  for (;;) {
    for (size_t i = 0; i < kids.size(); ++i) {
      siginfo_t info{};
      // WNOWAIT: look without reaping, so that the pid is out of the signal registry before it can be reused.
      if (::waitid(P_PID, static_cast<id_t>(kids[i].pid), &info, WEXITED | WNOHANG | WNOWAIT) == 0 &&
          info.si_pid == kids[i].pid) {
        const State::Child c = kids[i];
        kids.erase(kids.begin() + static_cast<long>(i));
        net_registry::remove_child(c.registry_slot);
        if (c.pidfd >= 0) ::close(c.pidfd);
        ServerExit e{c.pid, c.server, 0};
        while (::waitpid(c.pid, &e.status, 0) < 0 && errno == EINTR) {
        }
        return e;
      }
    }
    const auto now = std::chrono::steady_clock::now();
    if (kids.empty() || now >= deadline) return std::nullopt;
    std::vector<pollfd> fds;
    bool polling = false;  // a child without a pidfd: wake up every 10 ms to look
    for (const auto& c : kids) {
      if (c.pidfd >= 0) fds.push_back({c.pidfd, POLLIN, 0});
      else polling = true;
    }
    auto left_ms = std::chrono::ceil<std::chrono::milliseconds>(deadline - now).count();
    if (polling) left_ms = std::min<long>(left_ms, 10);
    ::poll(fds.data(), fds.size(), static_cast<int>(left_ms));
  }
}

std::vector<ServerExit> EmulatedNetwork::kill_all(double grace_s) noexcept {
  std::vector<ServerExit> ended;
  if (!state_) return ended;
  try {
    for (const auto& c : state_->children) ::kill(c.pid, SIGTERM);
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(std::max(0.0, grace_s));
    while (!state_->children.empty()) {
      const double left = std::chrono::duration<double>(deadline - std::chrono::steady_clock::now()).count();
      if (left <= 0) break;
      if (auto e = wait_any(left)) ended.push_back(*e);
    }
    for (const auto& c : state_->children) ::kill(c.pid, SIGKILL);
    // A killed process ends within moments unless stuck in the kernel (uninterruptible I/O): bounded, so
    // that a teardown never hangs; such a child stays registered and its namespace file is deleted anyway.
    for (int tries = 0; tries < 10 && !state_->children.empty(); ++tries)
      if (auto e = wait_any(1.0)) ended.push_back(*e);
  } catch (...) {  // a failed allocation of the result: the children are still killed below
    for (const auto& c : state_->children) ::kill(c.pid, SIGKILL);
  }
  return ended;
}

std::vector<std::pair<pid_t, uint32_t>> EmulatedNetwork::running() const {
  std::vector<std::pair<pid_t, uint32_t>> r;
  if (state_)
    for (const auto& c : state_->children) r.emplace_back(c.pid, c.server);
  return r;
}

}  // namespace moesim::exec
