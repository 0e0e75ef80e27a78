// Linked into `moesim` instead of harness/cluster/'s real-cluster files (harness/cluster/cluster_binary.h
// says why): the real cluster's entry points hand the whole command to `moesim-cluster`. Built only with
// exec; the build without exec uses harness/cluster/cluster_absent.cpp for the same entry points.
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <string>
#include <vector>

#include "base/error.h"
#include "harness/cluster/cluster_binary.h"
#include "harness/cluster/cluster_server_job.h"
#include "harness/cluster/cluster_validation.h"
#include "harness/cluster/real_cluster.h"

namespace moesim::harness {

namespace {

// This process's arguments as the kernel holds them: NUL-separated, argv[0] first.
std::vector<std::string> own_arguments() {
  std::ifstream in("/proc/self/cmdline", std::ios::binary);
  const std::string all((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::vector<std::string> args;
  std::string::size_type start = 0;
  while (start < all.size()) {
    const std::string::size_type end = all.find('\0', start);
    args.push_back(all.substr(start, end == std::string::npos ? std::string::npos : end - start));
    if (end == std::string::npos) break;
    start = end + 1;
  }
  if (args.empty()) throw Error("cannot read this process's arguments from /proc/self/cmdline");
  return args;
}

}  // namespace

void enter_cluster_binary() {
  std::error_code ec;
  const std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec) throw Error("cannot find the running executable (/proc/self/exe): " + ec.message());
  const std::filesystem::path target = self.parent_path() / "moesim-cluster";
  if (::access(target.c_str(), X_OK) != 0)
    throw UsageError(
        "the real cluster (cluster --platform exec, validate --cluster, cluster-server) runs in " +
        target.string() +
        ", which is missing: build it with `scripts/build moesim-cluster` (or `scripts/build`, "
        "which builds every target)");
  std::vector<std::string> args = own_arguments();
  args[0] = target.string();
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  std::cout.flush();
  std::cerr.flush();
  std::fflush(nullptr);
  ::execv(target.c_str(), argv.data());
  throw Error("cannot start " + target.string() + ": " + std::strerror(errno));
}

RealClusterRun run_real_cluster(const std::string&, const serving::ClusterInput&, serving::ClusterOptions,
                                const RealClusterArgs&) {
  enter_cluster_binary();
  throw Error(
      "run_real_cluster: moesim-cluster did not take over");  // unreachable: the call above never returns
}

ClusterValidationOutput validate_cluster(const ClusterValidateArgs&) {
  enter_cluster_binary();
  throw Error("validate_cluster: moesim-cluster did not take over");
}

void run_cluster_server(const ClusterServerArgs&) {
  enter_cluster_binary();
  throw Error("run_cluster_server: moesim-cluster did not take over");
}

}  // namespace moesim::harness
