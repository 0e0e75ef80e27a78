// Prefetch policies: none, oracle (accuracy, lookahead, within a step, seeded) and layer-window.
#include "core/prefetch.h"

#include <gtest/gtest.h>

#include <set>

#include "base/error.h"
#include "tests/core/tiny_workload.h"

namespace moesim {
namespace {

constexpr uint32_t kLayers = 3, kExperts = 8;

// Steps of one invocation per layer; invocation (step s, layer l) picks experts {s % 8, (s + 3) % 8} of l.
test::TinyWorkload workload(uint32_t steps) {
  std::vector<std::vector<std::vector<uint32_t>>> s;
  for (uint32_t i = 0; i < steps; ++i) {
    std::vector<std::vector<uint32_t>> invs;
    for (uint32_t l = 0; l < kLayers; ++l) invs.push_back({l * kExperts + i % 8, l * kExperts + (i + 3) % 8});
    s.push_back(invs);
  }
  test::TinyWorkload w(s, {"w"});
  w.set_shape(kLayers, kExperts);
  return w;
}

std::vector<PrefetchRequest> propose(PrefetchPolicy& p, const WorkloadView& v, uint32_t inv) {
  std::vector<PrefetchRequest> out;
  uint32_t step = 0;
  while (v.step_begin[step + 1] <= inv) ++step;
  p.propose(PrefetchContext{&v, inv, step, v.lookups.inv_layer[inv], true}, out);
  return out;
}

std::set<uint16_t> truth(const WorkloadView& v, uint32_t inv) {
  std::set<uint16_t> t;
  for (uint32_t j = v.lookups.inv_begin[inv]; j < v.lookups.inv_begin[inv + 1]; ++j)
    t.insert(static_cast<uint16_t>(v.lookups.key[j] % kExperts));
  return t;
}

const PrefetchSetup kSetup{kLayers, kExperts, 2, 42};

TEST(Prefetch, NoneProposesNothing) {
  const auto w = workload(2);
  const WorkloadView v = w.view();
  auto p = make_prefetch_policy("none", kSetup);
  EXPECT_TRUE(propose(*p, v, 0).empty());
}

TEST(Prefetch, ExactOracleProposesTheNextInvocationsTrueExperts) {
  const auto w = workload(2);
  const WorkloadView v = w.view();
  auto p = make_prefetch_policy("oracle:accuracy=1,lookahead=2", kSetup);
  const auto out = propose(*p, v, 0);  // invocations 1 and 2 (layers 1, 2) of step 0
  ASSERT_EQ(out.size(), 4u);
  for (const auto& r : out) {
    EXPECT_EQ(r.target_invocation, r.layer);
    EXPECT_TRUE(truth(v, r.target_invocation).count(r.expert));
  }
  // The last layer of a step has nothing ahead in its step.
  EXPECT_TRUE(propose(*p, v, 2).empty());
}

TEST(Prefetch, AccuracyZeroNeverProposesATrueExpert) {
  const auto w = workload(40);
  const WorkloadView v = w.view();
  auto p = make_prefetch_policy("oracle:accuracy=0", kSetup);
  for (uint32_t inv = 0; inv < v.lookups.invocations(); ++inv) {
    const auto out = propose(*p, v, inv);
    std::set<uint16_t> seen;
    for (const auto& r : out) {
      EXPECT_EQ(r.layer, v.lookups.inv_layer[r.target_invocation]);
      EXPECT_FALSE(truth(v, r.target_invocation).count(r.expert));
      EXPECT_TRUE(seen.insert(r.expert).second) << "proposed twice";
    }
  }
}

TEST(Prefetch, MeasuredAccuracyMatchesTheParameterAndTheSeedFixesTheProposals) {
  const auto w = workload(2000);
  const WorkloadView v = w.view();
  auto p = make_prefetch_policy("oracle:accuracy=0.7", kSetup);
  auto q = make_prefetch_policy("oracle:accuracy=0.7", kSetup);
  uint64_t n = 0, right = 0;
  for (uint32_t inv = 0; inv < v.lookups.invocations(); ++inv) {
    const auto a = propose(*p, v, inv);
    const auto b = propose(*q, v, inv);
    ASSERT_EQ(a.size(), b.size());
    for (size_t i = 0; i < a.size(); ++i) {
      ASSERT_EQ(a[i].expert, b[i].expert);
      ++n;
      right += truth(v, a[i].target_invocation).count(a[i].expert);
    }
  }
  const double acc = static_cast<double>(right) / static_cast<double>(n);
  // 2,666 proposals: sd = sqrt(0.7 * 0.3 / n) ~ 0.009; 5 sd.
  EXPECT_NEAR(acc, 0.7, 0.045);
}

TEST(Prefetch, LayerWindowProposesWholeLayersAndWrapsToTheNextStep) {
  const auto w = workload(2);
  const WorkloadView v = w.view();
  auto p = make_prefetch_policy("layer-window:depth=2", kSetup);
  const auto out = propose(*p, v, 2);  // layer 2: layers 0 and 1 of the next step
  ASSERT_EQ(out.size(), 2u * kExperts);
  std::set<std::pair<uint16_t, uint16_t>> got;
  for (const auto& r : out) {
    got.insert({r.layer, r.expert});
    EXPECT_EQ(r.target_invocation, kNoInvocation);
  }
  EXPECT_EQ(got.size(), 2u * kExperts);
  EXPECT_TRUE(got.count({0, 7}) && got.count({1, 0}));
}

TEST(Prefetch, BadParametersAreErrors) {
  EXPECT_THROW(make_prefetch_policy("oracle:accuracy=1.5", kSetup), Error);
  EXPECT_THROW(make_prefetch_policy("oracle:lookahead=0", kSetup), Error);
  EXPECT_THROW(make_prefetch_policy("layer-window:depth=0", kSetup), Error);
  EXPECT_THROW(make_prefetch_policy("oracle:colour=1", kSetup), Error);
  EXPECT_THROW(make_prefetch_policy("psychic", kSetup), Error);
}

}  // namespace
}  // namespace moesim
