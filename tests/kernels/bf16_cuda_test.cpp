// Compiles with and without CUDA: it calls only kernels/bf16_cuda.h, whose entry points exist in both.
#include "kernels/bf16_cuda.h"

#include <gtest/gtest.h>

#include <string>

#include "base/error.h"
#include "kernels/bf16_cuda_check.h"

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
  const CudaCheckResult r = check_merge_bf16_cuda();
  EXPECT_EQ(r.error, "");
  EXPECT_GT(r.cases, 9000u);
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
