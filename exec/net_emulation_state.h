// What an EmulatedNetwork holds (exec/net_emulation.h): shared by net_emulation.cpp (namespaces, links,
// routes, shaping) and net_processes.cpp (the server processes), so that teardown() sees both.
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

#include "exec/net_emulation.h"

namespace moesim::exec {

struct EmulatedNetwork::State {
  struct Link {
    std::string iface[2];    // a's end, b's end
    std::string address[2];  // the /31's two addresses
    std::string qdisc[2];    // tc arguments after "root", per direction
  };
  struct Child {
    pid_t pid = 0;
    uint32_t server = 0;
    int registry_slot = -1;
    int pidfd = -1;  // -1 where pidfd_open is missing: wait_any then polls
  };

  NetEmulationSpec spec;
  std::vector<std::string> ns;          // [server] namespace name
  std::vector<int> ns_slots;            // [server] signal-registry slot
  std::vector<std::string> addresses;   // [server] /32 on lo
  std::vector<Link> links;              // [link]
  bool kernel_latency = false;
  uint32_t control_block = 0;  // the /22 of 10.254/16 its control links use
  std::string qdisc;                    // "netem" or "tbf"
  std::string netem_error;              // why netem was not used ("" when it was)
  std::vector<Child> children;
  bool torn_down = false;
};

// The registry install_teardown_on_signals()'s handler tears down from: fixed-size, lock-free, written by
// net_emulation.cpp (namespaces) and net_processes.cpp (children). Slots are -1 when full (the signal
// teardown then misses that item; the destructor and remove_stale still cover it).
namespace net_registry {
int add_namespace(const std::string& path);  // /var/run/netns/<name>
void remove_namespace(int slot);
int add_child(pid_t pid);
void remove_child(int slot);
// Deletes a namespace's mount and file (what `ip netns del` does) with async-signal-safe calls only.
void delete_namespace_path(const char* path) noexcept;
}  // namespace net_registry

// A program's full path: PATH first, then the sbin folders a non-login root shell may lack; "" when not found.
std::string find_program(const std::string& name);

}  // namespace moesim::exec
