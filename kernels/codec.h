// Codecs for E-chunk shards, behind one interface: "raw", "zstd:LEVEL" (1..22, default 3), "lz4",
// "lz4hc:LEVEL" (1..12, default 9). Each shard is one independent frame, so the K shards of a tensor
// decompress in parallel on K worker threads. Codecs are stateless and thread-safe; per-thread scratch
// state (zstd contexts) lives in thread_local storage inside the implementation.
//
// Frame formats and integrity (FrameCheck::kVerify, the default): "zstd:L" writes one standard zstd frame
// with the content size and zstd's content checksum (decompress rejects frames without them);
// "lz4"/"lz4hc:L" write one lz4 block followed by a 4-byte little-endian checksum of the block (XXH64 folded
// to 32 bits, base/hash64.h; lz4 blocks have none, and a flipped literal byte would otherwise decode
// silently to wrong data); "raw" is the bytes themselves, so only a size mismatch is detectable. A modified
// frame therefore throws, except for the rare zstd bit whose flip decodes to the very same bytes (harmless:
// the output is exact).
//
// FrameCheck::kTrusted skips the content check (zstd's checksum over the decoded bytes, the lz4 trailer) for
// callers that have already verified the compressed bytes themselves: the expert store checks an XXH64 of
// every chunk before decoding it, so checking again costs 7-15% of the decode time for nothing. Frame
// structure and sizes are still validated, and no mode reads or writes out of bounds.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace moesim::kernels {

enum class CodecId : uint8_t { kRaw = 0, kZstd = 1, kLz4 = 2, kLz4hc = 3 };

enum class FrameCheck : uint8_t {
  kVerify,   // check the frame's content checksum (see above)
  kTrusted,  // the caller verified the compressed bytes already; skip the content checksum
};

class Codec {
 public:
  virtual ~Codec() = default;
  virtual CodecId id() const = 0;
  virtual int level() const = 0;
  virtual std::string name() const = 0;  // canonical "zstd:19", "lz4", "lz4hc:12", "raw"
  virtual size_t max_compressed_size(size_t n) const = 0;
  // Compresses src into dst (capacity >= max_compressed_size); returns the compressed size.
  virtual size_t compress(const uint8_t* src, size_t n, uint8_t* dst, size_t cap) const = 0;
  // Decompresses exactly `n` bytes into dst; throws moesim::Error (naming `what`) on corrupt input or a
  // size mismatch. Never reads outside [src, src + size) nor writes outside [dst, dst + n).
  void decompress(const uint8_t* src, size_t size, uint8_t* dst, size_t n, const char* what,
                  FrameCheck check = FrameCheck::kVerify) const {
    do_decompress(src, size, dst, n, what, check);
  }

 protected:
  virtual void do_decompress(const uint8_t* src, size_t size, uint8_t* dst, size_t n, const char* what,
                             FrameCheck check) const = 0;
};

// Parses "zstd:19", "lz4hc:12", "lz4", "raw"; throws moesim::Error listing the known codecs.
std::unique_ptr<Codec> make_codec(const std::string& spec);
std::unique_ptr<Codec> make_codec(CodecId id, int level);

// Convenience: compress into a vector sized to fit.
std::vector<uint8_t> compress_to_vector(const Codec& c, const uint8_t* src, size_t n);

}  // namespace moesim::kernels
