// Casts to BF16. f32 -> bf16 rounds to nearest, ties to even, on the bit pattern: adding 0x7FFF plus the
// lowest kept bit carries into the kept half exactly when the dropped half is above the halfway point, or
// at it with an odd kept half; a carry out of the largest finite exponent yields infinity, as IEEE 754
// requires. NaN is handled before that (the carry could turn a NaN into infinity): the top payload bits
// are kept and the quiet bit is set, so a NaN whose payload lies only in the dropped bits stays a NaN.
// f16 -> bf16 first widens to f32, which is exact (every f16 value, subnormals included, is an f32
// value), then rounds: f16 has 11 significant bits, BF16 8.
#include <cstring>

#include "kernels/bf16.h"

namespace moesim::kernels {

namespace {

inline uint32_t f32_bits(float x) {
  uint32_t u;
  std::memcpy(&u, &x, sizeof u);
  return u;
}

inline float bits_f32(uint32_t u) {
  float x;
  std::memcpy(&x, &u, sizeof x);
  return x;
}

inline uint16_t f32_bits_to_bf16(uint32_t u) {
  if ((u & 0x7FFFFFFFu) > 0x7F800000u) return static_cast<uint16_t>((u >> 16) | 0x0040u);
  u += 0x7FFFu + ((u >> 16) & 1u);
  return static_cast<uint16_t>(u >> 16);
}

// IEEE binary16 -> binary32 bit pattern, exact.
inline uint32_t f16_to_f32_bits(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  const uint32_t exp = (h >> 10) & 0x1Fu;
  uint32_t man = h & 0x3FFu;
  if (exp == 0x1F) return sign | 0x7F800000u | (man << 13);  // inf, NaN (payload kept)
  if (exp != 0) return sign | ((exp + 112u) << 23) | (man << 13);
  if (man == 0) return sign;  // ±0
  // Subnormal: man * 2^-24. Normalize so the leading one becomes the implicit bit.
  int e = -14;  // exponent of the subnormal range, value = 0.man * 2^-14
  while ((man & 0x400u) == 0) {
    man <<= 1;
    --e;
  }
  man &= 0x3FFu;
  return sign | (static_cast<uint32_t>(e + 127) << 23) | (man << 13);
}

}  // namespace

uint16_t f32_to_bf16(float x) {
  return f32_bits_to_bf16(f32_bits(x));
}

uint16_t f16_to_bf16(uint16_t h) {
  return f32_bits_to_bf16(f16_to_f32_bits(h));
}

void f32_to_bf16(const float* in, size_t n, uint16_t* out) {
  for (size_t i = 0; i < n; ++i) {
    uint32_t u;
    std::memcpy(&u, in + i, sizeof u);
    const uint16_t b = f32_bits_to_bf16(u);
    std::memcpy(out + i, &b, sizeof b);
  }
}

void f16_to_bf16(const uint16_t* in, size_t n, uint16_t* out) {
  for (size_t i = 0; i < n; ++i) {
    uint16_t h;
    std::memcpy(&h, in + i, sizeof h);
    const uint16_t b = f16_to_bf16(h);
    std::memcpy(out + i, &b, sizeof b);
  }
}

float bf16_to_f32(uint16_t b) {
  return bits_f32(static_cast<uint32_t>(b) << 16);
}

}  // namespace moesim::kernels
