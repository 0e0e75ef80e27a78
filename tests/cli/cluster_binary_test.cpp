// moesim and moesim-cluster (harness/cluster/cluster_binary.h): moesim loads none of gRPC's libraries, hands
// a real-cluster command to moesim-cluster beside it with the same arguments (its refusals are
// moesim-cluster's), and, where moesim-cluster is missing, says so with the path and how to build it.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "cli_test_util.h"
#include "cluster_exec_util.h"

namespace moesim::test {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

TEST(ClusterBinary, MoesimLoadsNoGrpcAndMoesimClusterDoes) {
  MOESIM_SKIP_WITHOUT_EXEC();
  if (run_shell("command -v ldd >/dev/null").status != 0) GTEST_SKIP() << "ldd is not installed";
  const std::filesystem::path moesim = MOESIM_CLI_PATH;
  const ShellResult lite = run_shell("ldd " + moesim.string());
  ASSERT_EQ(lite.status, 0) << lite.out;
  EXPECT_THAT(lite.out, Not(HasSubstr("libgrpc"))) << lite.out;
  EXPECT_THAT(lite.out, Not(HasSubstr("libprotobuf"))) << lite.out;
  const ShellResult full = run_shell("ldd " + (moesim.parent_path() / "moesim-cluster").string());
  ASSERT_EQ(full.status, 0) << full.out;
  EXPECT_THAT(full.out, HasSubstr("libgrpc")) << full.out;
}

TEST(ClusterBinary, RealClusterCommandsRunInMoesimCluster) {
  MOESIM_SKIP_WITHOUT_EXEC();
  // A refusal that only the real cluster's code gives, reached through moesim: moesim-cluster ran the
  // command.
  const ExecCluster c = make_exec_cluster("relay", {0.1});
  const CliResult r = moesim_cli("cluster-server " + c.spec + " --server no-such-server --rendezvous " +
                                 (c.dir / "rendezvous").string());
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_THAT(r.err, HasSubstr("has no server \"no-such-server\""));
  std::filesystem::remove_all(c.dir);
}

TEST(ClusterBinary, MissingMoesimClusterIsNamedWithHowToBuildIt) {
  MOESIM_SKIP_WITHOUT_EXEC();
  const auto dir = fresh_test_dir("moesim_cluster_binary", "missing");
  const auto alone = dir / "moesim";
  std::filesystem::copy_file(MOESIM_CLI_PATH, alone);
  const ShellResult r =
      run_shell(alone.string() + " cluster-server x.json --server a --rendezvous " + dir.string() + " 2>&1");
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_THAT(r.out, HasSubstr((dir / "moesim-cluster").string() + ", which is missing"));
  EXPECT_THAT(r.out, HasSubstr("scripts/build moesim-cluster"));
  // The other commands need nothing beside it.
  EXPECT_EQ(run_shell(alone.string() + " --version >/dev/null 2>&1").status, 0);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace moesim::test
