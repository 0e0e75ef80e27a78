#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <vector>

#include "kernels/bf16.h"
#include "base/rng.h"

namespace moesim::kernels {
namespace {

uint32_t bits(float x) {
  uint32_t u;
  std::memcpy(&u, &x, sizeof u);
  return u;
}

float from_bits(uint32_t u) {
  float x;
  std::memcpy(&x, &u, sizeof x);
  return x;
}

bool bf16_is_nan(uint16_t b) {
  return (b & 0x7F80) == 0x7F80 && (b & 0x7F) != 0;
}

// Independent reference, by value: the nearest number with 8 significant bits (ties to even through
// nearbyint in the default rounding mode). Only for finite, non-zero values within the BF16 range.
uint16_t ref_round_by_value(double v) {
  int e = 0;
  const double m = std::frexp(v, &e);                        // v = m * 2^e, 0.5 <= |m| < 1
  const double r = std::nearbyint(std::ldexp(m, 8));         // 8 significant bits, RNE
  const float f = static_cast<float>(std::ldexp(r, e - 8));  // exact: r has <= 9 bits
  return static_cast<uint16_t>(bits(f) >> 16);
}

// Independent reference, by bits: compare the dropped half with the halfway point explicitly.
uint16_t ref_round_by_bits(uint32_t u) {
  uint32_t upper = u >> 16;
  const uint32_t lower = u & 0xFFFF;
  if (lower > 0x8000 || (lower == 0x8000 && (upper & 1))) ++upper;
  return static_cast<uint16_t>(upper);
}

// f16 value computed from its definition, as a double.
double f16_value(uint16_t h) {
  const int sign = h >> 15, exp = (h >> 10) & 0x1F, man = h & 0x3FF;
  double v = exp == 0 ? std::ldexp(man, -24) : std::ldexp(1024 + man, exp - 25);
  return sign ? -v : v;
}

TEST(Bf16Cast, F32HandPickedValues) {
  EXPECT_EQ(f32_to_bf16(from_bits(0x3F808000)), 0x3F80);  // tie, even kept half: down
  EXPECT_EQ(f32_to_bf16(from_bits(0x3F818000)), 0x3F82);  // tie, odd kept half: up
  EXPECT_EQ(f32_to_bf16(from_bits(0x3F808001)), 0x3F81);  // above the tie: up
  EXPECT_EQ(f32_to_bf16(from_bits(0x3F807FFF)), 0x3F80);  // below the tie: down
  EXPECT_EQ(f32_to_bf16(1.0f), 0x3F80);
  EXPECT_EQ(f32_to_bf16(-2.0f), 0xC000);
  EXPECT_EQ(f32_to_bf16(0.0f), 0x0000);
  EXPECT_EQ(f32_to_bf16(-0.0f), 0x8000);
  EXPECT_EQ(f32_to_bf16(INFINITY), 0x7F80);
  EXPECT_EQ(f32_to_bf16(-INFINITY), 0xFF80);
  EXPECT_EQ(f32_to_bf16(from_bits(0x7F7FFFFF)), 0x7F80);  // max float rounds up to infinity
  EXPECT_EQ(f32_to_bf16(from_bits(0xFF7FFFFF)), 0xFF80);
  EXPECT_EQ(f32_to_bf16(from_bits(0x7F7F7FFF)), 0x7F7F);  // largest value that stays finite
  EXPECT_EQ(f32_to_bf16(from_bits(0x00000001)), 0x0000);  // smallest subnormal rounds to zero
  EXPECT_EQ(f32_to_bf16(from_bits(0x00008000)), 0x0000);  // subnormal tie, even: down
  EXPECT_EQ(f32_to_bf16(from_bits(0x00018000)), 0x0002);  // subnormal tie, odd: up
  EXPECT_EQ(f32_to_bf16(from_bits(0x007FFFFF)), 0x0080);  // largest subnormal rounds to min normal
  EXPECT_EQ(f32_to_bf16(from_bits(0x80010000)), 0x8001);  // exact negative subnormal
  // NaN stays NaN, sign kept, quiet bit set, even when the payload lies only in the dropped bits.
  for (uint32_t nan : {0x7FC00000u, 0x7F800001u, 0xFF800001u, 0x7FFFFFFFu, 0xFFC00001u, 0x7F80FFFFu}) {
    const uint16_t b = f32_to_bf16(from_bits(nan));
    EXPECT_TRUE(bf16_is_nan(b)) << std::hex << nan;
    EXPECT_EQ(b & 0x8000, (nan >> 16) & 0x8000) << std::hex << nan;
    EXPECT_EQ(b & 0x0040, 0x0040) << std::hex << nan;
  }
}

TEST(Bf16Cast, F32RandomAgreesWithBothReferences) {
  Rng rng(1234);
  for (int i = 0; i < 2000000; ++i) {
    const auto u = static_cast<uint32_t>(rng.next());
    const float f = from_bits(u);
    const uint16_t got = f32_to_bf16(f);
    if (std::isnan(f)) {
      ASSERT_TRUE(bf16_is_nan(got)) << std::hex << u;
      continue;
    }
    ASSERT_EQ(got, ref_round_by_bits(u)) << std::hex << u;
    if (std::isfinite(f) && f != 0 && std::fabs(f) < from_bits(0x7F7F8000) && std::fabs(f) >= 0x1p-126f) {
      ASSERT_EQ(got, ref_round_by_value(f)) << std::hex << u;
    }
  }
}

TEST(Bf16Cast, F32ArrayVersionMatchesScalar) {
  Rng rng(5);
  std::vector<float> x(1001);
  for (auto& v : x) v = static_cast<float>(rng.normal());
  std::vector<uint16_t> y(x.size());
  f32_to_bf16(x.data(), x.size(), y.data());
  for (size_t i = 0; i < x.size(); ++i) ASSERT_EQ(y[i], f32_to_bf16(x[i]));
}

TEST(Bf16Cast, F16ExhaustiveAgainstValueReference) {
  std::vector<uint16_t> all(65536), out(65536);
  for (uint32_t h = 0; h < 65536; ++h) all[h] = static_cast<uint16_t>(h);
  f16_to_bf16(all.data(), all.size(), out.data());
  for (uint32_t h = 0; h < 65536; ++h) {
    const uint16_t got = f16_to_bf16(static_cast<uint16_t>(h));
    ASSERT_EQ(got, out[h]) << std::hex << h;
    const uint32_t exp = (h >> 10) & 0x1F, man = h & 0x3FF, sign = h & 0x8000;
    if (exp == 0x1F && man != 0) {
      ASSERT_TRUE(bf16_is_nan(got)) << std::hex << h;
      ASSERT_EQ(got & 0x8000, sign) << std::hex << h;
    } else if (exp == 0x1F) {
      ASSERT_EQ(got, sign | 0x7F80) << std::hex << h;
    } else if (exp == 0 && man == 0) {
      ASSERT_EQ(got, sign) << std::hex << h;
    } else {
      ASSERT_EQ(got, ref_round_by_value(f16_value(static_cast<uint16_t>(h)))) << std::hex << h;
    }
  }
  EXPECT_EQ(f16_to_bf16(0x3C00), 0x3F80);  // 1.0
  EXPECT_EQ(f16_to_bf16(0x0001), 0x3380);  // 2^-24, the smallest f16 subnormal, is exact in BF16
  EXPECT_EQ(f16_to_bf16(0x7BFF), 0x4780);  // 65504 rounds up to 65536
  EXPECT_EQ(f16_to_bf16(0x7C01), 0x7FC0);  // signalling NaN with a low payload stays NaN
}

TEST(Bf16Cast, Bf16ToF32IsExactWidening) {
  for (uint32_t b = 0; b < 65536; ++b) {
    const float f = bf16_to_f32(static_cast<uint16_t>(b));
    ASSERT_EQ(bits(f), b << 16);
    if (!std::isnan(f)) {
      ASSERT_EQ(f32_to_bf16(f), b);
    }
  }
}

}  // namespace
}  // namespace moesim::kernels
