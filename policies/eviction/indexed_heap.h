// A partitioned indexed heap over dense keys with an in-use set-aside: the structure shared by the eviction
// policies whose victim is the best entry of a priority order (Belady: furthest next use; LFU history=1:
// fewest lookups, then least recent), while the keys of the current invocation must not be evicted.
//
// Contract:
//   - Entry is a small copyable value carrying its key; Order provides
//       static uint32_t key(const Entry&)                   the key the entry belongs to (< keys)
//       static bool before(const Entry& a, const Entry& b)  a is evicted before b (a strict weak order)
//     Priorities must be unique (two entries never compare equivalent): then the victim does not depend on
//     the heap's shape, its arity or the order of insertions, only on the priorities.
//   - Partition p owns the region [bases[p], bases[p] + its size) of one flat array; the caller guarantees
//     that no region outgrows the next base (with policies: partition_bases, one layer's keys each).
//   - A key is in at most one partition at a time; update() and the key's presence are the caller's to
//     keep straight (it updates only keys it pushed and has not popped).
//   - pop_not_in_use(p, in_use) pops entries from the top of p until one whose key is not in use; the in-use
//     ones are set aside (kept out of the heap, so a run of evictions in one invocation does not meet them
//     again) and come back with restore_set_aside(p), which the caller invokes at the end of the invocation
//     with the same partition: within one invocation every eviction targets that partition.
//   O(log n) per push, update and pop; a pop meeting in-use entries is O(log n) amortised over the
//   invocation.
#pragma once

#include <algorithm>
#include <cstdint>
#include <utility>
#include <vector>

#include "core/eviction.h"

namespace moesim::policies {

// Arity: children per node. A wider heap has fewer levels, so an entry re-keyed towards the root moves
// less far; its children are adjacent in memory.
template <class Entry, class Order, uint32_t Arity>
class IndexedHeap {
  static_assert(Arity >= 2);

 public:
  IndexedHeap(uint32_t keys, std::vector<uint32_t> bases)
      : base_(std::move(bases)), heap_(keys), hpos_(keys), size_(base_.size(), 0) {
    aside_.reserve(keys);
  }

  uint32_t size(uint32_t part) const { return size_[part]; }
  // The entry of a key in the heap (pushed and not popped).
  const Entry& entry(uint32_t key) const { return heap_[hpos_[key]]; }

  void push(uint32_t part, const Entry& e) {
    const uint32_t i = base_[part] + size_[part]++;
    heap_[i] = e;
    sift_up(base_[part], i);
  }
  // Replaces the entry of Order::key(e), which must be in partition `part`, and restores the heap order.
  void update(uint32_t part, const Entry& e) {
    const uint32_t i = hpos_[Order::key(e)];
    const bool earlier = Order::before(e, heap_[i]);
    heap_[i] = e;
    if (earlier)
      sift_up(base_[part], i);
    else
      sift_down(base_[part], size_[part], i);
  }
  // The key of the first entry of `part` whose key is not in use, removed; kNoKey when there is none.
  template <class InUse>
  uint32_t pop_not_in_use(uint32_t part, const InUse& in_use) {
    while (size_[part] > 0) {
      const Entry top = pop(part);
      const uint32_t k = Order::key(top);
      if (!in_use.in_use(k)) return k;
      aside_.push_back(top);
    }
    return kNoKey;
  }
  // Puts the entries set aside by pop_not_in_use back into `part`.
  void restore_set_aside(uint32_t part) {
    for (const Entry& e : aside_) push(part, e);
    aside_.clear();
  }

 private:
  Entry pop(uint32_t part) {
    const uint32_t b = base_[part];
    const Entry top = heap_[b];
    const uint32_t last = b + --size_[part];
    if (last != b) {
      heap_[b] = heap_[last];
      sift_down(b, size_[part], b);
    }
    return top;
  }
  void place(uint32_t i, const Entry& e) {
    heap_[i] = e;
    hpos_[Order::key(e)] = i;
  }
  void sift_up(uint32_t b, uint32_t i) {
    const Entry e = heap_[i];
    uint32_t r = i - b;
    while (r > 0) {
      const uint32_t parent = (r - 1) / Arity;
      if (!Order::before(e, heap_[b + parent])) break;
      place(b + r, heap_[b + parent]);
      r = parent;
    }
    place(b + r, e);
  }
  void sift_down(uint32_t b, uint32_t n, uint32_t i) {
    const Entry e = heap_[i];
    uint32_t r = i - b;
    for (;;) {
      const uint32_t first = Arity * r + 1;
      if (first >= n) break;
      uint32_t c = first;
      const uint32_t last = std::min(first + Arity, n);
      for (uint32_t x = first + 1; x < last; ++x)
        if (Order::before(heap_[b + x], heap_[b + c])) c = x;
      if (!Order::before(heap_[b + c], e)) break;
      place(b + r, heap_[b + c]);
      r = c;
    }
    place(b + r, e);
  }

  std::vector<uint32_t> base_;  // [partitions] start of each partition's region
  std::vector<Entry> heap_;     // per partition region: a heap, the first entry evicted first
  std::vector<uint32_t> hpos_;  // [keys] absolute heap index of a key in the heap
  std::vector<uint32_t> size_;  // [partitions]
  std::vector<Entry> aside_;    // in-use entries popped during this invocation's evictions
};

}  // namespace moesim::policies
