// How the processes of a real cluster find each other (docs/cluster-exec.md): a folder that every process can
// read and write -- one host's /tmp for the emulated cluster, a shared file system across hosts under Slurm
// or any launcher. Server NAME publishes NAME.experts (the address of its ExpertService, which its peers
// call) once it listens, then NAME.control (its control service, which the coordinator calls) once it has its
// peers; each file is written atomically, so a reader sees a whole address or none.
//
// The run's shared secret lives in a file of that folder, readable by its owner only: never on a command line
// (other users read /proc/PID/cmdline) and never in the environment of a launcher's log.
#pragma once

#include <functional>
#include <string>
#include <vector>

namespace moesim::harness {

void publish_address(const std::string& dir, const std::string& server, const std::string& what,
                     const std::string& address);
// The addresses servers[i] published as `what`, in order, once all have. Polls every 20 ms; `check` runs at
// every poll and may throw (a server process died). Throws moesim::Error naming the servers still missing
// after timeout_s.
std::vector<std::string> await_addresses(const std::string& dir, const std::vector<std::string>& servers,
                                         const std::string& what, double timeout_s,
                                         const std::function<void()>& check = {});
// A new secret: 32 random bytes from the kernel, as hex.
std::string new_secret();
// A new secret in `dir`/secret, mode 0600; returns the file's path.
std::string make_secret_file(const std::string& dir);
// The environment variable a launcher may pass the secret in to the processes it starts (readable by their
// owner only, in /proc/PID/environ), instead of a file.
inline constexpr char kSecretEnv[] = "MOESIM_CLUSTER_SECRET";
// The secret of a file made so: moesim::Error naming the file when it is missing, empty, longer than 4 KiB or
// readable by group or others.
std::string read_secret_file(const std::string& path);

}  // namespace moesim::harness
