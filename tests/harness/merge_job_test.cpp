// `moesim merge` called directly (harness/merge_job.h) on shards of the tiny sweep (tests/harness/
// tiny_sweep.h, 6 points): two shards merge into the unsharded run's results.csv byte for byte; one shard
// alone is an incomplete merge that says so; a shard of another spec is refused and leaves nothing behind.
#include "harness/merge_job.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "base/atomic_file.h"
#include "base/error.h"
#include "base/warnings.h"
#include "tests/error_of.h"
#include "tests/harness/test_dir.h"
#include "tests/harness/tiny_sweep.h"

namespace moesim::harness {
namespace {

using test::error_of;
using ::testing::HasSubstr;
namespace fs = std::filesystem;

class MergeJob : public test::TestDir {
 protected:
  void SetUp() override {
    TestDir::SetUp();
    test::write_tiny_sweep_spec(path("spec.json"));
    ASSERT_EQ(test::run_tiny_sweep(path("spec.json"), path("shard0"), "0/2").error, "");
    ASSERT_EQ(test::run_tiny_sweep(path("spec.json"), path("shard1"), "1/2").error, "");
  }
};

TEST_F(MergeJob, TwoShardsMergeIntoTheUnshardedCsv) {
  ASSERT_EQ(test::run_tiny_sweep(path("spec.json"), path("whole")).error, "");
  const MergeResult r = merge_shards({{path("shard0"), path("shard1")}, path("merged")});
  EXPECT_EQ(r.points_total, test::kTinySweepPoints);
  EXPECT_EQ(r.points_done, test::kTinySweepPoints);
  EXPECT_EQ(r.state, "finished");
  EXPECT_EQ(r.results_csv, path("merged") + "/results.csv");
  EXPECT_EQ(read_file(r.results_csv), read_file(path("whole/results.csv")));
  EXPECT_EQ(r.doc["points_missing"], 0);
  EXPECT_EQ(r.doc["header"]["command"], "merge");
  EXPECT_THAT(read_file(r.manifest), HasSubstr("\"state\": \"finished\""));
  // Merging again into the same folder changes nothing.
  EXPECT_EQ(merge_shards({{path("shard1"), path("shard0")}, path("merged")}).points_done,
            test::kTinySweepPoints);
  EXPECT_EQ(read_file(r.results_csv), read_file(path("whole/results.csv")));
}

TEST_F(MergeJob, OneShardAloneIsAnIncompleteMergeThatSaysSo) {
  clear_warnings();
  set_warnings_printed(false);
  const MergeResult r = merge_shards({{path("shard0")}, path("half")});
  set_warnings_printed(true);
  EXPECT_EQ(r.points_done, 3u);
  EXPECT_EQ(r.state, "incomplete");
  EXPECT_EQ(r.doc["points_missing"], 3);
  EXPECT_THAT(r.doc["warnings"].dump(), HasSubstr("3 of the spec's 6 points are in none of the folders"));
  EXPECT_THAT(read_file(r.manifest), HasSubstr("\"state\": \"incomplete\""));
}

TEST_F(MergeJob, AShardOfAnotherSpecIsRefusedAndLeavesNothingBehind) {
  test::write_tiny_sweep_spec(path("other.json"), R"(["3"])");
  ASSERT_EQ(test::run_tiny_sweep(path("other.json"), path("other")).error, "");
  EXPECT_THAT(error_of([&] {
                merge_shards({{path("shard0"), path("other")}, path("new/merged")});
              }),
              HasSubstr("a shard of another spec"));
  EXPECT_FALSE(fs::exists(path("new")));
  // Nor into a folder that holds another spec's results.
  EXPECT_THAT(error_of([&] {
                merge_shards({{path("shard0")}, path("other")});
              }),
              HasSubstr("holds the results of another spec"));
}

}  // namespace
}  // namespace moesim::harness
