// An emulated cluster network on one Linux machine: one network namespace per server, joined by veth pairs
// shaped by tc, and the server processes launched inside their namespaces on their own CPUs. It is the OS
// layer of a cluster run on real processes (the links and routes come from core/cluster_spec.h's topology
// and the simulator's routes); it knows nothing of models or requests.
//
// Layout of one run (run id R, servers 0..N-1):
//   - namespace "moesim-R-<n>" per server, with lo up and the server's /32 address on lo (address(n):
//     "10.255.<n/256>.<n%256>"), so that a server has one address whatever link a peer reaches it through;
//   - link k (a, b): a veth pair created directly inside the two namespaces (never in the root namespace, so
//     that a crash leaves nothing behind there), named "m<hash4>s<server hex>l<k hex>" (interface names
//     have at most 15 characters; hash4 is the run id's hash, so an interface tells its run), with the /31
//     10.<2k/65536>.<2k/256%256>.<2k%256> (RFC 3021 point-to-point: both addresses usable);
//   - with NetEmulationSpec::control, a control link per server from the root namespace (the coordinator's):
//     a veth pair "m<hash4>c<server hex>" (root side) / "m<hash4>C<server hex>" (the server's), not shaped,
//     with a /31 of the run's own /22 of 10.254.0.0/16 (one that no root address is in: runs on one machine
//     share the root namespace), the root side first, then control_address(n), the server's. Deleting the
//     namespace deletes the pair, root side included (the teardown deletes the root side at once);
//   - a route per other server through next_hop, with the source hint of the server's own address, so that
//     replies route back over /32 addresses every server knows; ip_forward on in every namespace (multi-hop
//     routes) and rp_filter off (a next_hop table need not be symmetric);
//   - each veth end shapes its own direction (egress) at the link's bandwidth: `netem delay L rate B` where
//     the kernel has netem; otherwise `tbf rate B` and kernel_latency() == false, so that the caller adds each
//     link's latency in user space (tbf has no delay).
//
// Needs root (CAP_NET_ADMIN for links and tc, CAP_SYS_ADMIN for setns and the namespace mounts) and iproute2's
// `ip` and `tc`; unavailable_reason() says what is missing, so that tests and callers skip with the reason.
//
// Teardown on every exit path:
//   - teardown() (the destructor calls it) kills the server processes and deletes the namespaces; the veths
//     and routes live inside them and go with them;
//   - install_teardown_on_signals(): SIGINT, SIGTERM and SIGHUP run a handler that does the teardown itself
//     with async-signal-safe system calls only (kill, waitpid, nanosleep, umount2, unlink; no locks, no
//     allocation) over a fixed-size registry of every live network's namespaces and children, then re-raises
//     the signal with its default action, so that the exit status still says which signal ended the run.
//     It works whatever the main thread is doing (blocked in a call, in another library), which a flag polled
//     by a run loop would not;
//   - a server that dies: wait_any() reports it, and the caller tears down;
//   - a run killed by SIGKILL (no handler runs): its children die with it (PR_SET_PDEATHSIG) and the next
//     run's remove_stale() deletes its namespaces, whose names carry the dead run's pid.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "base/json_io.h"

namespace moesim::exec {

struct EmulatedLink {
  uint32_t a = 0, b = 0;  // server indices, a != b; the link is undirected, shaped per direction
  double bandwidth = 0;   // bytes/s, >= 1000 (each direction)
  double latency = 0;     // seconds, >= 0 (each direction)
};

struct NetEmulationSpec {
  std::vector<std::string> server_names;  // >= 1; for describe() and messages
  std::vector<EmulatedLink> links;        // at most one link per pair of servers
  // next_hop[from][to]: the neighbour of `from` (a server linked to it) on the route to `to`, -1 for
  // from == to. Every route must reach its end within N hops.
  std::vector<std::vector<int>> next_hop;
  // Names the run's namespaces: letters, digits, '_' and '.', at most 32 characters, no '-'. Its leading
  // digits, when it has any, are the pid of the process that owns the run (remove_stale() deletes the
  // namespaces of runs whose pid is gone): use new_run_id().
  std::string run_id;
  // A control link per server from the root namespace (unshaped): for a coordinator outside the cluster.
  bool control = false;
};

// One server process that ended: its pid, server and wait status (WIFEXITED / WIFSIGNALED decode it).
struct ServerExit {
  pid_t pid = 0;
  uint32_t server = 0;
  int status = 0;
  std::string describe() const;  // "server 2 (pid 123) exited with status 1" / "was killed by signal 9"
};

// Where a spawned server's stdout and stderr go: a file path (created or truncated), or "" to inherit ours.
struct SpawnOutput {
  std::string stdout_path;
  std::string stderr_path;
};

// The CPUs each server runs on. Disjoint sets while there are at least as many CPUs as servers; with fewer,
// servers must share: `shared` is true, every server gets every CPU (so that the scheduler balances them
// rather than a fixed pinning loading some CPUs twice as much as others) and `message` says so, for the
// caller to warn and record in its outputs.
struct CpuPlan {
  std::vector<std::vector<int>> cpus;  // [server] -> CPU ids, in the order of `available`
  bool shared = false;
  std::string message;  // "" when not shared
};
// Throws moesim::Error when `available` is empty.
CpuPlan cpu_plan(uint32_t servers, const std::vector<int>& available);
// The CPUs this process may run on (sched_getaffinity), ascending.
std::vector<int> allowed_cpus();

class EmulatedNetwork {
 public:
  // Builds the run's namespaces, links, routes and shaping. Throws moesim::Error: a bad spec (naming the
  // field: "links[2].bandwidth", "next_hop[0][3]"); unavailable_reason() when not usable here; or the first
  // command that failed, with its stderr, after tearing down what was made.
  static EmulatedNetwork create(const NetEmulationSpec& spec);

  // "" when networks can be created here; otherwise what is missing (root with CAP_NET_ADMIN and
  // CAP_SYS_ADMIN, iproute2's ip and tc).
  static std::string unavailable_reason();
  // The rule behind it, for tests: the capabilities held and whether ip and tc were found.
  static std::string unavailable_reason_for(bool net_admin, bool sys_admin, bool have_ip, bool have_tc);

  // "<pid>.<sequence>": unique among this process's runs, and its pid lets remove_stale() tell a dead run.
  static std::string new_run_id();
  // Deletes the namespaces "moesim-<run_prefix>*" of runs whose owner pid is no longer alive (and those
  // namespaces' processes), as left by a run killed by SIGKILL or a crash. Call at start with "" for all.
  // A dead run whose pid has been reused by a live process stays until that process ends: a leftover, never
  // a live run's loss.
  static void remove_stale(const std::string& run_prefix = "");
  // Deletes every namespace of the run `run_id` and kills the processes inside them, whether its owner is
  // alive or not: for a test's clean-up of its own run when the test failed half-way.
  static void remove_run(const std::string& run_id);
  // The names of the namespaces "moesim-<run_prefix>*" that exist now (`ip netns list`'s), sorted.
  static std::vector<std::string> list_namespaces(const std::string& run_prefix = "");
  // The interface-name prefix "m<hash4>" of a run's veths.
  static std::string veth_prefix(const std::string& run_id);

  EmulatedNetwork(EmulatedNetwork&&) noexcept;
  EmulatedNetwork& operator=(EmulatedNetwork&&) noexcept;
  EmulatedNetwork(const EmulatedNetwork&) = delete;
  EmulatedNetwork& operator=(const EmulatedNetwork&) = delete;
  ~EmulatedNetwork();

  // The accessors below are for a network returned by create(), not one moved from.
  uint32_t servers() const;
  const std::string& run_id() const;
  const std::string& address(uint32_t server) const;  // "10.255.0.2", reachable from every other server
  const std::string& ns_name(uint32_t server) const;   // "moesim-R-2"
  // The server's end of its control link, reachable from the root namespace ("" without spec.control).
  std::string control_address(uint32_t server) const;
  // True when the links' latencies are applied by the kernel (netem); false when only their bandwidth is
  // (tbf) and the caller must delay each message by its link's latency itself.
  bool kernel_latency() const;
  // {"run_id", "kernel_latency", "qdisc": "netem"|"tbf" (null without links), "netem_error" (why netem was
  //  not used, "" when it was),
  //  "servers": [{"name", "namespace", "address"}], "links": [{"a", "b", "bandwidth", "latency",
  //  "interfaces": [a's, b's], "addresses": [a's, b's], "qdisc": the tc arguments of each direction}]}.
  Json describe() const;

  // Kills the server processes (kill_all) and deletes the namespaces. Idempotent; never throws.
  void teardown() noexcept;

  // Forks a server: in the child, joins the server's namespace (setns on /var/run/netns/<ns_name>), pins it to
  // `cpus` (sched_setaffinity; empty: inherit ours), sends stdout/stderr where `output` says, and execv's
  // argv (argv[0] without a '/' is looked up in PATH here). The child dies with the thread that spawned it
  // (PR_SET_PDEATHSIG), so spawn from the thread that runs the whole run. Throws moesim::Error naming the
  // step that failed (an output file, setns, the affinity, the exec) with its errno text.
  pid_t spawn(uint32_t server, const std::vector<std::string>& argv, const std::vector<int>& cpus,
              const SpawnOutput& output = {});
  // Waits up to timeout_s for any spawned server to end, reaps it and reports it; nullopt when none ended
  // (or none is running). A run loop calls it and tears down when a server ends unexpectedly.
  std::optional<ServerExit> wait_any(double timeout_s);
  // SIGTERM to every running server, SIGKILL to those still running after grace_s; reaps them all and
  // returns how each ended. Never throws.
  std::vector<ServerExit> kill_all(double grace_s = 2.0) noexcept;
  // The pids of the servers running now (spawned, not yet reaped), with their server index.
  std::vector<std::pair<pid_t, uint32_t>> running() const;

  struct State;

 private:
  explicit EmulatedNetwork(std::unique_ptr<State> state);
  std::unique_ptr<State> state_;
};

// SIGINT, SIGTERM and SIGHUP tear down every live EmulatedNetwork (children killed, namespaces deleted) and
// then end the process with that signal (see the top of this file for how). Idempotent. Call it once the
// first network exists or before; a network created later is covered too.
void install_teardown_on_signals();
// A folder of files (no subfolders) that the signal teardown removes too, after the servers and namespaces:
// a run's temporary folder, which holds its secret. Returns a slot for keep_folder_on_signal (-1: the registry
// is full or the path too long; the folder is then left on a signal). Call keep_folder_on_signal before the
// folder goes or when it is no longer the run's.
int remove_folder_on_signal(const std::string& dir);
void keep_folder_on_signal(int slot);

}  // namespace moesim::exec
