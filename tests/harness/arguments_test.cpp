// The vocabulary every command shares (harness/arguments.h), on the header's own examples: policy lists
// split on ';' always and on ',' only before a policy name, budgets on ','; `all` is every eviction spec;
// budgets absolute or relative (resolved for the model), sizes with a unit, scopes; every out-of-range value
// is a UsageError naming the option.
#include "harness/arguments.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "tests/error_of.h"
#include "tests/fixtures.h"
#include "traces/trace_io.h"

namespace moesim::harness {
namespace {

using test::error_of;
using ::testing::HasSubstr;
using Strings = std::vector<std::string>;

TEST(Arguments, PolicyListsSplitOnCommasOnlyBeforeAPolicyName) {
  EXPECT_EQ(split_policy_list({"lru,lfu"}), (Strings{"lru", "lfu"}));
  EXPECT_EQ(split_policy_list({"random:seed=7,lfu"}), (Strings{"random:seed=7", "lfu"}));
  EXPECT_EQ(split_policy_list({"lfu:decay=0.5,window=8"}), (Strings{"lfu:decay=0.5,window=8"}));
  EXPECT_EQ(split_policy_list({"lru;lfu", "belady"}), (Strings{"lru", "lfu", "belady"}));
  EXPECT_EQ(split_budget_list({"1GiB,2GiB", "4"}), (Strings{"1GiB", "2GiB", "4"}));
}

TEST(Arguments, AllIsEveryEvictionSpecAndEachSpecIsChecked) {
  const Strings all = all_eviction_specs();
  EXPECT_EQ(resolve_policy_list({"all"}), all);
  size_t plain = 0;
  for (const std::string& s : all) plain += s.find(':') == std::string::npos;
  EXPECT_EQ(plain, EvictionRegistry::instance().entries().size());
  EXPECT_THAT(all, ::testing::Contains("lfu:history=1"));
  EXPECT_THAT(all, ::testing::Contains("tinylfu:window=0"));
  EXPECT_EQ(resolve_policy_list({"lru", "all"}).size(), 1 + all.size());
  EXPECT_THAT(error_of([] { (void)resolve_policy_list({"lru,teleport"}); }), HasSubstr("teleport"));
  EXPECT_THAT(error_of([] { (void)resolve_policy_list({"lru:depth=3"}); }), HasSubstr("depth"));
}

TEST(Arguments, BudgetsAreExpertsBytesOrRelativeResolvedForTheModel) {
  const CacheCapacity experts = parse_budget_option("--budget", "32");
  EXPECT_EQ(experts.unit, CacheCapacity::Unit::kExperts);
  EXPECT_EQ(experts.value, 32u);
  const CacheCapacity bytes = parse_budget_option("--budget", "3000MiB");
  EXPECT_EQ(bytes.unit, CacheCapacity::Unit::kBytes);
  EXPECT_EQ(bytes.value, uint64_t{3000} << 20);
  traces::TraceInfo info;
  info.layers = 4;
  info.experts = 16;
  info.top_k = 2;
  // 2 x top-k: 4 experts per layer; 50% with sizes unknown: half the 16 experts per layer; 25% with sizes
  // known: a quarter of their bytes.
  const CacheCapacity twice =
      resolve_budget_option("--budget", parse_budget_option("--budget", "2xtopk"), info, 0);
  EXPECT_EQ(twice.unit, CacheCapacity::Unit::kExperts);
  EXPECT_EQ(twice.value, 4u);
  const CacheCapacity half =
      resolve_budget_option("--budget", parse_budget_option("--budget", "50%"), info, 0);
  EXPECT_EQ(half.unit, CacheCapacity::Unit::kExperts);
  EXPECT_EQ(half.value, 8u);
  const CacheCapacity share =
      resolve_budget_option("--budget", parse_budget_option("--budget", "25%"), info, 64000);
  EXPECT_EQ(share.unit, CacheCapacity::Unit::kBytes);
  EXPECT_EQ(share.value, 16000u);
  EXPECT_EQ(resolve_budget_option("--budget", experts, info, 0).value, 32u);  // absolute: as it is
  EXPECT_THAT(error_of([] { (void)parse_budget_option("--budget", "0"); }),
              HasSubstr("--budget: budget '0' must be greater than 0"));
  EXPECT_THAT(error_of([] { (void)parse_budget_option("--cap", "lots"); }), HasSubstr("--cap: "));
}

TEST(Arguments, SizesNeedAUnitAndScopesAreGlobalOrLayer) {
  EXPECT_EQ(parse_bytes_option("--host-budget", "32GiB"), uint64_t{32} << 30);
  EXPECT_THAT(error_of([] { (void)parse_bytes_option("--host-budget", "32"); }),
              HasSubstr("--host-budget: '32' needs a byte unit (such as 32GiB)"));
  EXPECT_EQ(parse_scope_option("--scope", "layer"), CacheScope::kPerLayer);
  EXPECT_EQ(parse_scope_option("--scope", "global"), CacheScope::kGlobal);
  EXPECT_THAT(error_of([] { (void)parse_scope_option("--scope", "galaxy"); }),
              HasSubstr("--scope: unknown scope 'galaxy' (known: global, layer)"));
  EXPECT_EQ(parse_scope_list("layer,global"),
            (std::vector<CacheScope>{CacheScope::kPerLayer, CacheScope::kGlobal}));
  EXPECT_THAT(error_of([] { (void)parse_scope_list("layer,layer"); }), HasSubstr("layer"));
}

TEST(Arguments, RangeChecksNameTheOptionAndTheValue) {
  EXPECT_NO_THROW(require_in_range("--jobs", 4, 1, 8));
  EXPECT_THAT(error_of([] { require_in_range("--jobs", 9, 1, 8, "threads"); }),
              HasSubstr("--jobs must be a whole number from 1 to 8 (threads), got 9"));
  EXPECT_THAT(error_of([] { check_io_depth("--io-depth", 0); }),
              HasSubstr("--io-depth must be a whole number"));
  EXPECT_NO_THROW(check_io_depth("--io-depth", kMaxIoDepth));
  EXPECT_THAT(error_of([] { check_io_depth("--io-depth", kMaxIoDepth + 1); }), HasSubstr("got 4097"));
  EXPECT_THAT(error_of([] { require_at_least("--batch", 0, 1); }),
              HasSubstr("--batch must be at least 1 (got 0)"));
  EXPECT_THAT(error_of([] { require_trace_input(""); }), HasSubstr("a trace is required"));
}

TEST(Arguments, NumbersPrintAsCellsOrDashes) {
  EXPECT_EQ(csv_num(Json(nullptr)), "");
  EXPECT_EQ(csv_num(Json(0.1)), "0.10000000000000001");  // 17 significant digits
  EXPECT_EQ(num_or_dash(Json(nullptr), "%.1f"), "-");
  EXPECT_EQ(num_or_dash(Json(0.125), "%.1f%%", 100), "12.5%");
  EXPECT_EQ(strprintf("%s-%03d", "a", 7), "a-007");
}

TEST(Arguments, ABudgetAboveTheMemoryIsRefusedUnlessForced) {
  const traces::Trace t = traces::load_trace(test::test_data("traces/tiny.route.csv"));
  EXPECT_EQ(trace_sequences(t), 1u);
  const HardwareProfile hw = load_hardware("jetson-orin-nano-8gb");
  const CacheCapacity huge = parse_budget_option("--budget", "64GiB");
  const std::string e = error_of(
      [&] { check_budget_plausibility("--budget", huge, CacheScope::kGlobal, t.info(), 12000, &hw, false); });
  EXPECT_THAT(e, HasSubstr("--budget"));
  EXPECT_NO_THROW(
      check_budget_plausibility("--budget", huge, CacheScope::kGlobal, t.info(), 12000, &hw, true));
}

// compare's and sensitivity's "offload:policy=lru": the system keeps its other parameters in order, the
// policy= values come apart in the order given.
TEST(Arguments, TakePolicyParamSplitsTheEvictionSpecFromTheSystem) {
  const SystemAndPolicies s = take_policy_param(parse_system_option("zipmoe:policy=lfu,shards=2,policy=lru"));
  EXPECT_EQ(s.system.text(), "zipmoe:shards=2");
  EXPECT_EQ(s.policies, (std::vector<std::string>{"lfu", "lru"}));
  const SystemAndPolicies plain = take_policy_param(parse_system_option("offload"));
  EXPECT_EQ(plain.system.text(), "offload");
  EXPECT_TRUE(plain.policies.empty());
}

}  // namespace
}  // namespace moesim::harness
