// A sweep as a real Slurm job array (experiments/slurm/sweep.sbatch) on a single-node Slurm that
// experiments/slurm/single-node.sh starts and stops (munged, slurmctld, slurmd; Debian's slurm-wlm and
// munge, root): the merged CSV of the 4 array tasks equals the unsharded run's byte for byte.
// scripts/build installs slurm-wlm and munge in CI; elsewhere the test is skipped when they are missing.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "tests/cli/cli_test_util.h"
#include "tests/fixtures.h"

namespace moesim::test {
namespace {

TEST(SweepSlurm, ArrayJobMergesToTheUnshardedCsv) {
  const std::string dir = temp_path("sweep_slurm");
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  ASSERT_EQ(moesim_cli(
                "-q trace synth --model qwen3-30b-a3b --tokens 60 --prompt-tokens 8 --zipf 0.8 --seed 5 -o " +
                dir + "/q.mtr")
                .code,
            0);
  std::ofstream(dir + "/spec.json") << R"({"grid": {"trace": ["q.mtr"], "policy": ["lru", "lfu", "belady"],
      "budget": ["16", "32"]}, "points": [{"command": "replay", "trace": "q.mtr", "policy": "fifo", "budget": "16"}]})";
  const CliResult whole = moesim_cli("-q sweep " + dir + "/spec.json -o " + dir + "/whole");
  ASSERT_EQ(whole.code, 0) << whole.err;

  const ShellResult slurm = run_shell(test::source_path("experiments/slurm/single-node.sh ") +
                                      MOESIM_CLI_PATH + " " + dir + "/spec.json " + dir + "/slurm 4 2>&1");
  const char* ci = std::getenv("CI");
  if (slurm.status == 77 && !(ci && std::string(ci) == "true"))
    GTEST_SKIP() << "no Slurm here (apt-get install slurm-wlm munge, as root): " << slurm.out;
  ASSERT_EQ(slurm.status, 0) << slurm.out;
  EXPECT_EQ(read_text(dir + "/slurm/merged/results.csv"), read_text(dir + "/whole/results.csv"));
  for (int i = 0; i < 4; ++i)
    EXPECT_THAT(read_text(dir + "/slurm/shard-" + std::to_string(i) + "/manifest.json"),
                ::testing::HasSubstr("\"shard\": \"" + std::to_string(i) + "/4\""));
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace moesim::test
