// The preparation every run shares (harness/run_setup.h): a trace's context is its longest sequence's
// prompt plus generated tokens, the touched bytes count each (layer, expert) once, the memory check refuses
// a budget that does not fit naming it unless the overcommit is allowed, and prepare_run checks its options
// before it loads anything and fills the run from one policy and one budget.
#include "harness/run_setup.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "base/error.h"
#include "core/model_spec.h"
#include "tests/error_of.h"
#include "tests/fixtures.h"
#include "traces/synth.h"

namespace moesim::harness {
namespace {

using test::error_of;
using ::testing::HasSubstr;

// tests/data/traces/tiny.route.csv: one sequence of 2 prompt and 2 generated tokens, 2 layers x 4 experts,
// every expert routed to at least once, 1000 B experts in layer 0 and 2000 B in layer 1.
const std::string kTiny = test::test_data("traces/tiny.route.csv");
const std::string kGptOss = test::bundled_data("traces/gpt-oss-120b.route.csv");

TEST(RunSetup, TheContextIsTheLongestSequencesPromptAndGeneratedTokens) {
  EXPECT_EQ(trace_context_tokens(traces::load_trace(kTiny)), 4u);
  traces::SynthOptions so;
  so.seed = 3;
  so.sequences = 3;
  so.prompt_tokens = 5;
  so.decode_tokens = 7;
  const traces::Trace t = traces::generate_trace(
      traces::zipf_model(traces::shape_from_model(load_model(test::test_data("models/tiny-moe.json"))), 1, 3),
      so);
  EXPECT_EQ(trace_context_tokens(t), 12u);
}

TEST(RunSetup, TouchedBytesCountEachExpertOnce) {
  const traces::Trace t = traces::load_trace(kTiny);
  ModelCosts costs;
  costs.expert_bytes = {1000, 2000};
  EXPECT_EQ(trace_touched_bytes(t, costs), 4 * 1000 + 4 * 2000);
  EXPECT_EQ(trace_touched_bytes(t, costs, &t), 4 * 1000 + 4 * 2000);  // the warm-up trace adds none again
  costs.expert_bytes = {1000};                                        // a layer without a size counts nothing
  EXPECT_EQ(trace_touched_bytes(t, costs), 4 * 1000);
}

TEST(RunSetup, ABudgetThatDoesNotFitIsRefusedNamingItUnlessAllowed) {
  const HardwareProfile nano = load_hardware("jetson-orin-nano-8gb");
  const ModelMemory m = model_memory(load_model("qwen3-30b-a3b"));
  MemoryRequest r;
  r.gpu_budget = uint64_t{6} << 30;
  r.context_tokens = 4096;
  const std::string e = error_of([&] { (void)check_memory_fits(nano, m, r, "--budget 6GiB", false); });
  EXPECT_THAT(e, HasSubstr("--budget 6GiB"));
  bool over = false;
  const MemoryBreakdown b = check_memory_fits(nano, m, r, "--budget 6GiB", true, &over);
  EXPECT_TRUE(over);
  EXPECT_FALSE(b.fits());
  const HardwareProfile orin = load_hardware("jetson-agx-orin-64gb");
  r.gpu_budget = uint64_t{1} << 30;
  over = true;
  EXPECT_TRUE(check_memory_fits(orin, m, r, "--budget 1GiB", false, &over).fits());
  EXPECT_FALSE(over);
}

RunArgs run_args() {
  RunArgs a;
  a.trace = kGptOss;
  a.budgets = {"8"};
  return a;
}

TEST(RunSetup, PrepareRunFillsTheRunFromOnePolicyAndOneBudget) {
  RunArgs a = run_args();
  PreparedRun p;
  prepare_run(a, p);
  EXPECT_EQ(p.policy, "lru");
  EXPECT_EQ(p.budget, "8");
  EXPECT_EQ(p.hw.name, "jetson-agx-orin-64gb");
  EXPECT_GT(p.stream.lookups(), 0u);
  EXPECT_EQ(p.stream.lookups(), traces::build_lookup_stream(p.trace, 1).lookups());
  uint64_t all = 0;
  for (uint64_t b : p.costs.costs.expert_bytes) all += b * p.trace.info().experts;
  EXPECT_GT(p.touched_expert_bytes, 0u);
  EXPECT_LE(p.touched_expert_bytes, all);
  EXPECT_EQ(p.touched_expert_bytes, trace_touched_bytes(p.trace, p.costs.costs));
  EXPECT_FALSE(p.overcommitted);
  EXPECT_TRUE(p.memory.fits());
}

TEST(RunSetup, PrepareRunRefusesBadOptionsNamingThem) {
  const auto refused = [](RunArgs a) {
    PreparedRun p;
    return error_of([&] { prepare_run(a, p); });
  };
  RunArgs a = run_args();
  a.budgets.clear();
  EXPECT_THAT(refused(a), HasSubstr("--budget is required"));
  a = run_args();
  a.budgets = {"4", "8"};
  EXPECT_THAT(refused(a), HasSubstr("--budget: run simulates one budget"));
  a = run_args();
  a.policies = {"lru", "lfu"};
  EXPECT_THAT(refused(a), HasSubstr("--policy: run simulates one policy"));
  a = run_args();
  a.io = "aio";
  EXPECT_THAT(refused(a), HasSubstr("--io: 'aio' is not a way to read"));
  a = run_args();
  a.workers = 5000;
  EXPECT_THAT(refused(a), HasSubstr("--workers 5000 is too large"));
  a = run_args();
  a.warm = true;
  a.warm_from = kTiny;
  EXPECT_THAT(refused(a), HasSubstr("--warm and --warm-from both"));
  a = run_args();
  a.profile_trace = kTiny;
  a.profile_tokens = 4;
  EXPECT_THAT(refused(a), HasSubstr("--profile-trace and --profile-tokens both"));
  a = run_args();
  a.system = PolicySpec{"teleport", {}};
  EXPECT_THAT(refused(a), HasSubstr("teleport"));
  a = run_args();
  a.system = PolicySpec{"zipmoe", {}};  // a system without a host-memory tier
  a.host_budget = "1GiB";
  EXPECT_THAT(refused(a), HasSubstr("--host-budget applies to a system with a host-memory tier"));
  a = run_args();
  a.trace.clear();
  EXPECT_THAT(refused(a), HasSubstr("a trace is required"));
}

}  // namespace
}  // namespace moesim::harness
