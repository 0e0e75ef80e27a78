// CUDA recovery kernel throughput (ZipMoE §3.3) against a device-to-device cudaMemcpy of the same output
// size, timed with CUDA events in the same run (kernels/bf16_cuda.h: time_merge_bf16_cuda_ms). Without
// CUDA in the build or without a device it prints "no CUDA device: skipped (...)" and exits 0, so CI
// machines without a GPU can run it.
//
// Bytes: the kernel reads n + n bytes and writes 2n; the memcpy reads 2n and writes 2n. "out GB/s" is
// BF16 bytes produced per second; "traffic GB/s" counts every byte read or written.
//
// Before timing anything it runs the correctness sweep of kernels/bf16_cuda_check.h and exits 1 on the
// first wrong value. It needs only the CUDA toolkit and the C++ standard library, so scripts/gpu-check
// builds it with one nvcc command on machines without moesim's other dependencies.
#include <cstdio>
#include <cstdlib>
#include <string>

#include "base/error.h"
#include "kernels/bf16_cuda.h"
#include "kernels/bf16_cuda_check.h"

int main(int argc, char** argv) {
  std::string why;
  if (!moesim::kernels::cuda_available(&why)) {
    std::printf("no CUDA device: skipped (%s)\n", why.c_str());
    return 0;
  }
  const int iters = argc > 1 ? std::atoi(argv[1]) : 50;
  try {
    std::printf("device: %s\n", moesim::kernels::cuda_device_description().c_str());
    const moesim::kernels::CudaCheckResult check = moesim::kernels::check_merge_bf16_cuda();
    if (!check.error.empty()) {
      std::fprintf(stderr, "error: the kernel differs from the CPU reference: %s\n", check.error.c_str());
      return 1;
    }
    std::printf("correctness: %zu launches (all 65,536 patterns; lengths 0..2^20+1; 16+16 alignments) equal "
                "the CPU reference\n",
                check.cases);
    std::printf("%12s %10s %12s %14s %12s %14s %10s\n", "BF16 values", "merge ms", "out GB/s", "traffic GB/s",
                "memcpy ms", "memcpy GB/s", "memcpy/merge");
    for (size_t n = size_t{1} << 16; n <= (size_t{1} << 28); n <<= 2) {
      double copy_ms = 0;
      const double ms = moesim::kernels::time_merge_bf16_cuda_ms(n, iters, &copy_ms);
      const double out_bytes = 2.0 * static_cast<double>(n);
      std::printf("%12zu %10.4f %12.1f %14.1f %12.4f %14.1f %10.3f\n", n, ms, out_bytes / ms / 1e6,
                  2 * out_bytes / ms / 1e6, copy_ms, 2 * out_bytes / copy_ms / 1e6, copy_ms / ms);
    }
  } catch (const moesim::Error& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  }
  return 0;
}
