// The CUDA recovery kernel (ZipMoE §3.3): rebuilds BF16 tensors from an exponent stream and a
// sign-mantissa stream in device memory. Each thread loads contiguous segments of both streams with
// 16-byte vector loads, merges in registers and writes with 16-byte vector stores; any length and any
// alignment of the tail are handled. Declared always; available only when built with CUDA
// (MOESIM_HAVE_CUDA) and a GPU is present at run time.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace moesim::kernels {

// True when this build has the CUDA kernel and a CUDA device is usable; `why` says why not otherwise.
bool cuda_available(std::string* why = nullptr);

// Device pointers; stream is a cudaStream_t (nullptr = default stream). Asynchronous.
void merge_bf16_cuda(const uint8_t* d_exp, const uint8_t* d_sm, size_t n, uint16_t* d_out, void* stream);

}  // namespace moesim::kernels
