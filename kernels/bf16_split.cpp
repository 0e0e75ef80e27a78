// BF16 bit-field split and merge (ZipMoE §2.2 and §3.1): scalar reference and vectorized CPU versions.
//
// The vectorized versions work on 16 values per step with unaligned loads and stores, so any length and
// any alignment of the three buffers work (the uint16_t buffers need not even be 2-byte aligned: every
// access to them goes through memcpy or an unaligned vector load/store). The last n % 16 (or n % 32)
// values go through the scalar reference.
//
// Merge in the byte domain, which needs no 16-bit widening on any ISA: the low byte of a BF16 value is
// (exp << 7 | sm & 0x7F) and the high byte is (sm & 0x80 | exp >> 1); interleaving the two byte vectors
// gives the little-endian BF16 values. Split is the inverse.
#include <algorithm>
#include <cstdint>
#include <cstring>

#include "kernels/bf16.h"

#if defined(__x86_64__) || defined(_M_X64)
#define MOESIM_BF16_X86 1
#include <immintrin.h>
#elif defined(__aarch64__)
#define MOESIM_BF16_NEON 1
#include <arm_neon.h>
#endif

namespace moesim::kernels {

namespace {

inline uint16_t load_u16(const uint16_t* p) {
  uint16_t v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

inline void store_u16(uint16_t* p, uint16_t v) {
  std::memcpy(p, &v, sizeof v);
}

inline void split_one(uint16_t x, uint8_t* e, uint8_t* s) {
  *e = static_cast<uint8_t>((x >> 7) & 0xFF);
  *s = static_cast<uint8_t>(((x >> 8) & 0x80) | (x & 0x7F));
}

inline uint16_t merge_one(uint8_t e, uint8_t s) {
  return static_cast<uint16_t>(((s & 0x80u) << 8) | (static_cast<unsigned>(e) << 7) | (s & 0x7Fu));
}

}  // namespace

void split_bf16_scalar(const uint16_t* in, size_t n, uint8_t* exp_out, uint8_t* sm_out) {
  for (size_t i = 0; i < n; ++i) split_one(load_u16(in + i), exp_out + i, sm_out + i);
}

void merge_bf16_scalar(const uint8_t* exp_in, const uint8_t* sm_in, size_t n, uint16_t* out) {
  for (size_t i = 0; i < n; ++i) store_u16(out + i, merge_one(exp_in[i], sm_in[i]));
}

namespace {

#if defined(MOESIM_BF16_X86)

// SSE2 is part of the x86-64 baseline: no runtime check needed.
void split_sse2(const uint16_t* in, size_t n, uint8_t* e, uint8_t* s) {
  const __m128i mff = _mm_set1_epi16(0xFF), m80 = _mm_set1_epi16(0x80), m7f = _mm_set1_epi16(0x7F);
  size_t i = 0;
  for (; i + 16 <= n; i += 16) {
    const __m128i a = _mm_loadu_si128(reinterpret_cast<const __m128i*>(in + i));
    const __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(in + i + 8));
    const __m128i ea = _mm_and_si128(_mm_srli_epi16(a, 7), mff);
    const __m128i eb = _mm_and_si128(_mm_srli_epi16(b, 7), mff);
    const __m128i sa = _mm_or_si128(_mm_and_si128(_mm_srli_epi16(a, 8), m80), _mm_and_si128(a, m7f));
    const __m128i sb = _mm_or_si128(_mm_and_si128(_mm_srli_epi16(b, 8), m80), _mm_and_si128(b, m7f));
    // All lanes are in 0..255, so unsigned saturation packs them exactly.
    _mm_storeu_si128(reinterpret_cast<__m128i*>(e + i), _mm_packus_epi16(ea, eb));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(s + i), _mm_packus_epi16(sa, sb));
  }
  split_bf16_scalar(in + i, n - i, e + i, s + i);
}

template <bool kStream>
size_t merge_sse2_body(const uint8_t* e, const uint8_t* s, size_t n, uint16_t* out) {
  const __m128i m80 = _mm_set1_epi8(static_cast<char>(0x80)), m7f = _mm_set1_epi8(0x7F);
  size_t i = 0;
  for (; i + 16 <= n; i += 16) {
    const __m128i ev = _mm_loadu_si128(reinterpret_cast<const __m128i*>(e + i));
    const __m128i sv = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + i));
    // 16-bit shifts leak bits across the byte boundary; the masks remove exactly those bits.
    const __m128i lo = _mm_or_si128(_mm_and_si128(sv, m7f), _mm_and_si128(_mm_slli_epi16(ev, 7), m80));
    const __m128i hi = _mm_or_si128(_mm_and_si128(sv, m80), _mm_and_si128(_mm_srli_epi16(ev, 1), m7f));
    if constexpr (kStream) {
      _mm_stream_si128(reinterpret_cast<__m128i*>(out + i), _mm_unpacklo_epi8(lo, hi));
      _mm_stream_si128(reinterpret_cast<__m128i*>(out + i + 8), _mm_unpackhi_epi8(lo, hi));
    } else {
      _mm_storeu_si128(reinterpret_cast<__m128i*>(out + i), _mm_unpacklo_epi8(lo, hi));
      _mm_storeu_si128(reinterpret_cast<__m128i*>(out + i + 8), _mm_unpackhi_epi8(lo, hi));
    }
  }
  if constexpr (kStream) _mm_sfence();  // order the streaming stores before any later store
  return i;
}

void merge_sse2(const uint8_t* e, const uint8_t* s, size_t n, uint16_t* out) {
  const size_t done = merge_sse2_body<false>(e, s, n, out);
  merge_bf16_scalar(e + done, s + done, n - done, out + done);
}

// Streaming stores need addresses aligned to the vector width `align`: a scalar head up to the first
// boundary, the streaming body, then `plain` for the last partial vector. An odd `out` (not even 2-byte
// aligned) never reaches a boundary, so `plain` does the whole merge then.
void merge_streaming(const uint8_t* e, const uint8_t* s, size_t n, uint16_t* out, size_t align,
                     size_t (*body)(const uint8_t*, const uint8_t*, size_t, uint16_t*),
                     void (*plain)(const uint8_t*, const uint8_t*, size_t, uint16_t*)) {
  const auto addr = reinterpret_cast<uintptr_t>(out);
  if (addr % 2 != 0) return plain(e, s, n, out);
  const size_t head = std::min(n, ((align - addr % align) % align) / 2);
  merge_bf16_scalar(e, s, head, out);
  const size_t done = head + body(e + head, s + head, n - head, out + head);
  plain(e + done, s + done, n - done, out + done);
}

void merge_sse2_stream(const uint8_t* e, const uint8_t* s, size_t n, uint16_t* out) {
  merge_streaming(e, s, n, out, 16, merge_sse2_body<true>, merge_sse2);
}

__attribute__((target("avx2"))) void split_avx2(const uint16_t* in, size_t n, uint8_t* e, uint8_t* s) {
  const __m256i mff = _mm256_set1_epi16(0xFF), m80 = _mm256_set1_epi16(0x80), m7f = _mm256_set1_epi16(0x7F);
  size_t i = 0;
  for (; i + 32 <= n; i += 32) {
    const __m256i a = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(in + i));
    const __m256i b = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(in + i + 16));
    const __m256i ea = _mm256_and_si256(_mm256_srli_epi16(a, 7), mff);
    const __m256i eb = _mm256_and_si256(_mm256_srli_epi16(b, 7), mff);
    const __m256i sa =
        _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(a, 8), m80), _mm256_and_si256(a, m7f));
    const __m256i sb =
        _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(b, 8), m80), _mm256_and_si256(b, m7f));
    // packus works per 128-bit lane: [a0-7 b0-7 | a8-15 b8-15]; 0xD8 reorders the quadwords to a, b.
    const __m256i ep = _mm256_permute4x64_epi64(_mm256_packus_epi16(ea, eb), 0xD8);
    const __m256i sp = _mm256_permute4x64_epi64(_mm256_packus_epi16(sa, sb), 0xD8);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(e + i), ep);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(s + i), sp);
  }
  split_sse2(in + i, n - i, e + i, s + i);
}

template <bool kStream>
__attribute__((target("avx2"))) inline size_t merge_avx2_body(const uint8_t* e, const uint8_t* s, size_t n,
                                                              uint16_t* out) {
  const __m256i m80 = _mm256_set1_epi8(static_cast<char>(0x80)), m7f = _mm256_set1_epi8(0x7F);
  size_t i = 0;
  for (; i + 32 <= n; i += 32) {
    const __m256i ev = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(e + i));
    const __m256i sv = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(s + i));
    const __m256i lo =
        _mm256_or_si256(_mm256_and_si256(sv, m7f), _mm256_and_si256(_mm256_slli_epi16(ev, 7), m80));
    const __m256i hi =
        _mm256_or_si256(_mm256_and_si256(sv, m80), _mm256_and_si256(_mm256_srli_epi16(ev, 1), m7f));
    // unpack works per 128-bit lane: u0 = values [0-7 | 16-23], u1 = [8-15 | 24-31].
    const __m256i u0 = _mm256_unpacklo_epi8(lo, hi);
    const __m256i u1 = _mm256_unpackhi_epi8(lo, hi);
    const __m256i o0 = _mm256_permute2x128_si256(u0, u1, 0x20);
    const __m256i o1 = _mm256_permute2x128_si256(u0, u1, 0x31);
    if constexpr (kStream) {
      _mm256_stream_si256(reinterpret_cast<__m256i*>(out + i), o0);
      _mm256_stream_si256(reinterpret_cast<__m256i*>(out + i + 16), o1);
    } else {
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + i), o0);
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + i + 16), o1);
    }
  }
  if constexpr (kStream) _mm_sfence();  // order the streaming stores before any later store
  return i;
}

__attribute__((target("avx2"))) void merge_avx2(const uint8_t* e, const uint8_t* s, size_t n, uint16_t* out) {
  const size_t done = merge_avx2_body<false>(e, s, n, out);
  merge_sse2(e + done, s + done, n - done, out + done);
}

void merge_avx2_stream(const uint8_t* e, const uint8_t* s, size_t n, uint16_t* out) {
  merge_streaming(e, s, n, out, 32, merge_avx2_body<true>, merge_avx2);
}

#elif defined(MOESIM_BF16_NEON)

void split_neon(const uint16_t* in, size_t n, uint8_t* e, uint8_t* s) {
  const uint8x16_t m80 = vdupq_n_u8(0x80);
  size_t i = 0;
  for (; i + 16 <= n; i += 16) {
    // vld2 de-interleaves: val[0] = low bytes, val[1] = high bytes of 16 little-endian values.
    const uint8x16x2_t x = vld2q_u8(reinterpret_cast<const uint8_t*>(in + i));
    const uint8x16_t ev = vsriq_n_u8(vshlq_n_u8(x.val[1], 1), x.val[0], 7);  // hi << 1 | lo >> 7
    const uint8x16_t sv = vbslq_u8(m80, x.val[1], x.val[0]);                 // hi & 0x80 | lo & 0x7F
    vst1q_u8(e + i, ev);
    vst1q_u8(s + i, sv);
  }
  split_bf16_scalar(in + i, n - i, e + i, s + i);
}

void merge_neon(const uint8_t* e, const uint8_t* s, size_t n, uint16_t* out) {
  const uint8x16_t m80 = vdupq_n_u8(0x80);
  size_t i = 0;
  for (; i + 16 <= n; i += 16) {
    const uint8x16_t ev = vld1q_u8(e + i);
    const uint8x16_t sv = vld1q_u8(s + i);
    uint8x16x2_t x;
    x.val[0] = vsliq_n_u8(sv, ev, 7);                  // sm & 0x7F | exp << 7
    x.val[1] = vbslq_u8(m80, sv, vshrq_n_u8(ev, 1));   // sm & 0x80 | exp >> 1
    vst2q_u8(reinterpret_cast<uint8_t*>(out + i), x);  // interleave low/high bytes
  }
  merge_bf16_scalar(e + i, s + i, n - i, out + i);
}

#endif

using SplitFn = void (*)(const uint16_t*, size_t, uint8_t*, uint8_t*);
using MergeFn = void (*)(const uint8_t*, const uint8_t*, size_t, uint16_t*);

struct Dispatch {
  SplitFn split;
  MergeFn merge;         // ordinary (cached) stores
  MergeFn merge_stream;  // non-temporal stores where the ISA has them
  const char* isa;
};

Dispatch pick() {
#if defined(MOESIM_BF16_X86)
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx2")) return {split_avx2, merge_avx2, merge_avx2_stream, "avx2"};
  return {split_sse2, merge_sse2, merge_sse2_stream, "sse2"};
#elif defined(MOESIM_BF16_NEON)
  return {split_neon, merge_neon, merge_neon, "neon"};
#else
  return {split_bf16_scalar, merge_bf16_scalar, merge_bf16_scalar, "scalar"};
#endif
}

const Dispatch& dispatch() {
  static const Dispatch d = pick();
  return d;
}

}  // namespace

void split_bf16(const uint16_t* in, size_t n, uint8_t* exp_out, uint8_t* sm_out) {
  dispatch().split(in, n, exp_out, sm_out);
}

void merge_bf16(const uint8_t* exp_in, const uint8_t* sm_in, size_t n, uint16_t* out, MergeStores stores) {
  const bool stream = stores == MergeStores::kStream ||
                      (stores == MergeStores::kAuto && 2 * n >= kMergeStreamOutBytes);
  (stream ? dispatch().merge_stream : dispatch().merge)(exp_in, sm_in, n, out);
}

const char* merge_bf16_isa() {
  return dispatch().isa;
}

std::vector<Bf16Kernels> bf16_kernel_variants() {
  std::vector<Bf16Kernels> v{{"scalar", split_bf16_scalar, merge_bf16_scalar}};
#if defined(MOESIM_BF16_X86)
  v.push_back({"sse2", split_sse2, merge_sse2});
  v.push_back({"sse2-stream", split_sse2, merge_sse2_stream});
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx2")) {
    v.push_back({"avx2", split_avx2, merge_avx2});
    v.push_back({"avx2-stream", split_avx2, merge_avx2_stream});
  }
#elif defined(MOESIM_BF16_NEON)
  v.push_back({"neon", split_neon, merge_neon});
#endif
  return v;
}

}  // namespace moesim::kernels
