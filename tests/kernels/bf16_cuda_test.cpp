// Compiles with and without CUDA: it calls only kernels/bf16_cuda.h, whose entry points exist in both.
#include "kernels/bf16_cuda.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/error.h"
#include "kernels/bf16.h"
#include "core/rng.h"

namespace moesim::kernels {
namespace {

TEST(Bf16Cuda, ReportsWhyItIsUnavailable) {
  std::string why;
  if (cuda_available(&why)) GTEST_SKIP() << "CUDA device present: covered by the kernel tests";
  EXPECT_FALSE(why.empty());
#ifndef MOESIM_HAVE_CUDA
  EXPECT_EQ(why, "built without CUDA");
#endif
  uint16_t out = 0;
  const uint8_t e = 0, s = 0;
  EXPECT_THROW(merge_bf16_cuda(&e, &s, 1, &out, nullptr), Error);
  EXPECT_THROW(merge_bf16_cuda_roundtrip(&e, &s, 1, &out, 0, 0, 0), Error);
  EXPECT_THROW(time_merge_bf16_cuda_ms(1024, 1, nullptr), Error);
}

TEST(Bf16Cuda, KernelEqualsCpuReferenceForManyLengthsAndAlignments) {
  std::string why;
  if (!cuda_available(&why)) GTEST_SKIP() << "no CUDA device: " << why;
  Rng rng(99);
  const size_t kMax = 1 << 20;
  std::vector<uint8_t> e(kMax), s(kMax);
  for (size_t i = 0; i < kMax; ++i) {
    const uint64_t r = rng.next();
    e[i] = static_cast<uint8_t>(r);
    s[i] = static_cast<uint8_t>(r >> 8);
  }
  std::vector<size_t> lengths;
  for (size_t n = 0; n <= 300; ++n) lengths.push_back(n);
  for (size_t n : {511u, 4096u, 4097u, 65535u, 65536u, 100003u, 1048575u, 1048576u}) lengths.push_back(n);
  std::vector<uint16_t> ref(kMax), got(kMax);
  for (size_t n : lengths) {
    merge_bf16_scalar(e.data(), s.data(), n, ref.data());
    // Consistent offsets (the vectorized path) and unrelated ones (the element-wise path).
    for (size_t k = 0; k < 16; ++k) {
      const size_t offs[2][3] = {{k, k, 2 * k}, {k, (k * 5 + n) % 16, (k * 11 + 3 * n) % 16}};
      for (const auto& o : offs) {
        std::fill(got.begin(), got.begin() + static_cast<std::ptrdiff_t>(n), uint16_t{0xDEAD});
        merge_bf16_cuda_roundtrip(e.data(), s.data(), n, got.data(), o[0], o[1], o[2]);
        ASSERT_TRUE(std::equal(ref.begin(), ref.begin() + static_cast<std::ptrdiff_t>(n), got.begin()))
            << "n=" << n << " offsets " << o[0] << "," << o[1] << "," << o[2];
      }
      if (n > 4096 && k > 2) break;  // large lengths: a few alignments suffice
    }
  }
}

TEST(Bf16Cuda, TimingHelperRuns) {
  std::string why;
  if (!cuda_available(&why)) GTEST_SKIP() << "no CUDA device: " << why;
  double copy_ms = -1;
  const double ms = time_merge_bf16_cuda_ms(1 << 20, 3, &copy_ms);
  EXPECT_GT(ms, 0);
  EXPECT_GT(copy_ms, 0);
}

}  // namespace
}  // namespace moesim::kernels
