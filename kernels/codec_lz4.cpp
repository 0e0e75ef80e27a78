// lz4 and lz4hc codecs: an lz4 block followed by a 4-byte little-endian checksum of the block. lz4 blocks
// carry no checksum, and LZ4_decompress_safe, although it never reads or writes out of bounds, decodes a
// block with a flipped literal byte to wrong data without complaint; the checksum catches that. It
// covers the compressed bytes (fewer than the output), so it costs little next to decoding.
#include <lz4.h>
#include <lz4hc.h>

#include "base/error.h"
#include "kernels/codec_impl.h"

namespace moesim::kernels::detail {

namespace {

constexpr size_t kTrailer = 4;

void check_input_size(size_t n, const std::string& codec) {
  if (n > static_cast<size_t>(LZ4_MAX_INPUT_SIZE)) {
    throw Error(codec + ": shard of " + std::to_string(n) + " bytes exceeds the lz4 limit of " +
                std::to_string(LZ4_MAX_INPUT_SIZE) + " bytes");
  }
}

class Lz4Codec final : public Codec {
 public:
  Lz4Codec(bool hc, int level) : hc_(hc), level_(level) {}
  CodecId id() const override { return hc_ ? CodecId::kLz4hc : CodecId::kLz4; }
  int level() const override { return level_; }
  std::string name() const override { return hc_ ? "lz4hc:" + std::to_string(level_) : "lz4"; }
  size_t max_compressed_size(size_t n) const override {
    check_input_size(n, name());
    return static_cast<size_t>(LZ4_compressBound(static_cast<int>(n))) + kTrailer;
  }

  size_t compress(const uint8_t* src, size_t n, uint8_t* dst, size_t cap) const override {
    const size_t need = max_compressed_size(n);
    if (cap < need) {
      throw Error(name() + ": output capacity " + std::to_string(cap) + " < " + std::to_string(need));
    }
    // lz4hc dereferences its source pointer even for an empty input (an empty vector's data() is null).
    static const uint8_t empty = 0;
    const char* s = reinterpret_cast<const char*>(n == 0 ? &empty : src);
    char* d = reinterpret_cast<char*>(dst);
    const int cap_block = static_cast<int>(need - kTrailer);
    const int size = hc_ ? LZ4_compress_HC(s, d, static_cast<int>(n), cap_block, level_)
                         : LZ4_compress_default(s, d, static_cast<int>(n), cap_block);
    if (size <= 0) throw Error(name() + ": compression failed");
    const uint32_t sum = frame_checksum(dst, static_cast<size_t>(size));
    for (size_t k = 0; k < kTrailer; ++k) dst[size + k] = static_cast<uint8_t>(sum >> (8 * k));
    return static_cast<size_t>(size) + kTrailer;
  }

  void do_decompress(const uint8_t* src, size_t size, uint8_t* dst, size_t n, const char* what,
                     FrameCheck check) const override {
    const std::string nm = name();
    if (n > static_cast<size_t>(LZ4_MAX_INPUT_SIZE)) {
      corrupt(what, nm, "expected size " + std::to_string(n) + " exceeds the lz4 limit");
    }
    if (size <= kTrailer || size - kTrailer > static_cast<size_t>(LZ4_compressBound(static_cast<int>(n)))) {
      corrupt(what, nm,
              "frame of " + std::to_string(size) + " bytes cannot hold " + std::to_string(n) + " bytes");
    }
    const size_t block = size - kTrailer;
    uint32_t stored = 0;
    for (size_t k = 0; k < kTrailer; ++k) stored |= static_cast<uint32_t>(src[block + k]) << (8 * k);
    if (check == FrameCheck::kVerify && stored != frame_checksum(src, block)) {
      corrupt(what, nm, "checksum mismatch (corrupt frame)");
    }
    char dummy = 0;
    const int rc =
        LZ4_decompress_safe(reinterpret_cast<const char*>(src), n ? reinterpret_cast<char*>(dst) : &dummy,
                            static_cast<int>(block), static_cast<int>(n));
    if (rc < 0) corrupt(what, nm, "malformed lz4 block");
    if (static_cast<size_t>(rc) != n) {
      corrupt(what, nm, "decoded " + std::to_string(rc) + " bytes, expected " + std::to_string(n));
    }
  }

 private:
  bool hc_;
  int level_;
};

}  // namespace

std::unique_ptr<Codec> make_lz4_codec(bool hc, int level) {
  return std::make_unique<Lz4Codec>(hc, level);
}

}  // namespace moesim::kernels::detail
