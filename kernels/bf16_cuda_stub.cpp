// The CUDA entry points of kernels/bf16_cuda.h for builds without CUDA (MOESIM_HAVE_CUDA undefined):
// callers link either way and learn at run time that the kernel is absent.
#ifndef MOESIM_HAVE_CUDA

#include "base/error.h"
#include "kernels/bf16_cuda.h"

namespace moesim::kernels {

namespace {
[[noreturn]] void no_cuda(const char* fn) {
  throw Error(std::string(fn) +
              ": moesim was built without CUDA (no nvcc at configure time or MOESIM_CUDA=OFF)");
}
}  // namespace

bool cuda_available(std::string* why) {
  if (why) *why = "built without CUDA";
  return false;
}

std::string cuda_device_description() {
  no_cuda("cuda_device_description");
}

void merge_bf16_cuda(const uint8_t*, const uint8_t*, size_t, uint16_t*, void*) {
  no_cuda("merge_bf16_cuda");
}

double time_merge_bf16_cuda_ms(size_t, int, double*) {
  no_cuda("time_merge_bf16_cuda_ms");
}

void merge_bf16_cuda_roundtrip(const uint8_t*, const uint8_t*, size_t, uint16_t*, size_t, size_t, size_t) {
  no_cuda("merge_bf16_cuda_roundtrip");
}

}  // namespace moesim::kernels

#endif  // MOESIM_HAVE_CUDA
