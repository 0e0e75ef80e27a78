// Codec registry and the raw codec (the format of E-chunk shards: each shard is one independent frame,
// ZipMoE §3.1, so K shards of a tensor decompress in parallel).
#include "kernels/codec.h"

#include <cstring>
#include <string_view>

#include "base/error.h"
#include "base/hash64.h"
#include "kernels/codec_impl.h"

namespace moesim::kernels {

namespace detail {

// XXH64 of the block folded to 32 bits (base/hash64.h).
uint32_t frame_checksum(const uint8_t* p, size_t n) {
  const uint64_t h = hash64(p, n);
  return static_cast<uint32_t>(h ^ (h >> 32));
}

void corrupt(const char* what, const std::string& codec, const std::string& message) {
  throw Error(std::string(what ? what : "compressed data") + ": " + codec + ": " + message);
}

namespace {

class RawCodec final : public Codec {
 public:
  CodecId id() const override { return CodecId::kRaw; }
  int level() const override { return 0; }
  std::string name() const override { return "raw"; }
  size_t max_compressed_size(size_t n) const override { return n; }
  size_t compress(const uint8_t* src, size_t n, uint8_t* dst, size_t cap) const override {
    if (cap < n) throw Error("raw codec: output capacity " + std::to_string(cap) + " < " + std::to_string(n));
    if (n) std::memcpy(dst, src, n);
    return n;
  }
  // Raw data has no framing: only a size mismatch is detectable.
  void do_decompress(const uint8_t* src, size_t size, uint8_t* dst, size_t n, const char* what,
                     FrameCheck /*check*/) const override {
    if (size != n) {
      corrupt(what, "raw", "stored size " + std::to_string(size) + " bytes, expected " + std::to_string(n));
    }
    if (n) std::memcpy(dst, src, n);
  }
};

}  // namespace

std::unique_ptr<Codec> make_raw_codec() {
  return std::make_unique<RawCodec>();
}

}  // namespace detail

namespace {

constexpr int kZstdMin = 1, kZstdMax = 22, kZstdDefault = 3;
constexpr int kLz4hcMin = 1, kLz4hcMax = 12, kLz4hcDefault = 9;
constexpr const char* kKnown =
    "known codecs: raw, zstd[:LEVEL] (LEVEL 1..22, default 3), lz4, "
    "lz4hc[:LEVEL] (LEVEL 1..12, default 9)";

int check_level(const std::string& spec, int level, int lo, int hi) {
  if (level < lo || level > hi) {
    throw Error("codec '" + spec + "': level " + std::to_string(level) + " out of range " +
                std::to_string(lo) + ".." + std::to_string(hi) + "; " + kKnown);
  }
  return level;
}

}  // namespace

std::unique_ptr<Codec> make_codec(const std::string& spec) {
  const size_t colon = spec.find(':');
  const std::string name = spec.substr(0, colon);
  const bool has_level = colon != std::string::npos;
  int level = 0;
  if (has_level) {
    const std::string lv = spec.substr(colon + 1);
    size_t used = 0;
    bool ok = !lv.empty() && lv.size() <= 3 && lv.find_first_not_of("0123456789") == std::string::npos;
    if (ok) level = std::stoi(lv, &used);
    if (!ok || used != lv.size()) {
      throw Error("codec '" + spec + "': level '" + lv + "' is not a positive integer; " + kKnown);
    }
  }
  if (name == "raw" || name == "lz4") {
    if (has_level) throw Error("codec '" + spec + "': " + name + " takes no level; " + kKnown);
    return name == "raw" ? detail::make_raw_codec() : detail::make_lz4_codec(false, 0);
  }
  if (name == "zstd") {
    return detail::make_zstd_codec(has_level ? check_level(spec, level, kZstdMin, kZstdMax) : kZstdDefault);
  }
  if (name == "lz4hc") {
    return detail::make_lz4_codec(true,
                                  has_level ? check_level(spec, level, kLz4hcMin, kLz4hcMax) : kLz4hcDefault);
  }
  throw Error("unknown codec '" + spec + "'; " + kKnown);
}

std::unique_ptr<Codec> make_codec(CodecId id, int level) {
  switch (id) {
    case CodecId::kRaw:
      return detail::make_raw_codec();
    case CodecId::kLz4:
      return detail::make_lz4_codec(false, 0);
    case CodecId::kZstd:
      return detail::make_zstd_codec(level == 0 ? kZstdDefault
                                                : check_level("zstd", level, kZstdMin, kZstdMax));
    case CodecId::kLz4hc:
      return detail::make_lz4_codec(
          true, level == 0 ? kLz4hcDefault : check_level("lz4hc", level, kLz4hcMin, kLz4hcMax));
  }
  throw Error("unknown codec id " + std::to_string(static_cast<int>(id)) + "; " + kKnown);
}

std::vector<uint8_t> compress_to_vector(const Codec& c, const uint8_t* src, size_t n) {
  std::vector<uint8_t> out(c.max_compressed_size(n));
  uint8_t dummy = 0;
  const size_t size = c.compress(src, n, out.empty() ? &dummy : out.data(), out.size());
  out.resize(size);
  return out;
}

}  // namespace moesim::kernels
