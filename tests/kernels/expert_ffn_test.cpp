// kernels/expert_ffn.h against a naive double-precision reference.
#include "kernels/expert_ffn.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "base/rng.h"
#include "kernels/bf16.h"

namespace moesim::kernels {
namespace {

std::vector<uint16_t> random_bf16(size_t n, Rng& rng, double scale) {
  std::vector<uint16_t> w(n);
  for (auto& v : w) v = f32_to_bf16(static_cast<float>((rng.uniform() * 2 - 1) * scale));
  return w;
}

std::vector<double> ref_gemm(const std::vector<uint16_t>& w, size_t rows, size_t cols, const std::vector<double>& x,
                             size_t tokens) {
  std::vector<double> y(tokens * rows, 0.0);
  for (size_t t = 0; t < tokens; ++t)
    for (size_t r = 0; r < rows; ++r) {
      double s = 0;
      for (size_t c = 0; c < cols; ++c) s += static_cast<double>(bf16_to_f32(w[r * cols + c])) * x[t * cols + c];
      y[t * rows + r] = s;
    }
  return y;
}

TEST(ExpertFfn, MatchesReferenceForSeveralShapesAndTokenCounts) {
  Rng rng(7);
  for (const auto& [hidden, inter] : {std::pair<uint32_t, uint32_t>{64, 32}, {96, 200}, {300, 17}}) {
    const auto gate = random_bf16(size_t{inter} * hidden, rng, 0.1);
    const auto up = random_bf16(size_t{inter} * hidden, rng, 0.1);
    const auto down = random_bf16(size_t{hidden} * inter, rng, 0.1);
    for (uint32_t tokens : {1u, 3u, 8u}) {
      std::vector<float> x(size_t{tokens} * hidden);
      for (auto& v : x) v = static_cast<float>(rng.uniform() * 2 - 1);
      std::vector<float> y(x.size(), -1.0f);
      expert_ffn(gate.data(), up.data(), down.data(), hidden, inter, x.data(), y.data(), tokens);
      const std::vector<double> xd(x.begin(), x.end());
      const auto g = ref_gemm(gate, inter, hidden, xd, tokens);
      const auto u = ref_gemm(up, inter, hidden, xd, tokens);
      std::vector<double> a(g.size());
      for (size_t i = 0; i < a.size(); ++i) a[i] = g[i] / (1 + std::exp(-g[i])) * u[i];
      const auto ref = ref_gemm(down, hidden, inter, a, tokens);
      double max_abs = 0;
      for (double v : ref) max_abs = std::max(max_abs, std::abs(v));
      ASSERT_GT(max_abs, 0);
      for (size_t i = 0; i < ref.size(); ++i)
        ASSERT_NEAR(y[i], ref[i], 1e-4 * max_abs + 1e-6) << hidden << "x" << inter << " tokens " << tokens << " i " << i;
    }
  }
}

TEST(ExpertFfn, DenseGemmMatchesReference) {
  Rng rng(3);
  const size_t rows = 130, cols = 70, tokens = 4;
  const auto w = random_bf16(rows * cols, rng, 1.0);
  std::vector<float> x(tokens * cols);
  for (auto& v : x) v = static_cast<float>(rng.uniform());
  std::vector<float> y(tokens * rows);
  dense_gemm(w.data(), rows, cols, x.data(), y.data(), tokens);
  const auto ref = ref_gemm(w, rows, cols, std::vector<double>(x.begin(), x.end()), tokens);
  for (size_t i = 0; i < ref.size(); ++i) ASSERT_NEAR(y[i], ref[i], 1e-4 * (1 + std::abs(ref[i])));
}

TEST(ExpertFfn, FlopCount) { EXPECT_DOUBLE_EQ(expert_ffn_flops(2048, 768, 2), 2.0 * 3 * 2048 * 768 * 2); }

}  // namespace
}  // namespace moesim::kernels
