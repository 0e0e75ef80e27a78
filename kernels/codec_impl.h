// Internal to kernels/: the codec implementations behind make_codec() and the frame checksum shared by
// the codecs whose own format has none (lz4 blocks carry no checksum; zstd frames use zstd's own).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "kernels/codec.h"

namespace moesim::kernels::detail {

std::unique_ptr<Codec> make_raw_codec();
std::unique_ptr<Codec> make_zstd_codec(int level);  // level already validated
std::unique_ptr<Codec> make_lz4_codec(bool hc, int level);

// 32-bit hash of a byte range (64-bit multiply-rotate lanes, folded). Every single-word change of the
// input changes the 64-bit lane state, so flipped bytes are always caught before the fold and missed
// with probability ~2^-32 after it.
uint32_t frame_checksum(const uint8_t* p, size_t n);

// Throws moesim::Error "WHAT: CODEC: MESSAGE".
[[noreturn]] void corrupt(const char* what, const std::string& codec, const std::string& message);

}  // namespace moesim::kernels::detail
