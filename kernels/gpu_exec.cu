// kernels/gpu_exec.h on CUDA: device memory, copies, the recovery kernel and cuBLAS expert compute.
#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <cuda_runtime.h>
#include <dlfcn.h>

#include <string>
#include <type_traits>
#include <vector>

#include "base/error.h"
#include "base/rng.h"
#include "kernels/bf16.h"
#include "kernels/bf16_cuda.h"
#include "kernels/gpu_exec.h"

namespace moesim::kernels::gpu {
namespace {

void check(cudaError_t rc, const char* step) {
  if (rc != cudaSuccess) throw Error(std::string("CUDA: ") + step + ": " + cudaGetErrorString(rc));
}

// cuBLAS is loaded on first use (dlopen) instead of being linked: linking it made every moesim command,
// `replay` and `trace info` included, pay about 70 ms at start-up on a machine with the CUDA toolkit (the
// dynamic loader relocates libcublasLt, ~25,000 page faults; bench/results/replay.md), although only exec
// on a CUDA device calls it. The five entry points used here, resolved once (thread-safe static).
struct Cublas {
  decltype(&cublasCreate_v2) create = nullptr;
  decltype(&cublasDestroy_v2) destroy = nullptr;
  decltype(&cublasSetStream_v2) set_stream = nullptr;
  // cublasGemmEx has an inline C++ overload (cudaDataType compute type); this is the library's symbol.
  cublasStatus_t (*gemm_ex)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int, int, int, const void*,
                            const void*, cudaDataType, int, const void*, cudaDataType, int, const void*, void*,
                            cudaDataType, int, cublasComputeType_t, cublasGemmAlgo_t) = nullptr;
  decltype(&cublasGetStatusString) status_string = nullptr;
};

const Cublas& cublas() {
  static const Cublas api = [] {
    const std::string name = "libcublas.so." + std::to_string(CUBLAS_VER_MAJOR);
    void* lib = dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
      const char* why = dlerror();
      throw Error("cuBLAS: cannot load " + name + ": " + (why ? why : "unknown reason"));
    }
    Cublas c;
    auto sym = [&](auto& fn, const char* symbol) {
      fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(dlsym(lib, symbol));
      if (!fn) throw Error("cuBLAS: " + name + " has no " + symbol);
    };
    sym(c.create, "cublasCreate_v2");
    sym(c.destroy, "cublasDestroy_v2");
    sym(c.set_stream, "cublasSetStream_v2");
    sym(c.gemm_ex, "cublasGemmEx");
    sym(c.status_string, "cublasGetStatusString");
    return c;  // the library stays loaded for the process's lifetime
  }();
  return api;
}

void check(cublasStatus_t rc, const char* step) {
  if (rc != CUBLAS_STATUS_SUCCESS)
    throw Error(std::string("cuBLAS: ") + step + ": " + cublas().status_string(rc));
}

// SwiGLU's gate: h = silu(g) * u, written as BF16 for the down projection's GEMM.
__global__ void swiglu_kernel(const float* __restrict__ g, const float* __restrict__ u, __nv_bfloat16* __restrict__ h,
                              size_t n) {
  const size_t stride = static_cast<size_t>(gridDim.x) * blockDim.x;
  for (size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x; i < n; i += stride) {
    const float x = g[i];
    h[i] = __float2bfloat16(x / (1.0f + __expf(-x)) * u[i]);
  }
}

// A device scratch buffer that only grows.
struct Scratch {
  DeviceMemory mem;
  void* reserve(size_t bytes) {
    if (mem.size() < bytes) mem = DeviceMemory(bytes);
    return mem.data();
  }
};

}  // namespace

DeviceMemory::DeviceMemory(size_t bytes) : size_(bytes) {
  const cudaError_t rc = cudaMalloc(&p_, bytes == 0 ? 1 : bytes);
  if (rc != cudaSuccess) {
    cudaGetLastError();
    p_ = nullptr;
    throw Error(std::string("CUDA: cannot allocate ") + std::to_string(bytes) + " bytes of device memory: " +
                cudaGetErrorString(rc));
  }
}

DeviceMemory::~DeviceMemory() {
  if (p_) cudaFree(p_);
}

DeviceMemory::DeviceMemory(DeviceMemory&& o) noexcept : p_(o.p_), size_(o.size_) {
  o.p_ = nullptr;
  o.size_ = 0;
}

DeviceMemory& DeviceMemory::operator=(DeviceMemory&& o) noexcept {
  if (this != &o) {
    if (p_) cudaFree(p_);
    p_ = o.p_;
    size_ = o.size_;
    o.p_ = nullptr;
    o.size_ = 0;
  }
  return *this;
}

struct GpuStream::Impl {
  cudaStream_t stream = nullptr;
  cublasHandle_t blas = nullptr;
  uint64_t seed = 1;
  size_t x_values = 0;  // seeded BF16 activations in x
  Scratch x, g, u, h, y;

  void sync(const char* step) { check(cudaStreamSynchronize(stream), step); }
  // The first `values` activations, seeded (uniform in [-0.5, 0.5)), BF16 on the device.
  const void* activations(size_t values) {
    if (x_values < values) {
      std::vector<uint16_t> host(values);
      Rng rng(seed);
      for (auto& v : host) v = f32_to_bf16(static_cast<float>(rng.uniform() - 0.5));
      void* d = x.reserve(values * 2);
      check(cudaMemcpyAsync(d, host.data(), values * 2, cudaMemcpyHostToDevice, stream), "upload activations");
      sync("upload activations");
      x_values = values;
    }
    return x.mem.data();
  }
  // C (m x n, FP32, column-major) = A^T B, A stored k x m column-major (a row-major [m, k] matrix), B k x n.
  void gemm_tn(const void* a, const void* b, float* c, int m, int n, int k, const char* step) {
    const float alpha = 1.0f, beta = 0.0f;
    check(cublas().gemm_ex(blas, CUBLAS_OP_T, CUBLAS_OP_N, m, n, k, &alpha, a, CUDA_R_16BF, k, b, CUDA_R_16BF, k, &beta,
                       c, CUDA_R_32F, m, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT),
          step);
  }
};

GpuStream::GpuStream(uint64_t seed) : impl_(std::make_unique<Impl>()) {
  std::string why;
  if (!cuda_available(&why)) throw Error("no CUDA device: " + why);
  impl_->seed = seed;
  check(cudaStreamCreateWithFlags(&impl_->stream, cudaStreamNonBlocking), "cudaStreamCreate");
  const Cublas* api = nullptr;
  try {
    api = &cublas();
  } catch (...) {
    cudaStreamDestroy(impl_->stream);
    throw;
  }
  const cublasStatus_t rc = api->create(&impl_->blas);
  if (rc != CUBLAS_STATUS_SUCCESS) {
    cudaStreamDestroy(impl_->stream);
    check(rc, "cublasCreate");
  }
  check(api->set_stream(impl_->blas, impl_->stream), "cublasSetStream");
}

GpuStream::~GpuStream() {
  if (impl_->blas) cublas().destroy(impl_->blas);
  if (impl_->stream) cudaStreamDestroy(impl_->stream);
}

void GpuStream::upload(void* d_dst, const void* h_src, size_t bytes) {
  check(cudaMemcpyAsync(d_dst, h_src, bytes, cudaMemcpyHostToDevice, impl_->stream), "host-to-device copy");
  impl_->sync("host-to-device copy");
}

void GpuStream::download(void* h_dst, const void* d_src, size_t bytes) {
  check(cudaMemcpyAsync(h_dst, d_src, bytes, cudaMemcpyDeviceToHost, impl_->stream), "device-to-host copy");
  impl_->sync("device-to-host copy");
}

void GpuStream::merge(const void* d_exp, const void* d_sm, size_t n, void* d_out) {
  merge_bf16_cuda(static_cast<const uint8_t*>(d_exp), static_cast<const uint8_t*>(d_sm), n,
                  static_cast<uint16_t*>(d_out), impl_->stream);
  impl_->sync("recovery kernel");
}

void GpuStream::expert_ffn(const void* d_gate, const void* d_up, const void* d_down, uint32_t hidden, uint32_t inter,
                           uint32_t tokens) {
  if (tokens == 0) return;
  Impl& s = *impl_;
  const size_t mid = size_t{inter} * tokens;
  const void* x = s.activations(size_t{hidden} * tokens);
  auto* g = static_cast<float*>(s.g.reserve(mid * 4));
  auto* u = static_cast<float*>(s.u.reserve(mid * 4));
  auto* h = static_cast<__nv_bfloat16*>(s.h.reserve(mid * 2));
  auto* y = static_cast<float*>(s.y.reserve(size_t{hidden} * tokens * 4));
  const int n = static_cast<int>(tokens), hi = static_cast<int>(hidden), in = static_cast<int>(inter);
  s.gemm_tn(d_gate, x, g, in, n, hi, "gate projection");
  s.gemm_tn(d_up, x, u, in, n, hi, "up projection");
  const unsigned blocks = static_cast<unsigned>(std::min<size_t>((mid + 255) / 256, 4096));
  swiglu_kernel<<<blocks, 256, 0, s.stream>>>(g, u, h, mid);
  check(cudaGetLastError(), "SwiGLU kernel");
  s.gemm_tn(d_down, h, y, hi, n, in, "down projection");
  s.sync("expert FFN");
}

void GpuStream::dense_gemm(const void* d_w, uint64_t rows, uint64_t cols, uint32_t tokens) {
  if (tokens == 0 || rows == 0) return;
  Impl& s = *impl_;
  const void* x = s.activations(cols * tokens);
  auto* y = static_cast<float*>(s.y.reserve(rows * tokens * 4));
  s.gemm_tn(d_w, x, y, static_cast<int>(rows), static_cast<int>(tokens), static_cast<int>(cols), "dense GEMM");
  s.sync("dense GEMM");
}

}  // namespace moesim::kernels::gpu
