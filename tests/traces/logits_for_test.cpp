// traces/logits_for: synthetic logits agree with the recorded routing exactly (top-k of the logits = the
// recorded selection in its order; softmax over the top-k = the recorded weights), are labelled synthetic
// and are bit-identical for a seed.
#include "traces/logits_for.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numeric>

#include "tests/fixtures.h"
#include "traces/trace_io.h"

namespace moesim {
namespace {

const std::string kData = test::bundled_data("traces/");

TEST(LogitsFor, TopKOfTheLogitsIsTheRecordedRoutingAndSoftmaxGivesItsWeights) {
  for (const char* name : {"qwen3-30b-a3b.route.csv", "gpt-oss-120b.route.csv"}) {
    const traces::Trace real = traces::load_trace(kData + name);
    const traces::Trace t = traces::attach_synthetic_logits(real, 7, name);
    ASSERT_EQ(t.records(), real.records());
    ASSERT_TRUE(t.has_logits());
    EXPECT_TRUE(t.info().synthetic);
    EXPECT_EQ(t.info().provenance["synthetic_part"], "logits");
    const uint32_t K = t.info().top_k, E = t.info().experts;
    std::vector<uint32_t> order(E);
    for (size_t r = 0; r < t.records(); ++r) {
      ASSERT_TRUE(std::equal(t.experts(r).begin(), t.experts(r).end(), real.experts(r).begin()));
      const auto z = t.logits(r);
      std::iota(order.begin(), order.end(), 0u);
      std::stable_sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) { return z[a] > z[b]; });
      const auto ids = t.experts(r);
      for (uint32_t i = 0; i < K; ++i)
        ASSERT_EQ(z[order[i]], z[ids[i]]) << name << " row " << r << " rank " << i;
      ASSERT_GT(z[ids[K - 1]], z[order[K]]) << "row " << r;  // strictly above every other expert
      double sum = 0;
      for (uint32_t i = 0; i < K; ++i) sum += std::exp(static_cast<double>(z[ids[i]]) - z[ids[0]]);
      const auto w = real.weights(r);
      for (uint32_t i = 0; i < K; ++i)
        ASSERT_NEAR(std::exp(static_cast<double>(z[ids[i]]) - z[ids[0]]) / sum,
                    w[i] / std::accumulate(w.begin(), w.end(), 0.0), 2e-5)
            << name << " row " << r;
    }
  }
}

TEST(LogitsFor, SameSeedSameLogitsOtherSeedOtherLogits) {
  const traces::Trace real = traces::load_trace(kData + "gpt-oss-120b.route.csv");
  const auto a = traces::attach_synthetic_logits(real, 3, "x");
  const auto b = traces::attach_synthetic_logits(real, 3, "x");
  const auto c = traces::attach_synthetic_logits(real, 4, "x");
  EXPECT_TRUE(std::equal(a.columns().logits.begin(), a.columns().logits.end(), b.columns().logits.begin()));
  EXPECT_FALSE(std::equal(a.columns().logits.begin(), a.columns().logits.end(), c.columns().logits.begin()));
}

}  // namespace
}  // namespace moesim
