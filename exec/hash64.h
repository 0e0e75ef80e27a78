// A fast 64-bit non-cryptographic checksum for expert-store chunks: the XXH64 algorithm (Yann Collet's
// xxHash, BSD-2; specification in xxhash's doc/xxhash_spec.md), reimplemented here because xxhash is not
// a dependency. It detects accidental corruption (flipped bytes, truncation, misdirected reads); it is not
// a defence against an adversary. Output equals the reference XXH64 for the same seed (tested on the
// reference test vectors), so stores can be checked with other tools.
#pragma once

#include <cstddef>
#include <cstdint>

namespace moesim::exec {

uint64_t hash64(const void* data, size_t size, uint64_t seed = 0);

}  // namespace moesim::exec
