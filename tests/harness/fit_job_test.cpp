// `moesim fit` called directly (harness/fit_job.h): the experts' bytes are the model's (qwen3-30b-a3b: 48
// MoE layers x 128 experts x 3 BF16 tensors of 768 x 2048), the breakdown at the largest budget fits the
// device, a longer context never leaves a larger budget, the longest context at a smaller budget is at least
// the one asked for, the timing runs at the largest budget, a model too large for the device is an Error that
// says what is over, and bad options are refused naming them.
#include "harness/fit_job.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "base/error.h"
#include "tests/error_of.h"

namespace moesim::harness {
namespace {

using test::error_of;
using ::testing::HasSubstr;

FitArgs memory_only(const std::string& model, uint64_t context) {
  FitArgs a;
  a.model = model;
  a.context = context;
  a.timing = false;
  return a;
}

TEST(FitJob, TheExpertsAreTheModelsAndTheLargestBudgetFits) {
  const Json j = fit_result(memory_only("qwen3-30b-a3b", 4096));
  const uint64_t all = uint64_t{48} * 128 * 3 * 768 * 2048 * 2;
  EXPECT_EQ(j["largest_budget"]["all_experts_bytes"], all);
  EXPECT_EQ(j["memory"]["all_experts_bytes"], all);
  EXPECT_EQ(j["model"], "qwen3-30b-a3b");
  EXPECT_EQ(j["hardware"], "jetson-agx-orin-64gb");
  EXPECT_EQ(j["header"]["command"], "fit");
  EXPECT_EQ(j["context_tokens"], 4096);
  const Json& m = j["memory"];
  EXPECT_TRUE(m["fits"].get<bool>());
  EXPECT_TRUE(m["unified"].get<bool>());  // the Orin's GPU shares its DRAM
  EXPECT_LE(m["dram"]["pinned_bytes"].get<uint64_t>(), m["dram"]["capacity_bytes"].get<uint64_t>());
  EXPECT_EQ(m["dram"]["over_bytes"], 0);
  const uint64_t gpu = j["largest_budget"]["gpu_bytes"].get<uint64_t>();
  EXPECT_GT(gpu, 0u);
  EXPECT_EQ(j["largest_budget"]["holds_every_expert"], gpu >= all);
  EXPECT_FALSE(j.contains("timing"));
  // Without --budget the longest context is asked at half the largest budget: at least the context that
  // fits beside the whole budget.
  EXPECT_EQ(j["longest_context"]["at_budget_bytes"], gpu / 2);
  EXPECT_EQ(j["longest_context"]["budget_source"], "half the largest GPU budget");
  EXPECT_GE(j["longest_context"]["tokens"].get<uint64_t>(), 4096u);
}

TEST(FitJob, ALongerContextNeverLeavesALargerBudget) {
  uint64_t prev = UINT64_MAX;
  for (uint64_t context : {1024, 8192, 32768}) {
    const uint64_t gpu =
        fit_result(memory_only("qwen3-30b-a3b", context))["largest_budget"]["gpu_bytes"].get<uint64_t>();
    EXPECT_LE(gpu, prev) << context;
    prev = gpu;
  }
  FitArgs a = memory_only("qwen3-30b-a3b", 4096);
  a.batch = 4;
  EXPECT_LT(fit_result(a)["largest_budget"]["gpu_bytes"].get<uint64_t>(),
            fit_result(memory_only("qwen3-30b-a3b", 4096))["largest_budget"]["gpu_bytes"].get<uint64_t>());
}

TEST(FitJob, TheLongestContextAtABudgetAskedForIsAtThatBudget) {
  FitArgs a = memory_only("qwen3-30b-a3b", 4096);
  a.budget = "8GiB";
  const Json j = fit_result(a);
  EXPECT_EQ(j["longest_context"]["at_budget_bytes"], uint64_t{8} << 30);
  EXPECT_EQ(j["longest_context"]["budget_source"], "--budget");
  a.budget = "16GiB";
  EXPECT_LE(fit_result(a)["longest_context"]["tokens"].get<uint64_t>(),
            j["longest_context"]["tokens"].get<uint64_t>());
}

TEST(FitJob, TheTimingRunsAtTheLargestBudgetCappedAtEveryExpert) {
  FitArgs a;
  a.model = "deepseek-v2-lite";
  a.prompt = 16;
  a.tokens = 8;
  a.zipf = 1;
  const Json j = fit_result(a);
  ASSERT_TRUE(j.contains("timing"));
  const Json& t = j["timing"];
  const uint64_t gpu = j["largest_budget"]["gpu_bytes"].get<uint64_t>(),
                 all = j["largest_budget"]["all_experts_bytes"].get<uint64_t>();
  EXPECT_EQ(all, uint64_t{26} * 64 * 3 * 1408 * 2048 * 2);
  EXPECT_EQ(t["budget_bytes"], std::min(gpu, all));
  EXPECT_GT(t["ttft_s"].get<double>(), 0);
  EXPECT_GT(t["tpot_s"].get<double>(), 0);
  EXPECT_THAT(t["trace"].get<std::string>(), HasSubstr("Zipf alpha 1, 16 prompt + 8 generated tokens"));
}

TEST(FitJob, AModelTooLargeForTheDeviceSaysWhatIsOver) {
  FitArgs a = memory_only("deepseek-v3", 4096);
  a.hw = "jetson-orin-nano-8gb";
  a.dense = "pinned";
  const std::string e = error_of([&] { (void)fit_result(a); });
  EXPECT_THAT(e, HasSubstr("does not fit in the memory of"));
  EXPECT_THAT(e, HasSubstr("even without an expert cache"));
}

TEST(FitJob, RefusesBadOptionsNamingThem) {
  FitArgs a = memory_only("", 4096);
  EXPECT_THAT(error_of([&] { (void)fit_result(a); }), HasSubstr("--model is required"));
  a = memory_only("qwen3-30b-a3b", 0);
  EXPECT_THAT(error_of([&] { (void)fit_result(a); }), HasSubstr("--context"));
  a = memory_only("qwen3-30b-a3b", 4096);
  a.batch = 0;
  EXPECT_THAT(error_of([&] { (void)fit_result(a); }), HasSubstr("--batch"));
  a = memory_only("qwen3-30b-a3b", 4096);
  a.zipf = -1;
  EXPECT_THAT(error_of([&] { (void)fit_result(a); }), HasSubstr("--zipf"));
  a = memory_only("qwen3-30b-a3b", 4096);
  a.budget = "lots";
  EXPECT_THAT(error_of([&] { (void)fit_result(a); }), HasSubstr("--budget"));
  a = memory_only("qwen3-30b-a3b", 4096);
  a.dense = "somewhere";
  EXPECT_THAT(error_of([&] { (void)fit_result(a); }), HasSubstr("somewhere"));
  a = memory_only("no-such-model", 4096);
  EXPECT_THAT(error_of([&] { (void)fit_result(a); }), HasSubstr("no-such-model"));
}

}  // namespace
}  // namespace moesim::harness
