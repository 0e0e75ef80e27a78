// The memory-coalesced tensor recovery kernel of ZipMoE §3.3: each thread loads contiguous 16-byte
// segments of the decompressed E-chunk (exponents) and of the SM-chunk (sign + mantissa) with uint4
// loads, rebuilds 16 BF16 values in registers and writes them back with two 16-byte stores; consecutive
// threads touch consecutive segments, so every warp access is coalesced. Values before the first 16-byte
// boundary of the exponent stream (head) and after the last full segment (tail) go element by element.
// When the three streams are not mutually aligned (see bf16_cuda.h), a byte-wise kernel handles all.
#include <cuda_runtime.h>

#include <cstdio>
#include <string>
#include <vector>

#include "base/error.h"
#include "kernels/bf16_cuda.h"

namespace moesim::kernels {

namespace {

constexpr int kThreads = 256;

void check(cudaError_t rc, const char* step) {
  if (rc != cudaSuccess) throw Error(std::string("CUDA: ") + step + ": " + cudaGetErrorString(rc));
}

// Byte-domain merge of four values at once (see bf16_split.cpp): the low byte of a BF16 value is
// exp << 7 | sm & 0x7F, the high byte sm & 0x80 | exp >> 1; __byte_perm interleaves them.
__device__ __forceinline__ void merge4(uint32_t e, uint32_t s, uint32_t& out01, uint32_t& out23) {
  const uint32_t lo = (s & 0x7F7F7F7Fu) | ((e << 7) & 0x80808080u);
  const uint32_t hi = (s & 0x80808080u) | ((e >> 1) & 0x7F7F7F7Fu);
  out01 = __byte_perm(lo, hi, 0x5140);  // lo0 hi0 lo1 hi1
  out23 = __byte_perm(lo, hi, 0x7362);  // lo2 hi2 lo3 hi3
}

// One value, written as two bytes so that any output alignment works.
__device__ __forceinline__ void merge1(const uint8_t* e, const uint8_t* s, uint8_t* out, size_t i) {
  const uint32_t ev = e[i], sv = s[i];
  out[2 * i] = static_cast<uint8_t>((sv & 0x7Fu) | ((ev << 7) & 0x80u));
  out[2 * i + 1] = static_cast<uint8_t>((sv & 0x80u) | (ev >> 1));
}

__global__ void merge_vec_kernel(const uint8_t* __restrict__ e, const uint8_t* __restrict__ s,
                                 uint8_t* __restrict__ out, size_t n, size_t head, size_t nvec) {
  const size_t tid = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x;
  const size_t stride = static_cast<size_t>(gridDim.x) * blockDim.x;
  const uint4* ev = reinterpret_cast<const uint4*>(e + head);
  const uint4* sv = reinterpret_cast<const uint4*>(s + head);
  uint4* ov = reinterpret_cast<uint4*>(out + 2 * head);
  for (size_t i = tid; i < nvec; i += stride) {
    const uint4 a = ev[i];
    const uint4 b = sv[i];
    uint4 o0, o1;
    merge4(a.x, b.x, o0.x, o0.y);
    merge4(a.y, b.y, o0.z, o0.w);
    merge4(a.z, b.z, o1.x, o1.y);
    merge4(a.w, b.w, o1.z, o1.w);
    ov[2 * i] = o0;
    ov[2 * i + 1] = o1;
  }
  // Head [0, head) and tail [head + 16 nvec, n): fewer than 32 values in all.
  const size_t tail_start = head + 16 * nvec;
  const size_t edge = head + (n - tail_start);
  if (tid < edge) merge1(e, s, out, tid < head ? tid : tail_start + (tid - head));
}

__global__ void merge_bytewise_kernel(const uint8_t* __restrict__ e, const uint8_t* __restrict__ s,
                                      uint8_t* __restrict__ out, size_t n) {
  const size_t stride = static_cast<size_t>(gridDim.x) * blockDim.x;
  for (size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x; i < n; i += stride) {
    merge1(e, s, out, i);
  }
}

unsigned blocks_for(size_t work) {
  const size_t b = (work + kThreads - 1) / kThreads;
  return static_cast<unsigned>(b == 0 ? 1 : (b > (1u << 20) ? (1u << 20) : b));
}

struct DeviceBuffer {
  void* p = nullptr;
  explicit DeviceBuffer(size_t bytes) { check(cudaMalloc(&p, bytes == 0 ? 1 : bytes), "cudaMalloc"); }
  ~DeviceBuffer() { cudaFree(p); }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  uint8_t* bytes() const { return static_cast<uint8_t*>(p); }
};

struct Event {
  cudaEvent_t e{};
  Event() { check(cudaEventCreate(&e), "cudaEventCreate"); }
  ~Event() { cudaEventDestroy(e); }
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;
};

void require_device() {
  std::string why;
  if (!cuda_available(&why)) throw Error("no CUDA device: " + why);
}

}  // namespace

bool cuda_available(std::string* why) {
  int count = 0;
  const cudaError_t rc = cudaGetDeviceCount(&count);
  if (rc != cudaSuccess) {
    if (why) *why = std::string("CUDA runtime: ") + cudaGetErrorName(rc) + ": " + cudaGetErrorString(rc);
    cudaGetLastError();  // reset the runtime's last-error state so later calls do not report this one
    return false;
  }
  if (count == 0) {
    if (why) *why = "no CUDA device found";
    return false;
  }
  if (why) why->clear();
  return true;
}

std::string cuda_device_description() {
  require_device();
  int dev = 0, driver = 0, runtime = 0;
  check(cudaGetDevice(&dev), "cudaGetDevice");
  cudaDeviceProp p{};
  check(cudaGetDeviceProperties(&p, dev), "cudaGetDeviceProperties");
  check(cudaDriverGetVersion(&driver), "cudaDriverGetVersion");
  check(cudaRuntimeGetVersion(&runtime), "cudaRuntimeGetVersion");
  char gib[32];
  std::snprintf(gib, sizeof gib, "%.1f", static_cast<double>(p.totalGlobalMem) / (1 << 30));
  auto version = [](int v) { return std::to_string(v / 1000) + "." + std::to_string(v % 1000 / 10); };
  return std::string(p.name) + " (sm_" + std::to_string(p.major) + std::to_string(p.minor) + ", " +
         std::to_string(p.multiProcessorCount) + " SMs, " + gib + " GiB), driver " + version(driver) +
         ", runtime " + version(runtime);
}

void merge_bf16_cuda(const uint8_t* d_exp, const uint8_t* d_sm, size_t n, uint16_t* d_out, void* stream) {
  if (n == 0) return;
  const auto st = static_cast<cudaStream_t>(stream);
  auto* out = reinterpret_cast<uint8_t*>(d_out);
  const auto ea = reinterpret_cast<uintptr_t>(d_exp), sa = reinterpret_cast<uintptr_t>(d_sm),
             oa = reinterpret_cast<uintptr_t>(out);
  size_t head = (16 - (ea & 15)) & 15;
  if (head > n) head = n;
  const bool aligned = (ea & 15) == (sa & 15) && ((oa + 2 * head) & 15) == 0;
  if (aligned) {
    const size_t nvec = (n - head) / 16;
    merge_vec_kernel<<<blocks_for(nvec > 32 ? nvec : 32), kThreads, 0, st>>>(d_exp, d_sm, out, n, head, nvec);
  } else {
    merge_bytewise_kernel<<<blocks_for(n), kThreads, 0, st>>>(d_exp, d_sm, out, n);
  }
  check(cudaGetLastError(), "merge_bf16_cuda launch");
}

double time_merge_bf16_cuda_ms(size_t n, int iters, double* memcpy_ms) {
  require_device();
  if (iters <= 0) throw Error("time_merge_bf16_cuda_ms: iters must be positive");
  DeviceBuffer e(n), s(n), out(2 * n), copy(2 * n);
  {
    // Random bytes (not a constant fill: the timing must be of real data, every output byte written).
    std::vector<uint8_t> host(n);
    uint64_t x = 0x9E3779B97F4A7C15ull ^ n;
    for (size_t i = 0; i < n; ++i) {
      x ^= x << 13;
      x ^= x >> 7;
      x ^= x << 17;
      host[i] = static_cast<uint8_t>(x >> 24);
    }
    check(cudaMemcpy(e.p, host.data(), n, cudaMemcpyHostToDevice), "cudaMemcpy");
    for (auto& b : host) b = static_cast<uint8_t>(b * 167u + 13u);
    check(cudaMemcpy(s.p, host.data(), n, cudaMemcpyHostToDevice), "cudaMemcpy");
  }
  Event start, stop;
  auto* o = reinterpret_cast<uint16_t*>(out.p);
  merge_bf16_cuda(e.bytes(), s.bytes(), n, o, nullptr);  // warm-up
  check(cudaEventRecord(start.e), "cudaEventRecord");
  for (int i = 0; i < iters; ++i) merge_bf16_cuda(e.bytes(), s.bytes(), n, o, nullptr);
  check(cudaEventRecord(stop.e), "cudaEventRecord");
  check(cudaEventSynchronize(stop.e), "cudaEventSynchronize");
  float ms = 0;
  check(cudaEventElapsedTime(&ms, start.e, stop.e), "cudaEventElapsedTime");
  if (memcpy_ms) {
    check(cudaMemcpy(copy.p, out.p, 2 * n, cudaMemcpyDeviceToDevice), "cudaMemcpy");
    check(cudaEventRecord(start.e), "cudaEventRecord");
    for (int i = 0; i < iters; ++i) {
      check(cudaMemcpyAsync(copy.p, out.p, 2 * n, cudaMemcpyDeviceToDevice, nullptr), "cudaMemcpyAsync");
    }
    check(cudaEventRecord(stop.e), "cudaEventRecord");
    check(cudaEventSynchronize(stop.e), "cudaEventSynchronize");
    float cms = 0;
    check(cudaEventElapsedTime(&cms, start.e, stop.e), "cudaEventElapsedTime");
    *memcpy_ms = cms / iters;
  }
  return ms / iters;
}

void merge_bf16_cuda_roundtrip(const uint8_t* exp, const uint8_t* sm, size_t n, uint16_t* out,
                               size_t exp_offset, size_t sm_offset, size_t out_offset) {
  require_device();
  DeviceBuffer e(n + exp_offset), s(n + sm_offset), o(2 * n + out_offset);
  check(cudaMemcpy(e.bytes() + exp_offset, exp, n, cudaMemcpyHostToDevice), "cudaMemcpy");
  check(cudaMemcpy(s.bytes() + sm_offset, sm, n, cudaMemcpyHostToDevice), "cudaMemcpy");
  merge_bf16_cuda(e.bytes() + exp_offset, s.bytes() + sm_offset, n,
                  reinterpret_cast<uint16_t*>(o.bytes() + out_offset), nullptr);
  check(cudaDeviceSynchronize(), "merge_bf16_cuda");
  check(cudaMemcpy(out, o.bytes() + out_offset, 2 * n, cudaMemcpyDeviceToHost), "cudaMemcpy");
}

}  // namespace moesim::kernels
