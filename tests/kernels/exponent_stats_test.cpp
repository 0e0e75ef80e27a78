#include "kernels/exponent_stats.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "kernels/bf16.h"
#include "base/rng.h"

namespace moesim::kernels {
namespace {

uint16_t bf16_with_exponent(uint8_t e, uint8_t sm) {
  uint16_t x;
  merge_bf16_scalar(&e, &sm, 1, &x);
  return x;
}

TEST(ExponentStats, HandMadeTensorHasKnownEntropy) {
  // Exponent counts 1, 1, 2, 4 of 8: H = 3/8 + 3/8 + 2/4 + 1/2 = 1.75 bits exactly.
  const uint8_t exps[] = {120, 121, 122, 122, 123, 123, 123, 123};
  std::vector<uint16_t> x;
  for (size_t i = 0; i < 8; ++i) x.push_back(bf16_with_exponent(exps[i], static_cast<uint8_t>(37 * i + 128)));
  ExponentHistogram h;
  h.add_bf16(x.data(), x.size());
  EXPECT_EQ(h.total, 8u);
  EXPECT_EQ(h.count[122], 2u);
  EXPECT_EQ(h.count[123], 4u);
  EXPECT_EQ(h.distinct(), 4u);
  EXPECT_NEAR(h.entropy_bits(), 1.75, 1e-9);
  EXPECT_NEAR(h.bound_ratio(), (8 + 1.75) / 16, 1e-9);
}

TEST(ExponentStats, AgreesWithIndependentComputation) {
  // Counts 5, 3, 7, 1, 11 (irregular, so that no shortcut formula applies), spread over 27 values.
  const uint8_t values[] = {0, 1, 126, 127, 255};
  const int counts[] = {5, 3, 7, 1, 11};
  std::vector<uint8_t> e;
  for (int v = 0; v < 5; ++v) e.insert(e.end(), counts[v], values[v]);
  // Shuffle so the sub-histogram unrolling sees mixed neighbours.
  Rng rng(3);
  for (size_t i = e.size() - 1; i > 0; --i) std::swap(e[i], e[rng.below(i + 1)]);
  ExponentHistogram h;
  h.add_exponents(e.data(), e.size());
  double ref = 0;
  for (int c : counts) ref += c / 27.0 * std::log2(27.0 / c);
  EXPECT_NEAR(h.entropy_bits(), ref, 1e-9);
  EXPECT_EQ(h.distinct(), 5u);
}

TEST(ExponentStats, BytesAndBf16PathsAndMergeAgree) {
  Rng rng(11);
  const size_t n = 10007;
  std::vector<uint16_t> x(n);
  for (auto& v : x) v = f32_to_bf16(static_cast<float>(0.02 * rng.normal()));
  std::vector<uint8_t> e(n), s(n);
  split_bf16(x.data(), n, e.data(), s.data());
  ExponentHistogram a, b, c1, c2;
  a.add_bf16(x.data(), n);
  b.add_exponents(e.data(), n);
  c1.add_bf16(x.data(), 5000);
  c2.add_bf16(x.data() + 5000, n - 5000);
  c1.merge(c2);
  EXPECT_EQ(a.count, b.count);
  EXPECT_EQ(a.count, c1.count);
  EXPECT_EQ(c1.total, n);
  // Gaussian weights: few distinct exponents, entropy well below 8 bits (ZipMoE Fig. 2: ~2.6 bits).
  EXPECT_GT(a.entropy_bits(), 2.0);
  EXPECT_LT(a.entropy_bits(), 3.5);
  EXPECT_LT(a.distinct(), 40u);
}

TEST(ExponentStats, EmptyAndConstant) {
  ExponentHistogram h;
  EXPECT_EQ(h.entropy_bits(), 0.0);
  EXPECT_EQ(h.distinct(), 0u);
  std::vector<uint8_t> e(1000, 127);
  h.add_exponents(e.data(), e.size());
  EXPECT_EQ(h.entropy_bits(), 0.0);
  EXPECT_EQ(h.distinct(), 1u);
  EXPECT_EQ(h.bound_ratio(), 0.5);
}

}  // namespace
}  // namespace moesim::kernels
