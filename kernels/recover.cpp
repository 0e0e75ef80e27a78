#include "kernels/recover.h"

#include <memory>

namespace moesim::kernels {

namespace {

struct Scratch {
  std::unique_ptr<uint8_t[]> p;
  size_t cap = 0;
};

}  // namespace

void recover_shard(const Codec& codec, const uint8_t* src, size_t size, const uint8_t* sm, size_t n,
                   uint16_t* out, const char* what, FrameCheck check, MergeStores stores) {
  thread_local Scratch cached;
  Scratch own;
  Scratch& s = n <= kMaxCachedScratch ? cached : own;
  if (s.cap < n) {
    s.p = std::make_unique_for_overwrite<uint8_t[]>(n);  // uninitialised: the decoder writes all n bytes
    s.cap = n;
  }
  uint8_t dummy = 0;
  codec.decompress(src, size, n ? s.p.get() : &dummy, n, what, check);
  merge_bf16(s.p.get(), sm, n, out, stores);
}

}  // namespace moesim::kernels
