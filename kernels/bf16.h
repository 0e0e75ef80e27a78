// BF16 bit-field split and merge (ZipMoE §2.2, §3.1): a BF16 value is sign(1) exponent(8) mantissa(7).
// split() writes the exponent bytes to one stream (E-chunk payload, highly compressible: ~2.6 bits of
// information in 8 for LLM weights) and the sign+mantissa bytes to another (SM-chunk, stored raw):
//   exponent byte = (x >> 7) & 0xFF
//   sm byte       = (sign << 7) | mantissa   i.e. ((x >> 8) & 0x80) | (x & 0x7F)
// merge() is the exact inverse: x = ((sm & 0x80) << 8) | (exp << 7) | (sm & 0x7F).
// Both are bit-exact for all 65,536 patterns (NaN payloads, infinities, signed zeros, subnormals).
//
// Variants: *_scalar is the reference; split()/merge() dispatch to the vectorized CPU version (SSE2/AVX2
// on x86-64, NEON on aarch64, scalar elsewhere), which must equal the reference for every length and
// alignment. The CUDA recovery kernel is declared in kernels/bf16_cuda.h.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace moesim::kernels {

void split_bf16_scalar(const uint16_t* in, size_t n, uint8_t* exp_out, uint8_t* sm_out);
void merge_bf16_scalar(const uint8_t* exp_in, const uint8_t* sm_in, size_t n, uint16_t* out);
void split_bf16(const uint16_t* in, size_t n, uint8_t* exp_out, uint8_t* sm_out);
// Where merge's output lines go. Out of the caches (non-temporal stores) is ~1.7x faster for outputs
// that do not stay in cache (bench/results/kernels.md) because no line is read before it is overwritten;
// a caller that writes one large tensor in pieces (a shard per call) should say kStream, since each
// call alone looks small. kAuto streams outputs of at least kMergeStreamOutBytes. aarch64 and the scalar
// build have no streaming variant and ignore the hint.
enum class MergeStores : uint8_t { kAuto, kStream, kCache };
inline constexpr size_t kMergeStreamOutBytes = size_t{2} << 20;

void merge_bf16(const uint8_t* exp_in, const uint8_t* sm_in, size_t n, uint16_t* out,
                MergeStores stores = MergeStores::kAuto);
const char* merge_bf16_isa();  // "avx2", "sse2", "neon" or "scalar": what split/merge dispatch to
// None of the pointers needs any alignment (not even 2 bytes for the uint16_t buffers); buffers must not
// overlap.

// Every variant this CPU can run (the scalar reference first), so that tests and benchmarks can compare
// each ISA against the reference, not only the one split()/merge() dispatch to. The "-stream" variants
// are the merges with non-temporal stores (their split is the plain one).
struct Bf16Kernels {
  const char* isa;
  void (*split)(const uint16_t* in, size_t n, uint8_t* exp_out, uint8_t* sm_out);
  void (*merge)(const uint8_t* exp_in, const uint8_t* sm_in, size_t n, uint16_t* out);
};
std::vector<Bf16Kernels> bf16_kernel_variants();

// Casts to BF16 with round-to-nearest-even; NaN stays NaN (quiet, sign kept), infinities stay infinite.
uint16_t f32_to_bf16(float x);
uint16_t f16_to_bf16(uint16_t h);  // exact widening to f32 first, then rounding
void f32_to_bf16(const float* in, size_t n, uint16_t* out);
void f16_to_bf16(const uint16_t* in, size_t n, uint16_t* out);
float bf16_to_f32(uint16_t b);

}  // namespace moesim::kernels
