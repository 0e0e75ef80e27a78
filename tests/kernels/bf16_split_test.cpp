#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "kernels/bf16.h"
#include "base/rng.h"

namespace moesim::kernels {
namespace {

// Reads the i-th uint16 of a byte buffer at any alignment.
uint16_t u16_at(const uint8_t* p, size_t i) {
  uint16_t v;
  std::memcpy(&v, p + 2 * i, sizeof v);
  return v;
}

// True when bytes [from, to) of v all still hold the fill value (nothing was written outside the range).
bool untouched(const std::vector<uint8_t>& v, size_t from, size_t to, uint8_t fill) {
  for (size_t i = from; i < to; ++i) {
    if (v[i] != fill) return false;
  }
  return true;
}

TEST(Bf16Split, ScalarSplitsTheBitFieldsAsDocumented) {
  // 0xC0A1 = sign 1, exponent 0x81, mantissa 0x21.
  const uint16_t x = 0xC0A1;
  uint8_t e = 0, s = 0;
  split_bf16_scalar(&x, 1, &e, &s);
  EXPECT_EQ(e, 0x81);
  EXPECT_EQ(s, 0xA1);  // sign bit in bit 7, mantissa 0x21 below it
  uint16_t y = 0;
  merge_bf16_scalar(&e, &s, 1, &y);
  EXPECT_EQ(y, 0xC0A1);
}

TEST(Bf16Split, EveryVariantRoundTripsAll65536Patterns) {
  std::vector<uint16_t> all(65536);
  for (uint32_t i = 0; i < 65536; ++i) all[i] = static_cast<uint16_t>(i);
  for (const auto& k : bf16_kernel_variants()) {
    SCOPED_TRACE(k.isa);
    std::vector<uint8_t> e(all.size()), s(all.size());
    std::vector<uint16_t> back(all.size());
    k.split(all.data(), all.size(), e.data(), s.data());
    for (uint32_t i = 0; i < 65536; ++i) {
      ASSERT_EQ(e[i], (i >> 7) & 0xFF) << i;
      ASSERT_EQ(s[i], ((i >> 8) & 0x80) | (i & 0x7F)) << i;
    }
    k.merge(e.data(), s.data(), e.size(), back.data());
    ASSERT_EQ(back, all);
  }
}

TEST(Bf16Split, DispatchedVersionIsOneOfTheVariants) {
  const std::string isa = merge_bf16_isa();
  bool found = false;
  for (const auto& k : bf16_kernel_variants()) found |= isa == k.isa;
  EXPECT_TRUE(found) << isa;
#if defined(__x86_64__)
  EXPECT_NE(isa, "scalar");
#endif
}

// For every length 0..4096, every variant equals the scalar reference at 16 combinations of buffer
// misalignments (0..15 bytes each, chosen so that across lengths every offset pairs with every other),
// never writes outside its output range, and merge(split(x)) == x.
TEST(Bf16Split, VectorizedEqualsReferenceForEveryLengthAndAlignment) {
  constexpr size_t kMax = 4096, kPad = 64;
  Rng rng(42);
  std::vector<uint8_t> src(2 * kMax + kPad);
  for (auto& b : src) b = static_cast<uint8_t>(rng.next());
  const auto variants = bf16_kernel_variants();
  std::vector<uint8_t> in(2 * kMax + kPad), e(kMax + kPad), s(kMax + kPad), out(2 * kMax + kPad);
  std::vector<uint8_t> ref_e(kMax), ref_s(kMax);
  for (size_t n = 0; n <= kMax; ++n) {
    split_bf16_scalar(reinterpret_cast<const uint16_t*>(src.data()), n, ref_e.data(), ref_s.data());
    for (size_t k = 0; k < 16; ++k) {
      const size_t a = k, b = (k * 5 + n) % 16, c = (k * 11 + 3 * n) % 16;
      for (const auto& v : variants) {
        // Guard zones: the 32 bytes after each range (and the bytes before it) must stay untouched.
        std::memcpy(in.data() + a, src.data(), 2 * n);
        std::memset(e.data(), 0xA5, b + n + 32);
        std::memset(s.data(), 0x5A, c + n + 32);
        v.split(reinterpret_cast<const uint16_t*>(in.data() + a), n, e.data() + b, s.data() + c);
        ASSERT_EQ(0, std::memcmp(e.data() + b, ref_e.data(), n))
            << v.isa << " split exp n=" << n << " k=" << k;
        ASSERT_EQ(0, std::memcmp(s.data() + c, ref_s.data(), n))
            << v.isa << " split sm n=" << n << " k=" << k;
        ASSERT_TRUE(untouched(e, 0, b, 0xA5) && untouched(e, b + n, b + n + 32, 0xA5)) << v.isa << " n=" << n;
        ASSERT_TRUE(untouched(s, 0, c, 0x5A) && untouched(s, c + n, c + n + 32, 0x5A)) << v.isa << " n=" << n;

        std::memset(out.data(), 0xEE, a + 2 * n + 32);
        v.merge(e.data() + b, s.data() + c, n, reinterpret_cast<uint16_t*>(out.data() + a));
        ASSERT_EQ(0, std::memcmp(out.data() + a, src.data(), 2 * n))
            << v.isa << " merge n=" << n << " k=" << k;
        ASSERT_TRUE(untouched(out, 0, a, 0xEE) && untouched(out, a + 2 * n, a + 2 * n + 32, 0xEE))
            << v.isa << " merge wrote outside its output, n=" << n;
      }
    }
  }
}

TEST(Bf16Split, DispatchedSplitAndMergeMatchReferenceOnRandomData) {
  Rng rng(7);
  const size_t n = 100003;
  std::vector<uint16_t> x(n);
  for (auto& v : x) v = static_cast<uint16_t>(rng.next());
  std::vector<uint8_t> e(n), s(n), re(n), rs(n);
  split_bf16(x.data(), n, e.data(), s.data());
  split_bf16_scalar(x.data(), n, re.data(), rs.data());
  EXPECT_EQ(e, re);
  EXPECT_EQ(s, rs);
  std::vector<uint16_t> y(n);
  merge_bf16(e.data(), s.data(), n, y.data());
  EXPECT_EQ(y, x);
  EXPECT_EQ(u16_at(reinterpret_cast<const uint8_t*>(y.data()), n - 1), x[n - 1]);
}

// Large outputs through every variant, the streaming-store ones included (a scalar head up to a 16/32-byte
// boundary, then non-temporal stores); every output alignment, odd ones included (regular stores then).
TEST(Bf16Split, LargeMergesEqualReferenceAtEveryOutputAlignment) {
  const size_t n = (size_t{3} << 20) + 13;
  Rng rng(17);
  std::vector<uint8_t> e(n + 16), s(n + 16);
  for (auto& b : e) b = static_cast<uint8_t>(rng.next());
  for (auto& b : s) b = static_cast<uint8_t>(rng.next());
  std::vector<uint16_t> ref(n);
  merge_bf16_scalar(e.data() + 3, s.data() + 5, n, ref.data());
  std::vector<uint8_t> out(2 * n + 64);
  for (const auto& v : bf16_kernel_variants()) {
    for (size_t a : {0, 1, 2, 6, 30, 31}) {
      std::memset(out.data(), 0xEE, out.size());
      v.merge(e.data() + 3, s.data() + 5, n, reinterpret_cast<uint16_t*>(out.data() + a));
      ASSERT_EQ(0, std::memcmp(out.data() + a, ref.data(), 2 * n)) << v.isa << " offset " << a;
      ASSERT_TRUE(untouched(out, 0, a, 0xEE) && untouched(out, a + 2 * n, out.size(), 0xEE)) << v.isa;
    }
  }
}

// The store hint changes how lines are written, never what: every hint, small and large, every alignment.
TEST(Bf16Split, MergeStoreHintsGiveTheSameResult) {
  Rng rng(23);
  for (size_t n : {size_t{0}, size_t{5}, size_t{33}, size_t{4099}, (size_t{1} << 20) + 7}) {
    std::vector<uint8_t> e(n + 1), s(n + 1);
    for (auto& b : e) b = static_cast<uint8_t>(rng.next());
    for (auto& b : s) b = static_cast<uint8_t>(rng.next());
    std::vector<uint16_t> ref(n);
    merge_bf16_scalar(e.data(), s.data(), n, ref.data());
    std::vector<uint8_t> out(2 * n + 64);
    for (MergeStores h : {MergeStores::kAuto, MergeStores::kStream, MergeStores::kCache}) {
      for (size_t a : {0, 1, 2, 16, 31}) {
        std::memset(out.data(), 0xEE, out.size());
        merge_bf16(e.data(), s.data(), n, reinterpret_cast<uint16_t*>(out.data() + a), h);
        ASSERT_EQ(0, n ? std::memcmp(out.data() + a, ref.data(), 2 * n) : 0)
            << "hint " << static_cast<int>(h) << " n " << n << " offset " << a;
        ASSERT_TRUE(untouched(out, 0, a, 0xEE) && untouched(out, a + 2 * n, out.size(), 0xEE));
      }
    }
  }
}

}  // namespace
}  // namespace moesim::kernels
