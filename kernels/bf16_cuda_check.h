// Correctness sweep of the CUDA recovery kernel against the CPU scalar reference, shared by the unit
// test (tests/kernels/bf16_cuda_test.cpp) and the kernel benchmark (bench/cuda_kernel_bench.cpp), which
// refuses to time a kernel that gives wrong values. Uses only kernels/bf16.h and kernels/bf16_cuda.h, so
// it builds with nvcc and the C++ standard library alone (scripts/gpu-check).
#pragma once

#include <cstddef>
#include <string>

namespace moesim::kernels {

struct CudaCheckResult {
  size_t cases = 0;   // kernel launches compared
  std::string error;  // empty when every case equalled the reference; else the first mismatch
};

// All 65,536 BF16 bit patterns; every length 0..300 and some up to 2^20 + 1, each with 16 consistent
// alignments of (exp, sm, out) (the vectorized path; fewer for lengths > 4096) and 16 unrelated ones
// (the element-wise path). Throws moesim::Error when there is no usable device.
CudaCheckResult check_merge_bf16_cuda();

}  // namespace moesim::kernels
