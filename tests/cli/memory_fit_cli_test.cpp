// The whole device's memory from the command line (core/memory_model.h, harness/run_setup.h): a budget that
// does not fit beside the dense weights, KV cache, activations and reserve is refused with the breakdown
// (exit 1) by run, exec, compare, sweep and plan alike; --allow-overcommit runs it and says so; `moesim fit`
// answers for every model preset on every hardware profile.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "base/json_io.h"
#include "cli_test_util.h"
#include "core/data_dir.h"
#include "tests/fixtures.h"

namespace moesim::test {
namespace {

using ::testing::HasSubstr;

const std::string kQwen = test::bundled_data("traces/qwen3-30b-a3b.route.csv");
// The 8 GB board: 7 GiB of experts beside qwen3's 1.2 GiB of Q4 weights, its KV cache and the OS's 1 GiB.
const std::string kOver = " --hw jetson-orin-nano-8gb --budget 7GiB";

void expect_refused(const CliResult& r, const std::string& what) {
  EXPECT_EQ(r.code, 1) << what << ": " << r.err;
  EXPECT_THAT(r.err, HasSubstr("--budget 7GiB does not fit in the memory of NVIDIA Jetson Orin Nano 8GB"))
      << what;
  EXPECT_THAT(r.err, HasSubstr("OVER by")) << what;
  EXPECT_THAT(r.err, HasSubstr("dense weights")) << what;
  EXPECT_THAT(r.err, HasSubstr("--allow-overcommit")) << what;
}

TEST(MemoryFitCli, RunRefusesABudgetThatDoesNotFitAndRunsItWithAllowOvercommit) {
  expect_refused(moesim_cli("-q run " + kQwen + kOver), "run");
  const CliResult ok = moesim_cli("-q run " + kQwen + " --hw jetson-orin-nano-8gb --budget 4GiB --json");
  ASSERT_EQ(ok.code, 0) << ok.err;
  const Json fits = Json::parse(ok.out)["header"]["config"]["device_memory"];
  EXPECT_TRUE(fits["fits"].get<bool>());
  EXPECT_FALSE(fits["overcommitted"].get<bool>());
  const CliResult over = moesim_cli("-q run " + kQwen + kOver + " --allow-overcommit --json");
  ASSERT_EQ(over.code, 0) << over.err;
  const Json m = Json::parse(over.out)["header"]["config"]["device_memory"];
  EXPECT_TRUE(m["overcommitted"].get<bool>());
  EXPECT_FALSE(m["fits"].get<bool>());
  EXPECT_GT(m["dram"]["over_bytes"].get<uint64_t>(), 0u);
  EXPECT_EQ(m["page_cache_bytes"], 0);
}

TEST(MemoryFitCli, ExecRefusesTheBudgetBeforeTouchingTheStore) {
  MOESIM_SKIP_WITHOUT_EXEC();
  expect_refused(moesim_cli("-q exec " + kQwen + kOver + " --store " + temp_path("no-store-needed.store")),
                 "exec");
}

TEST(MemoryFitCli, CompareRefusesABudgetThatDoesNotFit) {
  expect_refused(moesim_cli("-q compare " + kQwen + kOver + " --policy lru --scope global"), "compare");
  EXPECT_EQ(
      moesim_cli("-q compare " + kQwen + kOver + " --policy lru --scope global --allow-overcommit").code, 0);
}

TEST(MemoryFitCli, PlanRefusesABudgetThatDoesNotFit) {
  expect_refused(moesim_cli("-q plan " + kQwen + " --model qwen3-30b-a3b" + kOver), "plan");
}

TEST(MemoryFitCli, SweepPointsAreRefusedAsRunRefusesThem) {
  const std::string dir = temp_path("memory_sweep");
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  std::ofstream(dir + "/spec.json") << R"({"points": [{"trace": ")" + kQwen +
                                           R"(", "hw": "jetson-orin-nano-8gb", "budget": "7GiB"}]})";
  const CliResult r = moesim_cli("-q sweep " + dir + "/spec.json -o " + dir + "/out");
  EXPECT_EQ(r.code, 1) << r.err;
  EXPECT_THAT(r.err, HasSubstr("1 point(s) failed"));
  EXPECT_THAT(read_text(dir + "/out/manifest.json"), HasSubstr("does not fit in the memory of"));
  std::filesystem::remove_all(dir);
}

TEST(MemoryFitCli, FitGivesTheLargestBudgetThatRunAccepts) {
  const CliResult r = moesim_cli(
      "-q fit --model qwen3-30b-a3b --hw jetson-orin-nano-8gb --context 4096 --json "
      "--tokens 8 --prompt 8");
  ASSERT_EQ(r.code, 0) << r.err;
  const Json j = Json::parse(r.out);
  const uint64_t largest = j["largest_budget"]["gpu_bytes"].get<uint64_t>();
  EXPECT_GT(largest, 0u);
  EXPECT_GT(j["timing"]["tpot_s"].get<double>(), 0);
  EXPECT_GT(j["timing"]["ttft_s"].get<double>(), 0);
  // The breakdown at that budget fills the memory to the byte: nothing left for the page cache.
  EXPECT_EQ(j["memory"]["page_cache_bytes"], 0);
  EXPECT_EQ(j["memory"]["dram"]["pinned_bytes"], j["memory"]["dram"]["capacity_bytes"]);
}

TEST(MemoryFitCli, FitRefusesAModelThatCannotFitAtAll) {
  const CliResult r =
      moesim_cli("-q fit --model qwen3-30b-a3b --hw jetson-orin-nano-8gb --context 1000000 --no-timing");
  EXPECT_EQ(r.code, 1) << r.err;
  EXPECT_THAT(r.err, HasSubstr("even without an expert cache"));
  EXPECT_THAT(r.err, HasSubstr("KV cache"));
}

// Every preset on every profile: an answer, no crash; on the largest budget the pinned parts and the page
// cache add up to each memory's capacity.
TEST(MemoryFitCli, FitAnswersForEveryPresetOnEveryProfile) {
  for (const std::string& model : list_presets("models"))
    for (const std::string& hw : list_presets("hardware")) {
      const CliResult r =
          moesim_cli("-q fit --model " + model + " --hw " + hw + " --context 2048 --no-timing --json");
      const std::string what = model + " on " + hw;
      if (r.code == 1) {  // the model's weights alone exceed the device: said, with the breakdown
        EXPECT_THAT(r.err, HasSubstr("even without an expert cache")) << what;
        continue;
      }
      ASSERT_EQ(r.code, 0) << what << ": " << r.err;
      const Json j = Json::parse(r.out);
      const Json& m = j["memory"];
      uint64_t dram = 0, gpu = 0;
      for (const Json& p : m["parts"]) {
        if (p["evictable"].get<bool>()) continue;
        (p["place"] == "gpu" ? gpu : dram) += p["bytes"].get<uint64_t>();
      }
      EXPECT_EQ(dram, m["dram"]["pinned_bytes"].get<uint64_t>()) << what;
      EXPECT_EQ(dram + m["page_cache_bytes"].get<uint64_t>(), m["dram"]["capacity_bytes"].get<uint64_t>())
          << what;
      if (m.contains("gpu") && !m["gpu"].is_null()) {
        EXPECT_EQ(gpu, m["gpu"]["pinned_bytes"].get<uint64_t>()) << what;
        EXPECT_LE(gpu, m["gpu"]["capacity_bytes"].get<uint64_t>()) << what;
      }
      EXPECT_TRUE(m["fits"].get<bool>()) << what;
    }
}

}  // namespace
}  // namespace moesim::test
