#include "exec/weight_stats.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <map>

#include "tests/exec/exec_test_util.h"
#include "tests/fixtures.h"

namespace moesim::exec {
namespace {

using testing::TempDir;

// Independent order-0 entropy of a list of exponent bytes.
double entropy_of(const std::vector<int>& exps) {
  std::map<int, double> c;
  for (int e : exps) c[e] += 1;
  double h = 0;
  for (const auto& [k, v] : c) {
    const double p = v / static_cast<double>(exps.size());
    h -= p * std::log2(p);
  }
  return h;
}

TEST(WeightStats, EntropyMatchesAnIndependentComputationOnAHandMadeTensor) {
  TempDir dir("wstats");
  const std::string p = dir.file("h.safetensors");
  // Exponent fields 120 x4, 121 x2, 122, 0 (a subnormal) and signs/mantissas varied: H = 1.75 bits exactly.
  const std::vector<int> exps = {120, 120, 120, 120, 121, 121, 122, 0};
  std::vector<uint16_t> v;
  for (size_t i = 0; i < exps.size(); ++i)
    v.push_back(static_cast<uint16_t>(((i & 1) << 15) | (exps[i] << 7) | ((i * 37) & 0x7F)));
  // A second tensor, F32, whose values round to known BF16 exponents: 1.5 (127), 3.0 (128), -0.1 (123).
  const float f[3] = {1.5f, 3.0f, -0.1f};
  {
    SafetensorsWriter w(p, {{"a", DType::BF16, {2, 4}}, {"b", DType::F32, {3}}}, Json::object());
    w.write(v.data(), v.size() * 2);
    w.write(f, sizeof f);
    w.commit();
  }
  const WeightSource ws = WeightSource::open(p);
  const WeightStats s = compute_weight_stats(ws, {"raw", "zstd:19"}, 2);
  ASSERT_EQ(s.tensors.size(), 2u);
  EXPECT_NEAR(s.tensors[0].hist.entropy_bits(), 1.75, 1e-12);
  EXPECT_NEAR(s.tensors[0].hist.entropy_bits(), entropy_of(exps), 1e-9);
  EXPECT_EQ(s.tensors[0].hist.distinct(), 4u);
  std::vector<int> all = exps;
  all.insert(all.end(), {127, 128, 123});
  EXPECT_EQ(s.elements(), 11u);
  EXPECT_NEAR(s.all.entropy_bits(), entropy_of(all), 1e-9);
  EXPECT_NEAR(s.all.bound_ratio(), (8 + entropy_of(all)) / 16, 1e-9);
  EXPECT_EQ(s.codecs[0], "raw");
  EXPECT_DOUBLE_EQ(s.codec_ratio(0), 1.0);  // raw exponents + raw SM = the BF16 size
  EXPECT_GT(s.codec_ratio(1), 0.5);
}

// Real data: the exponent histogram of the bundled weights equals one computed here from the F32 bits
// with an independent round-to-nearest-even.
TEST(WeightStats, RealWeightsHistogramMatchesIndependentRounding) {
  const WeightSource ws = WeightSource::open(test::test_data("weights/faceres-subset.safetensors"));
  const WeightStats s = compute_weight_stats(ws, {"lz4"}, 1);
  std::vector<int> exps;
  for (const auto& t : ws.tensors()) {
    for (uint64_t i = 0; i < t.elements; ++i) {
      uint32_t u;
      std::memcpy(&u, t.data + 4 * i, 4);
      const uint32_t r = ((u & 0x7F800000u) == 0x7F800000u && (u & 0x7FFFFF))
                             ? (u >> 16) | 0x40
                             : (u + 0x7FFF + ((u >> 16) & 1)) >> 16;
      exps.push_back(static_cast<int>((r >> 7) & 0xFF));
    }
  }
  ASSERT_EQ(s.elements(), exps.size());
  EXPECT_NEAR(s.all.entropy_bits(), entropy_of(exps), 1e-9);
  const WeightStats s4 = compute_weight_stats(ws, {"lz4"}, 4);
  EXPECT_EQ(s4.all.count, s.all.count);
  EXPECT_EQ(s4.codec_e_bytes, s.codec_e_bytes);
}

}  // namespace
}  // namespace moesim::exec
