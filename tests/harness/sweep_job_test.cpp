// `moesim sweep` called directly (harness/sweep_job.h) on the tiny sweep (tests/harness/tiny_sweep.h: replay
// of the tiny trace, LRU, LFU and Belady at 2 and 4 experts per layer). A point's metrics are its command's,
// counted by hand in replay_job_test.cpp; the CSV does not depend on the threads or on which points a
// resumed run finds done; a point that fails is reported with its error while the others finish.
#include "harness/sweep_job.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <filesystem>
#include <string>

#include "base/atomic_file.h"
#include "base/error.h"
#include "harness/sweep_spec.h"
#include "tests/error_of.h"
#include "tests/harness/test_dir.h"
#include "tests/harness/tiny_sweep.h"

namespace moesim::harness {
namespace {

using test::error_of;
using ::testing::HasSubstr;
namespace fs = std::filesystem;

class SweepJob : public test::TestDir {
 protected:
  void SetUp() override {
    TestDir::SetUp();
    test::write_tiny_sweep_spec(path("spec.json"));
  }
  // The finished point of the spec's point `index`.
  Json point(const std::string& out, size_t index) const {
    const sweep::Spec spec = sweep::load_spec(path("spec.json"));
    return sweep::read_point_file(sweep::point_file(out, sweep::point_id(spec, spec.points.at(index))));
  }
};

TEST_F(SweepJob, EveryPointHoldsItsReplaysHitsAndTheCsvOneRowEach) {
  const SweepOutcome o = test::run_tiny_sweep(path("spec.json"), path("out"), "", 2);
  EXPECT_EQ(o.error, "");
  EXPECT_EQ(o.summary["points_total"], test::kTinySweepPoints);
  EXPECT_EQ(o.summary["points_run"], test::kTinySweepPoints);
  EXPECT_EQ(o.summary["points_failed"], 0);
  // Grid order: policy-major, then budget. Belady at 2 experts per layer: 2 hits; at 4: 5 hits.
  EXPECT_EQ(point(path("out"), 4)["metrics"]["hits"], 2);
  for (size_t i : {1, 3, 5}) EXPECT_EQ(point(path("out"), i)["metrics"]["hits"], 5) << i;
  const std::string csv = read_file(path("out/results.csv"));
  EXPECT_EQ(std::count(csv.begin(), csv.end(), '\n'), 1 + static_cast<long>(test::kTinySweepPoints));
  EXPECT_THAT(read_file(path("out/manifest.json")), HasSubstr("\"state\": \"finished\""));
}

// One thread or two, all at once or resumed after a lost point: the same results.csv; a resumed run runs only
// the points it does not find.
TEST_F(SweepJob, AResumedRunRunsOnlyWhatIsMissingAndGivesTheSameCsv) {
  ASSERT_EQ(test::run_tiny_sweep(path("spec.json"), path("a"), "", 1).error, "");
  ASSERT_EQ(test::run_tiny_sweep(path("spec.json"), path("b"), "", 2).error, "");
  const std::string csv = read_file(path("a/results.csv"));
  EXPECT_EQ(read_file(path("b/results.csv")), csv);
  fs::remove(sweep::point_file(path("b"), point(path("b"), 2)["id"].get<std::string>()));
  std::atomic<int> runs = 0;
  const PointRunner counting = [&runs](std::vector<std::string> args) {
    ++runs;
    cli::run_command(std::move(args));
  };
  SweepArgs a;
  a.spec = path("spec.json");
  a.out = path("b");
  a.resume = true;
  a.report = false;
  const SweepOutcome o = run_sweep(a, counting, cli::command_line_inputs, cli::check_command);
  EXPECT_EQ(o.error, "");
  EXPECT_EQ(runs, 1);
  EXPECT_EQ(o.summary["points_run"], 1);
  EXPECT_EQ(read_file(path("b/results.csv")), csv);
}

// A budget of 1 expert per layer is below the top-k (2): those 3 points fail with replay's own error, the
// others finish, and the CSV has the finished ones.
TEST_F(SweepJob, AFailedPointIsReportedWithItsErrorAndTheOthersFinish) {
  test::write_tiny_sweep_spec(path("spec.json"), R"(["1", "4"])");
  const SweepOutcome o = test::run_tiny_sweep(path("spec.json"), path("out"));
  EXPECT_THAT(o.error, HasSubstr("3 point(s) failed"));
  EXPECT_EQ(o.summary["points_failed"], 3);
  ASSERT_EQ(o.summary["failed"].size(), 3u);
  EXPECT_THAT(o.summary["failed"][0].dump(), HasSubstr("top-k"));
  const std::string csv = read_file(path("out/results.csv"));
  EXPECT_EQ(std::count(csv.begin(), csv.end(), '\n'), 4);
}

TEST_F(SweepJob, RefusesABadShardAndABadSpecBeforeRunningAnything) {
  EXPECT_THAT(error_of([&] { test::run_tiny_sweep(path("spec.json"), path("out"), "2/2"); }),
              HasSubstr("--shard '2/2'"));
  write_file_atomic(path("bad.json"), R"({"grid": {"policy": []}})");
  EXPECT_THAT(error_of([&] { test::run_tiny_sweep(path("bad.json"), path("out")); }),
              HasSubstr("bad.json: /grid/policy"));
  EXPECT_FALSE(fs::exists(path("out/points")));
}

}  // namespace
}  // namespace moesim::harness
