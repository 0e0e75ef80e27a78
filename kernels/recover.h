// CPU recovery of one E-chunk shard (ZipMoE §3.1): decompress the shard's exponent bytes and merge them
// with the matching sign-mantissa bytes into BF16. This is one worker's whole share of recovering an
// expert; the store reader and the benchmarks both go through it, so what the benchmark measures is what
// exec runs.
#pragma once

#include <cstddef>
#include <cstdint>

#include "kernels/bf16.h"
#include "kernels/codec.h"

namespace moesim::kernels {

// out[i] = merge(exp[i], sm[i]) for i < n, where exp = the n bytes that frame [src, src + size) decodes
// to. The exponents pass through a per-thread scratch buffer that is reused from call to call (no
// allocation and no zero-filling per shard; shards of up to kMaxCachedScratch bytes keep it). Throws
// moesim::Error naming `what` like Codec::decompress; out is then partly written. `stores` goes to
// merge_bf16: a caller recovering a large tensor shard by shard passes MergeStores::kStream.
void recover_shard(const Codec& codec, const uint8_t* src, size_t size, const uint8_t* sm, size_t n,
                   uint16_t* out, const char* what, FrameCheck check = FrameCheck::kVerify,
                   MergeStores stores = MergeStores::kAuto);

// Larger shards get a scratch buffer of their own that is freed after the call.
inline constexpr size_t kMaxCachedScratch = size_t{64} << 20;

}  // namespace moesim::kernels
