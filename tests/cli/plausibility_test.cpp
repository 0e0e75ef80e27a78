// Option validation (usage errors, exit 2) and plausibility warnings (stderr and JSON "warnings") of
// replay, run, compare, trace info and trace stats.
#include <gtest/gtest.h>

#include <fstream>
#include <string>

#include "base/json_io.h"
#include "tests/cli/cli_test_util.h"
#include "tests/fixtures.h"

namespace {

using moesim::Json;
using moesim::test::moesim_cli;

const std::string kTiny = moesim::test::test_data("traces/tiny.route.csv");
const std::string kQwen = moesim::test::bundled_data("traces/qwen3-30b-a3b.route.csv");

Json json_of(const std::string& out) {
  return Json::parse(out.substr(out.find('{')));
}

bool has_warning(const Json& j, const std::string& part) {
  for (const auto& w : j["warnings"])
    if (w.get<std::string>().find(part) != std::string::npos) return true;
  return false;
}

void expect_usage_error(const std::string& args, const std::string& message) {
  const auto r = moesim_cli(args);
  EXPECT_EQ(r.code, 2) << args << "\n" << r.err;
  EXPECT_NE(r.err.find("moesim: error:"), std::string::npos) << args << "\n" << r.err;
  EXPECT_NE(r.err.find(message), std::string::npos) << args << "\n" << r.err;
  EXPECT_TRUE(r.out.empty()) << args;
}

TEST(Plausibility, OutOfRangeOptionsAreUsageErrors) {
  expect_usage_error("run " + kQwen + " --budget 2GiB --io-depth 0",
                     "--io-depth must be a whole number from 1 to 4096");
  expect_usage_error("compare " + kQwen + " --budget 2GiB --io-depth 0",
                     "--io-depth must be a whole number from 1 to 4096");
  expect_usage_error("run " + kQwen + " --budget 2GiB --batch 0", "--batch must be at least 1");
  expect_usage_error("replay " + kQwen + " --policy lru --budget 8 --batch 0", "--batch must be at least 1");
  expect_usage_error("compare " + kQwen + " --batch 0", "--batch must be at least 1");
  expect_usage_error("replay " + kQwen + " --policy lru --budget 8 --jobs 0",
                     "--jobs: expected a whole number from 1 to 1024, got 0");
  expect_usage_error("compare " + kQwen + " --jobs 0",
                     "--jobs: expected a whole number from 1 to 1024, got 0");
  expect_usage_error("compare " + kQwen + " --threads 0",
                     "--threads: expected a whole number from 1 to 1024");
  expect_usage_error("run " + kQwen + " --budget 2GiB --workers 100000", "--workers 100000 is too large");
  expect_usage_error("run " + kQwen + " --budget 0", "--budget: budget '0' must be greater than 0");
  expect_usage_error("run " + kQwen + " --budget 0GiB", "must be greater than 0");
  expect_usage_error("run " + kQwen + " --budget -1GiB", "--budget");
  expect_usage_error("compare " + kQwen + " --budget 1GiB,lots", "--budget");
  expect_usage_error("replay " + kQwen + " --policy lru --budget 1.5", "--budget");
  expect_usage_error("run " + kQwen + " --budget 2GiB --scope everywhere", "--scope: unknown scope");
  expect_usage_error("replay " + kQwen + " --policy lru --budget 8 --scope everywhere",
                     "--scope: unknown scope");
  expect_usage_error("compare " + kQwen + " --scope everywhere", "--scope: unknown scope");
  expect_usage_error("trace stats " + kTiny + " --top-pairs 0", "--top-pairs must be at least 1");
  expect_usage_error("run --budget 2GiB", "a trace is required");
  expect_usage_error("run " + kQwen + " --budget 1GiB,2GiB", "run simulates one budget");
  expect_usage_error("run " + kQwen + " --budget 2GiB --policy lru --policy lfu", "run simulates one policy");
  expect_usage_error("run " + kQwen, "--budget is required");
}

TEST(Plausibility, BudgetAboveDeviceMemoryIsAnErrorUnlessForced) {
  expect_usage_error("run " + kQwen + " --budget 100GiB", "more than the memory of");
  expect_usage_error("compare " + kQwen + " --budget 1GiB,100GiB", "pass --force");
  const auto r = moesim_cli("run " + kQwen + " --budget 100GiB --force --json");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.err.find("moesim: warning: --budget 100.00 GiB is more than the memory"), std::string::npos)
      << r.err;
  EXPECT_TRUE(has_warning(json_of(r.out), "more than the memory"));
}

TEST(Plausibility, BudgetHoldingEveryExpertWarns) {
  const auto r = moesim_cli("run " + kQwen + " --budget 20GiB --json");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.err.find("holds all experts of the model"), std::string::npos) << r.err;
  EXPECT_TRUE(has_warning(json_of(r.out), "everything fits"));
  const auto ok = moesim_cli("run " + kQwen + " --budget 2GiB --json");
  ASSERT_EQ(ok.code, 0) << ok.err;
  EXPECT_TRUE(json_of(ok.out)["warnings"].empty()) << ok.out;
  EXPECT_EQ(ok.err.find("warning"), std::string::npos) << ok.err;
}

TEST(Plausibility, GlobalCacheBelowOneTokensWorkingSetWarns) {
  // 48 layers x top-6 = 288 experts; 300 MiB of ~2.7 MiB experts is ~110.
  const auto r = moesim_cli("replay " + kQwen + " --policy lru --budget 300MiB --json");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.err.find("smaller than one token's working set"), std::string::npos) << r.err;
  EXPECT_TRUE(has_warning(json_of(r.out), "working set (48 layers x top-6 = 288)"));
  // 1 GiB (~370 experts) holds one token's working set: no warning.
  const auto big = moesim_cli("replay " + kQwen + " --policy lru --budget 1GiB");
  ASSERT_EQ(big.code, 0) << big.err;
  EXPECT_EQ(big.err.find("working set"), std::string::npos) << big.err;
}

TEST(Plausibility, BatchLargerThanTheSequencesWarns) {
  const auto r = moesim_cli("replay " + kTiny + " --policy lru --budget 2 --batch 4 --json");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.err.find("--batch 4 is larger than the trace's 1 sequence"), std::string::npos) << r.err;
  EXPECT_TRUE(has_warning(json_of(r.out), "--batch 4"));
}

TEST(Plausibility, MissingCellsOverFivePercentWarnEverywhere) {
  // tiny.route.csv: 1 of its 8 cells is missing (12%).
  for (const std::string& cmd : {"trace info --json " + kTiny, "trace stats --json " + kTiny,
                                 "replay --json --policy lru --budget 2 " + kTiny}) {
    const auto r = moesim_cli(cmd);
    ASSERT_EQ(r.code, 0) << cmd << "\n" << r.err;
    EXPECT_NE(r.err.find("moesim: warning:"), std::string::npos) << cmd;
    EXPECT_NE(r.err.find("1 of 8 cells (12%) are missing"), std::string::npos) << cmd << "\n" << r.err;
    EXPECT_TRUE(has_warning(json_of(r.out), "cells (12%) are missing")) << cmd;
  }
  // A complete trace: no such warning.
  const auto full = moesim_cli("trace info --json " + kQwen);
  ASSERT_EQ(full.code, 0) << full.err;
  EXPECT_TRUE(json_of(full.out)["warnings"].empty()) << full.out;
}

TEST(Plausibility, DegenerateReplayIsAWarningInJson) {
  const auto r = moesim_cli("replay " + kQwen + " --policy lru --budget 32 --scope layer --json");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.err.find("moesim: warning: degenerate configuration"), std::string::npos) << r.err;
  EXPECT_TRUE(has_warning(json_of(r.out), "degenerate configuration"));
}

TEST(Plausibility, UnwritableTimelineFailsBeforeTheSimulation) {
  const auto r = moesim_cli("run " + kQwen + " --budget 2GiB --timeline /nonexistent-dir/tl.json");
  EXPECT_NE(r.code, 0);
  EXPECT_NE(r.err.find("/nonexistent-dir"), std::string::npos) << r.err;
  EXPECT_TRUE(r.out.empty()) << r.out;
  const auto c = moesim_cli("compare " + kQwen + " --budget 2GiB --csv /nonexistent-dir/x.csv");
  EXPECT_NE(c.code, 0);
  EXPECT_TRUE(c.out.empty()) << c.out;
}

}  // namespace
