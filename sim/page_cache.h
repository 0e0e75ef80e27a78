// The OS page cache of a buffered run (`--io buffered`: reads without O_DIRECT). A read whose bytes are
// resident is served out of DRAM instead of by the SSD; a read that misses goes to the SSD and leaves its
// bytes resident, evicting the least recently used reads' bytes until they fit (the kernel's page reclaim,
// approximated as one LRU list over whole reads rather than its active/inactive lists of pages).
//
// Resident units are reads, keyed by what they read (page_cache_key: layer, expert, tensor, E-chunk shard,
// part): two reads of the same bytes hit, reads of different parts of a tensor do not share pages. A read
// larger than the capacity is never kept.
//
// Capacity: what DRAM has left after the pinned parts of the whole device's memory (core/memory_model.h's
// page_cache_bytes: the OS reserve, the host expert cache, and on unified memory the GPU's expert budget, the
// pinned dense weights, the KV cache and the activations). Mmapped dense weights (`--dense mmap`) are not
// subtracted: they are pages of this cache (dense_page_key), evicted and faulted back like any other.
#pragma once

#include <cstdint>
#include <list>
#include <unordered_map>

#include "core/op_graph.h"

namespace moesim::sim {

class PageCache {
 public:
  explicit PageCache(uint64_t capacity = 0) : capacity_(capacity) {}
  // Whether the read `key` of `bytes` is resident: true, and it becomes the most recently used; false, and it
  // is resident from now on (unless bytes > capacity), the least recently used reads evicted to make room.
  bool access(uint64_t key, uint64_t bytes);
  bool resident(uint64_t key) const { return where_.count(key) != 0; }
  uint64_t capacity() const { return capacity_; }
  uint64_t used() const { return used_; }
  uint64_t hits() const { return hits_; }
  uint64_t misses() const { return misses_; }
  void restart_counters() { hits_ = misses_ = 0; }  // the contents stay (a warm start's measured pass)

 private:
  struct Entry {
    uint64_t key, bytes;
  };
  uint64_t capacity_;
  uint64_t used_ = 0, hits_ = 0, misses_ = 0;
  std::list<Entry> lru_;  // most recently used first
  std::unordered_map<uint64_t, std::list<Entry>::iterator> where_;
};

// The key of the bytes an SSD read op reads.
uint64_t page_cache_key(const Op& op);
// The key of one layer's mmapped dense weights (`--dense mmap`): apart from every read's key (the expert
// field 0xfffe, which no read carries: experts are numbered below it, kNoLabel is 0xffff).
uint64_t dense_page_key(uint32_t layer);
// The kernel's read-around of a fault on a mapped file (VM_READAROUND: ra_pages, 32 pages of 4 KiB by
// default): one major fault brings this many bytes in, so a region of B bytes faults back in ceil(B / this)
// times.
inline constexpr uint64_t kFaultAroundBytes = 128 * 1024;

}  // namespace moesim::sim
