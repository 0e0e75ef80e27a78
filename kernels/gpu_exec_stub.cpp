// kernels/gpu_exec.h for builds without CUDA (MOESIM_HAVE_CUDA undefined): every entry point throws, so
// exec links either way and says at run time that there is no GPU path.
#ifndef MOESIM_HAVE_CUDA

#include "base/error.h"
#include "kernels/gpu_exec.h"

namespace moesim::kernels::gpu {
namespace {
[[noreturn]] void no_cuda() {
  throw Error("the GPU path needs CUDA: moesim was built without it (no nvcc at configure time or MOESIM_CUDA=OFF)");
}
}  // namespace

DeviceMemory::DeviceMemory(size_t) { no_cuda(); }
DeviceMemory::~DeviceMemory() = default;
DeviceMemory::DeviceMemory(DeviceMemory&& o) noexcept : p_(o.p_), size_(o.size_) {}
DeviceMemory& DeviceMemory::operator=(DeviceMemory&& o) noexcept {
  p_ = o.p_;
  size_ = o.size_;
  return *this;
}

struct GpuStream::Impl {};
GpuStream::GpuStream(uint64_t) { no_cuda(); }
GpuStream::~GpuStream() = default;
void GpuStream::upload(void*, const void*, size_t) { no_cuda(); }
void GpuStream::download(void*, const void*, size_t) { no_cuda(); }
void GpuStream::merge(const void*, const void*, size_t, void*) { no_cuda(); }
void GpuStream::expert_ffn(const void*, const void*, const void*, uint32_t, uint32_t, uint32_t) { no_cuda(); }
void GpuStream::dense_gemm(const void*, uint64_t, uint64_t, uint32_t) { no_cuda(); }

}  // namespace moesim::kernels::gpu

#endif  // MOESIM_HAVE_CUDA
