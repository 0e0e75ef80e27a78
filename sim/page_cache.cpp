#include "sim/page_cache.h"

namespace moesim::sim {

bool PageCache::access(uint64_t key, uint64_t bytes) {
  if (auto it = where_.find(key); it != where_.end()) {
    lru_.splice(lru_.begin(), lru_, it->second);
    ++hits_;
    return true;
  }
  ++misses_;
  if (bytes > capacity_) return false;
  while (used_ + bytes > capacity_) {
    used_ -= lru_.back().bytes;
    where_.erase(lru_.back().key);
    lru_.pop_back();
  }
  lru_.push_front(Entry{key, bytes});
  where_[key] = lru_.begin();
  used_ += bytes;
  return false;
}

uint64_t page_cache_key(const Op& op) {
  // 16 bits each for layer, expert and tensor, 14 for the shard, 2 for the part: kNoLabel (0xffff) fields
  // keep distinct values since every field keeps its own bits.
  return static_cast<uint64_t>(op.layer) << 48 | static_cast<uint64_t>(op.expert) << 32 |
         static_cast<uint64_t>(op.tensor) << 16 | static_cast<uint64_t>(op.shard & 0x3fff) << 2 |
         static_cast<uint64_t>(op.part);
}

uint64_t dense_page_key(uint32_t layer) {
  return static_cast<uint64_t>(layer & 0xffff) << 48 | uint64_t{0xfffe} << 32;
}

}  // namespace moesim::sim
