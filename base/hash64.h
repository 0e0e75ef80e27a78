// A fast 64-bit non-cryptographic checksum: the XXH64 algorithm (Yann Collet's xxHash, BSD-2; specification
// in xxhash's doc/xxhash_spec.md), reimplemented because xxhash is not a dependency. Output equals the
// reference XXH64 for the same seed (tests/base/hash64_test.cpp checks the reference vectors), so files can be
// checked with other tools. It detects accidental corruption (flipped bytes, truncation, misdirected reads);
// it is no defence against an adversary. Used by the .mtr trace format, the expert store's chunks and the lz4
// frames of E-chunk shards.
#pragma once

#include <cstddef>
#include <cstdint>

namespace moesim {

uint64_t hash64(const void* data, size_t size, uint64_t seed = 0);

// Streaming form: update() any number of times, then digest() == hash64 of the concatenation.
class Xxh64 {
 public:
  explicit Xxh64(uint64_t seed = 0);
  void update(const void* data, size_t size);
  uint64_t digest() const;

 private:
  uint64_t v_[4];
  uint64_t seed_;
  uint64_t total_ = 0;
  unsigned char buf_[32];
  size_t buf_len_ = 0;
};

}  // namespace moesim
