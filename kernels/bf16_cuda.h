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

// The current device for result files: "<name> (sm_<major><minor>, <n> SMs, <memory> GiB), driver <x.y>,
// runtime <x.y>". Throws moesim::Error without CUDA or a device.
std::string cuda_device_description();

// Device pointers; stream is a cudaStream_t (nullptr = default stream). Asynchronous.
// Throws moesim::Error when the build has no CUDA or the launch fails. Any n and any pointer alignment:
// when exp and sm share their offset modulo 16 and out sits at twice that offset (modulo 16), as for
// buffers cut from aligned allocations at the same element index, the body runs with 16-byte vector
// loads and stores and only the unaligned head and tail (< 16 values each) go element by element;
// otherwise the whole range goes element by element.
void merge_bf16_cuda(const uint8_t* d_exp, const uint8_t* d_sm, size_t n, uint16_t* d_out, void* stream);

// Benchmark helper: allocates n-value buffers on the device, times `iters` launches of merge_bf16_cuda
// with CUDA events and returns the mean milliseconds per launch; when memcpy_ms is not null, it also
// times a device-to-device cudaMemcpy of the same output size (2n bytes) in the same run, the yardstick
// for a memory-bound kernel. Throws moesim::Error without CUDA or a device.
double time_merge_bf16_cuda_ms(size_t n, int iters, double* memcpy_ms);

// Test helper: copies the host streams to the device at the given byte offsets from 256-byte-aligned
// allocations, runs merge_bf16_cuda and copies the result back, so tests can cover every alignment
// without calling the CUDA runtime themselves. Throws moesim::Error without CUDA or a device.
void merge_bf16_cuda_roundtrip(const uint8_t* exp, const uint8_t* sm, size_t n, uint16_t* out,
                               size_t exp_offset, size_t sm_offset, size_t out_offset);

}  // namespace moesim::kernels
