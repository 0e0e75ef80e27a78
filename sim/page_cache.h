// The OS page cache of a buffered run (`--io buffered`: reads without O_DIRECT). A read whose bytes are resident
// is served out of DRAM instead of by the SSD; a read that misses goes to the SSD and leaves its bytes resident,
// evicting the least recently used reads' bytes until they fit (the kernel's page reclaim, approximated as one
// LRU list over whole reads rather than its active/inactive lists of pages).
//
// Resident units are reads, keyed by what they read (page_cache_key: layer, expert, tensor, E-chunk shard, part):
// two reads of the same bytes hit, reads of different parts of a tensor do not share pages. A read larger than
// the capacity is never kept.
//
// Capacity (page_cache_capacity): the DRAM that the run's pools and weights leave free. DRAM is the profile's
// memory.capacity; out of it go the host-memory expert cache (--host-budget), and, on unified memory (CPU and
// GPU share DRAM), the GPU's expert budget (--budget) and the dense weights as well. On a discrete GPU those
// two live in VRAM and leave DRAM to the page cache. What the OS, the engine's code and its buffers take is not
// subtracted: the capacity is an upper bound.
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

// The rule above: memory_capacity - host_budget - (unified ? gpu_budget + dense_bytes : 0), at least 0.
uint64_t page_cache_capacity(uint64_t memory_capacity, bool unified, uint64_t gpu_budget, uint64_t host_budget,
                             uint64_t dense_bytes);

}  // namespace moesim::sim
