// zstd codec: one zstd frame per shard, with the content size and zstd's content checksum in the frame
// header, so that a corrupt shard (flipped or missing bytes) is rejected instead of decoding to wrong
// exponents. Contexts are per thread (thread_local) because creating one costs far more than
// decompressing a 256 KiB shard.
#define ZSTD_STATIC_LINKING_ONLY  // ZSTD_d_forceIgnoreChecksum (zstd >= 1.4.7)
#include <zstd.h>

#include <memory>

#include "base/error.h"
#include "kernels/codec_impl.h"

namespace moesim::kernels::detail {

namespace {

struct CCtxFree {
  void operator()(ZSTD_CCtx* c) const { ZSTD_freeCCtx(c); }
};
struct DCtxFree {
  void operator()(ZSTD_DCtx* d) const { ZSTD_freeDCtx(d); }
};

ZSTD_CCtx* thread_cctx() {
  thread_local std::unique_ptr<ZSTD_CCtx, CCtxFree> c(ZSTD_createCCtx());
  if (!c) throw Error("zstd: cannot allocate a compression context");
  return c.get();
}

ZSTD_DCtx* thread_dctx() {
  thread_local std::unique_ptr<ZSTD_DCtx, DCtxFree> d(ZSTD_createDCtx());
  if (!d) throw Error("zstd: cannot allocate a decompression context");
  return d.get();
}

void check(size_t rc, const char* step) {
  if (ZSTD_isError(rc)) throw Error(std::string("zstd: ") + step + ": " + ZSTD_getErrorName(rc));
}

class ZstdCodec final : public Codec {
 public:
  explicit ZstdCodec(int level) : level_(level) {}
  CodecId id() const override { return CodecId::kZstd; }
  int level() const override { return level_; }
  std::string name() const override { return "zstd:" + std::to_string(level_); }
  size_t max_compressed_size(size_t n) const override { return ZSTD_compressBound(n); }

  size_t compress(const uint8_t* src, size_t n, uint8_t* dst, size_t cap) const override {
    ZSTD_CCtx* c = thread_cctx();
    check(ZSTD_CCtx_reset(c, ZSTD_reset_session_and_parameters), "reset");
    check(ZSTD_CCtx_setParameter(c, ZSTD_c_compressionLevel, level_), "set level");
    check(ZSTD_CCtx_setParameter(c, ZSTD_c_checksumFlag, 1), "set checksum flag");
    check(ZSTD_CCtx_setParameter(c, ZSTD_c_contentSizeFlag, 1), "set content size flag");
    const size_t rc = ZSTD_compress2(c, dst, cap, src, n);
    check(rc, "compress");
    return rc;
  }

  void do_decompress(const uint8_t* src, size_t size, uint8_t* dst, size_t n, const char* what,
                     FrameCheck frame_check) const override {
    const std::string nm = name();
    // Frame header (RFC 8878 §3.1.1): 4-byte magic, then the descriptor byte whose bit 2 is the
    // content-checksum flag. We only write frames with a checksum; one without is corrupt or foreign.
    if (size < 6) corrupt(what, nm, "frame of " + std::to_string(size) + " bytes is too short");
    const unsigned magic = src[0] | (src[1] << 8) | (src[2] << 16) | (static_cast<unsigned>(src[3]) << 24);
    if (magic != ZSTD_MAGICNUMBER) corrupt(what, nm, "bad frame magic number");
    if ((src[4] & 0x04) == 0) corrupt(what, nm, "frame has no content checksum");
    const unsigned long long content = ZSTD_getFrameContentSize(src, size);
    if (content == ZSTD_CONTENTSIZE_ERROR) corrupt(what, nm, "invalid frame header");
    if (content == ZSTD_CONTENTSIZE_UNKNOWN) corrupt(what, nm, "frame header has no content size");
    if (content != n) {
      corrupt(what, nm, "frame holds " + std::to_string(content) + " bytes, expected " + std::to_string(n));
    }
    const size_t frame = ZSTD_findFrameCompressedSize(src, size);
    if (ZSTD_isError(frame))
      corrupt(what, nm, std::string("truncated or invalid frame: ") + ZSTD_getErrorName(frame));
    if (frame != size) {
      corrupt(what, nm, std::to_string(size - frame) + " trailing bytes after the frame");
    }
    ZSTD_DCtx* d = thread_dctx();
#ifdef ZSTD_d_forceIgnoreChecksum
    // Older zstd (< 1.4.7) lacks the switch and always verifies: slower, never less safe.
    check(ZSTD_DCtx_setParameter(d, ZSTD_d_forceIgnoreChecksum,
                                 frame_check == FrameCheck::kTrusted ? ZSTD_d_ignoreChecksum
                                                                     : ZSTD_d_validateChecksum),
          "set the checksum mode");
#else
    (void)frame_check;
#endif
    uint8_t dummy = 0;
    const size_t rc = ZSTD_decompressDCtx(d, n ? dst : &dummy, n, src, size);
    if (ZSTD_isError(rc)) corrupt(what, nm, ZSTD_getErrorName(rc));
    if (rc != n) corrupt(what, nm, "decoded " + std::to_string(rc) + " bytes, expected " + std::to_string(n));
  }

 private:
  int level_;
};

}  // namespace

std::unique_ptr<Codec> make_zstd_codec(int level) {
  return std::make_unique<ZstdCodec>(level);
}

}  // namespace moesim::kernels::detail
