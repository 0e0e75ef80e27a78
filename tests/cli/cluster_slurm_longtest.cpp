// A real cluster started by Slurm (docs/cluster-exec.md, "Running on real machines"): on the single-node
// Slurm of experiments/slurm/cluster-single-node.sh, `srun -n 3 moesim cluster-server` starts the servers
// (each its rank from $SLURM_PROCID), which meet the coordinator (`cluster --launch none`) in a rendezvous
// folder holding the secret this test wrote; the run serves requests and srun ends by itself once the
// coordinator has shut the servers down. scripts/build installs slurm-wlm and munge in CI; elsewhere the test
// is skipped when they are missing, as the sweep's Slurm test is.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "base/json_io.h"
#include "cluster_exec_util.h"
#include "tests/fixtures.h"

namespace moesim::test {
namespace {

TEST(ClusterSlurm, SrunServersMeetTheCoordinatorInTheRendezvousFolder) {
  const ExecCluster c = make_exec_cluster("slurm", {0.1, 0.9, 1.7, 2.5, 3.3});
  RunCleanup cleanup{c.spec, "", ""};
  const auto dir = c.dir / "rendezvous";
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "secret") << "5eb1c0ffee0ddba11deadbeefcafe123\n";
  std::filesystem::permissions(dir / "secret",
                               std::filesystem::perms::owner_read | std::filesystem::perms::owner_write);
  const std::string out = (c.dir / "out.json").string();

  const ShellResult slurm =
      run_shell(test::source_path("experiments/slurm/cluster-single-node.sh ") + MOESIM_CLI_PATH + " " +
                c.spec + " " + dir.string() + " " + out + " 5s 2>&1");
  const char* ci = std::getenv("CI");
  if (slurm.status == 77 && !(ci && std::string(ci) == "true"))
    GTEST_SKIP() << "no Slurm here (apt-get install slurm-wlm munge, as root): " << slurm.out;
  ASSERT_EQ(slurm.status, 0) << slurm.out;
  const Json j = load_json_file(out);
  EXPECT_EQ(j["platform"]["kind"], "exec");
  EXPECT_EQ(j["platform"]["launch"], "none");
  EXPECT_EQ(j["requests"].get<uint64_t>(), 15u);
  EXPECT_GT(j["remote_invocations"].get<uint64_t>(), 0u);
  for (const char* s : {"a", "b", "c"}) {
    EXPECT_TRUE(std::filesystem::exists(dir / (std::string(s) + ".experts"))) << s;
    EXPECT_TRUE(std::filesystem::exists(dir / (std::string(s) + ".control"))) << s;
  }
  EXPECT_TRUE(cluster_servers_of(c.spec).empty());
  std::filesystem::remove_all(c.dir);
}

}  // namespace
}  // namespace moesim::test
