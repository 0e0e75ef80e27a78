// `moesim sweep` and `moesim merge` end to end: an unsharded run, the same spec as 4 shards under GNU
// parallel, and a killed-and-resumed run give byte-identical merged CSVs; merge refuses another spec's
// shards; spec errors name the file and the JSON path.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "tests/cli/cli_test_util.h"

namespace moesim::test {
namespace {

using ::testing::HasSubstr;

const std::string kModel = std::string(MOESIM_TEST_DATA_DIR) + "/models/tiny-moe.json";

class SweepCli : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = temp_path("sweep_cli");
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
    ASSERT_EQ(moesim_cli("-q trace synth --model " + kModel + " --tokens 24 --prompt-tokens 8 --zipf 0.8 --seed 3 -o " +
                         dir_ + "/tiny.mtr")
                  .code,
              0);
    // 3 policies x 2 budgets x 2 seeds = 12 points; the trace path is relative to the spec's folder.
    std::ofstream(dir_ + "/spec.json") << R"({"description": "test", "grid": {"trace": ["tiny.mtr"], "model": [")" +
                                              kModel + R"("], "system": ["offload"], "policy": ["lru", "lfu", "belady"],
        "budget": ["4", "8"], "seed": [1, 2]}})";
  }
  static void TearDownTestSuite() { std::filesystem::remove_all(dir_); }
  static std::string dir_;
};
std::string SweepCli::dir_;

TEST_F(SweepCli, ShardedKilledAndUnshardedRunsGiveTheSameCsv) {
  const std::string spec = dir_ + "/spec.json";
  const CliResult whole = moesim_cli("-q sweep " + spec + " --jobs 2 -o " + dir_ + "/whole");
  ASSERT_EQ(whole.code, 0) << whole.err;
  const std::string csv = read_text(dir_ + "/whole/results.csv");
  EXPECT_EQ(std::count(csv.begin(), csv.end(), '\n'), 13);  // header + 12 points
  EXPECT_THAT(csv, HasSubstr(",\"tiny.mtr\","));

  // 4 shards, run by GNU parallel as on a cluster, then merged.
  ASSERT_EQ(run_shell("parallel --version > /dev/null 2>&1").status, 0)
      << "GNU parallel is missing: scripts/build installs Debian's `parallel`";
  const ShellResult par = run_shell("parallel --will-cite -j 4 " + std::string(MOESIM_CLI_PATH) + " -q sweep " + spec +
                                    " --jobs 1 --shard {}/4 -o " + dir_ + "/shard{} ::: 0 1 2 3 2>&1");
  ASSERT_EQ(par.status, 0) << par.out;
  const CliResult merged = moesim_cli("-q merge " + dir_ + "/shard0 " + dir_ + "/shard1 " + dir_ + "/shard2 " + dir_ +
                                      "/shard3 -o " + dir_ + "/merged");
  ASSERT_EQ(merged.code, 0) << merged.err;
  EXPECT_EQ(read_text(dir_ + "/merged/results.csv"), csv);

  // Killed at some point (maybe before the first point, maybe after the last), then resumed.
  run_shell("timeout -s KILL 0.3 " + std::string(MOESIM_CLI_PATH) + " -q sweep " + spec + " --jobs 1 -o " + dir_ +
            "/killed > /dev/null 2>&1");
  const CliResult resumed = moesim_cli("-q sweep " + spec + " --jobs 1 --resume -o " + dir_ + "/killed");
  ASSERT_EQ(resumed.code, 0) << resumed.err;
  EXPECT_EQ(read_text(dir_ + "/killed/results.csv"), csv);

  // A point lost on purpose is run again by --resume, and only with it.
  const auto first = *std::filesystem::directory_iterator(dir_ + "/whole/points");
  std::filesystem::remove(first.path());
  EXPECT_EQ(moesim_cli("-q sweep " + spec + " -o " + dir_ + "/whole").code, 2);
  ASSERT_EQ(moesim_cli("-q sweep " + spec + " --resume -o " + dir_ + "/whole").code, 0);
  EXPECT_EQ(read_text(dir_ + "/whole/results.csv"), csv);
}

TEST_F(SweepCli, MergeRefusesAnotherSpecsShards) {
  std::ofstream(dir_ + "/other.json") << R"({"grid": {"trace": ["tiny.mtr"], "model": [")" + kModel +
                                             R"("], "policy": ["fifo"], "budget": ["4"]}})";
  ASSERT_EQ(moesim_cli("-q sweep " + dir_ + "/other.json -o " + dir_ + "/o1").code, 0);
  ASSERT_EQ(moesim_cli("-q sweep " + dir_ + "/spec.json --shard 0/8 -o " + dir_ + "/o2").code, 0);
  const CliResult r = moesim_cli("-q merge " + dir_ + "/o1 " + dir_ + "/o2 -o " + dir_ + "/o3");
  EXPECT_EQ(r.code, 1);
  EXPECT_THAT(r.err, HasSubstr("another spec"));
}

TEST_F(SweepCli, SpecErrorsNameTheFileAndThePath) {
  std::ofstream(dir_ + "/bad.json") << R"({"grid": {"trace": ["tiny.mtr"], "policy": "lru"}})";
  CliResult r = moesim_cli("-q sweep " + dir_ + "/bad.json -o " + dir_ + "/b");
  EXPECT_EQ(r.code, 1);
  EXPECT_THAT(r.err, HasSubstr("bad.json: /grid/policy: expected a non-empty list"));
  std::ofstream(dir_ + "/bad2.json") << R"({"grid": {"trace": ["tiny.mtr"], "colour": ["red"]}})";
  r = moesim_cli("-q sweep " + dir_ + "/bad2.json -o " + dir_ + "/b");
  EXPECT_THAT(r.err, HasSubstr("bad2.json: /grid/colour: unknown parameter"));
  r = moesim_cli("-q sweep " + dir_ + "/spec.json --shard 4/4 -o " + dir_ + "/b");
  EXPECT_EQ(r.code, 2);
  EXPECT_THAT(r.err, HasSubstr("--shard"));
  // A point that fails is reported with its error, and the sweep fails.
  std::ofstream(dir_ + "/failing.json") << R"({"points": [{"trace": "no-such.mtr", "budget": "4"}]})";
  r = moesim_cli("-q sweep " + dir_ + "/failing.json -o " + dir_ + "/f");
  EXPECT_EQ(r.code, 1);
  EXPECT_THAT(r.err, HasSubstr("no-such.mtr"));
  EXPECT_THAT(read_text(dir_ + "/f/manifest.json"), HasSubstr("no-such.mtr"));
}

}  // namespace
}  // namespace moesim::test
