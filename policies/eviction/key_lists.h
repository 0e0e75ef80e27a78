// Allocation-free building blocks shared by the eviction policies: intrusive doubly linked lists over
// dense keys (flat arrays, one sentinel per list), per-invocation "in use" stamps, and slot arrays.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "core/eviction.h"

namespace moesim::policies {

// `lists` circular doubly linked lists sharing node arrays indexed by key; node keys + l is the sentinel
// of list l. A key is in at most one list at a time. Front = most recently pushed with push_front.
class KeyLists {
 public:
  KeyLists(uint32_t keys, uint32_t lists) : keys_(keys), next_(keys + lists), prev_(keys + lists) {
    for (uint32_t l = 0; l < lists; ++l) next_[keys + l] = prev_[keys + l] = keys + l;
  }
  void push_front(uint32_t list, uint32_t k) { insert_after(keys_ + list, k); }
  void push_back(uint32_t list, uint32_t k) { insert_after(prev_[keys_ + list], k); }
  void unlink(uint32_t k) {
    const uint32_t p = prev_[k], n = next_[k];
    next_[p] = n;
    prev_[n] = p;
  }
  // Keys at the ends of a list, or kNoKey when it is empty.
  uint32_t front(uint32_t list) const { return as_key(next_[keys_ + list]); }
  uint32_t back(uint32_t list) const { return as_key(prev_[keys_ + list]); }
  // The neighbour towards the front, or kNoKey at the end.
  uint32_t toward_front(uint32_t k) const { return as_key(prev_[k]); }
  bool empty(uint32_t list) const { return next_[keys_ + list] == keys_ + list; }

 private:
  void insert_after(uint32_t at, uint32_t k) {
    const uint32_t n = next_[at];
    next_[k] = n;
    prev_[k] = at;
    prev_[n] = k;
    next_[at] = k;
  }
  uint32_t as_key(uint32_t node) const { return node >= keys_ ? kNoKey : node; }

  uint32_t keys_;
  std::vector<uint32_t> next_, prev_;
};

// Marks the keys of the current invocation without a set: a key is in use when its stamp equals the
// current epoch. begin() and end() each start a new epoch (end() lifts the protection).
class InUseStamps {
 public:
  explicit InUseStamps(uint32_t keys) : stamp_(keys, 0) {}
  void next_epoch() {
    if (++epoch_ == 0) {  // wrapped after 2^32 epochs: old stamps could alias, clear them
      std::fill(stamp_.begin(), stamp_.end(), 0);
      epoch_ = 1;
    }
  }
  void mark(uint32_t k) { stamp_[k] = epoch_; }
  bool in_use(uint32_t k) const { return stamp_[k] == epoch_; }

 private:
  std::vector<uint32_t> stamp_;
  uint32_t epoch_ = 1;
};

// `queues` lists per partition over KeyLists (list q of partition p), each key in at most one, with the
// weight each list holds: the policies with several queues and ghost queues (ARC, 2Q, S3-FIFO) keep them in
// one. `weights` (the keys' CacheConfig::key_weight) must outlive it.
class PartitionQueues {
 public:
  static constexpr uint8_t kNone = 0xFF;
  PartitionQueues(const std::vector<uint64_t>& weights, uint32_t partitions, uint8_t queues)
      : queues_(queues),
        weight_(weights),
        lists_(static_cast<uint32_t>(weights.size()), partitions * queues),
        where_(weights.size(), kNone),
        held_(size_t{partitions} * queues, 0) {}

  void push_front(uint32_t part, uint8_t q, uint32_t key) {
    lists_.push_front(part * queues_ + q, key);
    where_[key] = q;
    held_[part * queues_ + q] += weight_[key];
  }
  // Unlinks `key` from the list it is in.
  void remove(uint32_t part, uint32_t key) {
    lists_.unlink(key);
    held_[part * queues_ + where_[key]] -= weight_[key];
    where_[key] = kNone;
  }
  // Makes `key` the front of the list it is in.
  void to_front(uint32_t part, uint32_t key) {
    lists_.unlink(key);
    lists_.push_front(part * queues_ + where_[key], key);
  }
  uint8_t where(uint32_t key) const { return where_[key]; }
  uint64_t held(uint32_t part, uint8_t q) const { return held_[part * queues_ + q]; }
  uint32_t back(uint32_t part, uint8_t q) const { return lists_.back(part * queues_ + q); }
  uint32_t toward_front(uint32_t key) const { return lists_.toward_front(key); }
  // The key nearest the back of list q that is not in use, or kNoKey.
  uint32_t back_not_in_use(uint32_t part, uint8_t q, const InUseStamps& stamps) const {
    uint32_t v = back(part, q);
    while (v != kNoKey && stamps.in_use(v)) v = lists_.toward_front(v);
    return v;
  }

 private:
  uint8_t queues_;
  const std::vector<uint64_t>& weight_;
  KeyLists lists_;
  std::vector<uint8_t> where_;  // [keys] list of the key, or kNone
  std::vector<uint64_t> held_;  // [partitions x queues] weight in each list
};

// Keys held in the slots of a flat array, with each key's slot, so that a key moves between contiguous
// zones of its partition's region in O(1) (random and marking keep candidate / marked / in-use zones; the
// callers own the zone boundaries).
class SlotArray {
 public:
  explicit SlotArray(uint32_t keys) : slots_(keys), pos_(keys) {}
  uint32_t at(uint32_t slot) const { return slots_[slot]; }
  uint32_t slot_of(uint32_t key) const { return pos_[key]; }
  void put(uint32_t slot, uint32_t key) {
    slots_[slot] = key;
    pos_[key] = slot;
  }
  void swap(uint32_t i, uint32_t j) {
    std::swap(slots_[i], slots_[j]);
    pos_[slots_[i]] = i;
    pos_[slots_[j]] = j;
  }
  // Moves the key in `from` into `to`. A no-op when from == to: after an eviction the slot may hold a stale
  // copy of a key that has already moved, and rewriting its position would corrupt it.
  void move(uint32_t from, uint32_t to) {
    if (from == to) return;
    slots_[to] = slots_[from];
    pos_[slots_[to]] = to;
  }

 private:
  std::vector<uint32_t> slots_, pos_;
};

// Start of each partition's region in a per-partition array of keys: partition p may hold up to
// region_size() keys (every key of its layer, or every key for the global scope).
inline std::vector<uint32_t> partition_bases(const CacheConfig& cfg) {
  std::vector<uint32_t> base(cfg.partitions());
  for (uint32_t p = 0; p < base.size(); ++p) base[p] = p * cfg.experts;
  return base;
}

}  // namespace moesim::policies
