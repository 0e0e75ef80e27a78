// What exec (exec/exec_platform.h) runs on a CUDA GPU, behind an interface without CUDA types: device
// memory, host <-> device copies, the recovery kernel (kernels/bf16_cuda.h, ZipMoE §3.3) and the expert
// compute with cuBLAS BF16 GEMMs. Declared always; usable only when built with CUDA (MOESIM_HAVE_CUDA) and
// a GPU is present (kernels::cuda_available()); otherwise every entry point throws moesim::Error.
//
//   expert_ffn:  y_t = W_down (silu(W_gate x_t) * (W_up x_t)) for the op's tokens, as kernels/expert_ffn.h
//                on the CPU: W_gate, W_up [inter, hidden] and W_down [hidden, inter], row-major BF16 in
//                device memory; x (BF16) and y (FP32) are the stream's own seeded scratch activations.
//                Three cublasGemmEx calls (BF16 operands, FP32 accumulation) and one SwiGLU kernel.
//   dense_gemm:  y_t = W x_t with W [rows, cols] BF16 row-major in device memory (cublasGemmEx).
//
// Every GpuStream call returns once the device has finished it (the stream is synchronized), so the
// wall time of the call is the op's real duration, launch and completion included, as exec records it.
// Errors (an allocation that fails, a launch or a copy that fails) throw moesim::Error with the CUDA or
// cuBLAS error text.
//
// Thread safety: a GpuStream is used by one thread at a time; DeviceMemory objects may be created and
// destroyed on any thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

namespace moesim::kernels::gpu {

// An owned device allocation (cudaMalloc). Move-only.
class DeviceMemory {
 public:
  DeviceMemory() = default;
  explicit DeviceMemory(size_t bytes);  // throws moesim::Error naming the size when the device is full
  ~DeviceMemory();
  DeviceMemory(DeviceMemory&& o) noexcept;
  DeviceMemory& operator=(DeviceMemory&& o) noexcept;
  DeviceMemory(const DeviceMemory&) = delete;
  DeviceMemory& operator=(const DeviceMemory&) = delete;
  void* data() const { return p_; }
  size_t size() const { return size_; }

 private:
  void* p_ = nullptr;
  size_t size_ = 0;
};

class GpuStream {
 public:
  explicit GpuStream(uint64_t seed);
  ~GpuStream();
  GpuStream(const GpuStream&) = delete;
  GpuStream& operator=(const GpuStream&) = delete;

  void upload(void* d_dst, const void* h_src, size_t bytes);
  void download(void* h_dst, const void* d_src, size_t bytes);
  // n BF16 values from n exponent bytes and n sign-mantissa bytes, all in device memory.
  void merge(const void* d_exp, const void* d_sm, size_t n, void* d_out);
  void expert_ffn(const void* d_gate, const void* d_up, const void* d_down, uint32_t hidden, uint32_t inter,
                  uint32_t tokens);
  void dense_gemm(const void* d_w, uint64_t rows, uint64_t cols, uint32_t tokens);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace moesim::kernels::gpu
