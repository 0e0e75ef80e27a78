// XXH64 per the xxHash specification (github.com/Cyan4973/xxHash/blob/dev/doc/xxhash_spec.md).
#include "base/hash64.h"

#include <bit>
#include <cstring>

namespace moesim {

namespace {
constexpr uint64_t P1 = 0x9E3779B185EBCA87ULL, P2 = 0xC2B2AE3D27D4EB4FULL, P3 = 0x165667B19E3779F9ULL,
                   P4 = 0x85EBCA77C2B2AE63ULL, P5 = 0x27D4EB2F165667C5ULL;
uint64_t rd64(const unsigned char* p) {
  uint64_t v;
  std::memcpy(&v, p, 8);
  if constexpr (std::endian::native == std::endian::big) v = __builtin_bswap64(v);
  return v;
}
uint32_t rd32(const unsigned char* p) {
  uint32_t v;
  std::memcpy(&v, p, 4);
  if constexpr (std::endian::native == std::endian::big) v = __builtin_bswap32(v);
  return v;
}
uint64_t xround(uint64_t acc, uint64_t in) { return std::rotl(acc + in * P2, 31) * P1; }
uint64_t xmerge(uint64_t acc, uint64_t v) { return (acc ^ xround(0, v)) * P1 + P4; }
}  // namespace

Xxh64::Xxh64(uint64_t seed) : v_{seed + P1 + P2, seed + P2, seed, seed - P1}, seed_(seed) {}

void Xxh64::update(const void* data, size_t size) {
  auto p = static_cast<const unsigned char*>(data);
  total_ += size;
  if (buf_len_ + size < 32) {
    if (size) std::memcpy(buf_ + buf_len_, p, size);
    buf_len_ += size;
    return;
  }
  if (buf_len_) {
    const size_t fill = 32 - buf_len_;
    std::memcpy(buf_ + buf_len_, p, fill);
    for (int i = 0; i < 4; ++i) v_[i] = xround(v_[i], rd64(buf_ + 8 * i));
    p += fill;
    size -= fill;
    buf_len_ = 0;
  }
  for (; size >= 32; p += 32, size -= 32)
    for (int i = 0; i < 4; ++i) v_[i] = xround(v_[i], rd64(p + 8 * i));
  if (size) std::memcpy(buf_, p, size);
  buf_len_ = size;
}

uint64_t Xxh64::digest() const {
  uint64_t h;
  if (total_ >= 32) {
    h = std::rotl(v_[0], 1) + std::rotl(v_[1], 7) + std::rotl(v_[2], 12) + std::rotl(v_[3], 18);
    for (int i = 0; i < 4; ++i) h = xmerge(h, v_[i]);
  } else {
    h = seed_ + P5;
  }
  h += total_;
  const unsigned char* p = buf_;
  size_t n = buf_len_;
  for (; n >= 8; p += 8, n -= 8) h = std::rotl(h ^ xround(0, rd64(p)), 27) * P1 + P4;
  if (n >= 4) {
    h = std::rotl(h ^ (uint64_t{rd32(p)} * P1), 23) * P2 + P3;
    p += 4;
    n -= 4;
  }
  for (; n > 0; ++p, --n) h = std::rotl(h ^ (*p * P5), 11) * P1;
  h ^= h >> 33;
  h *= P2;
  h ^= h >> 29;
  h *= P3;
  h ^= h >> 32;
  return h;
}

uint64_t hash64(const void* data, size_t size, uint64_t seed) {
  Xxh64 x(seed);
  x.update(data, size);
  return x.digest();
}

}  // namespace moesim
