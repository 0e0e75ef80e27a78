// Belady's replay fast path over a next-use calendar: the same victims as the indexed heap of
// policies/eviction/belady.cpp, without re-keying a heap entry on every hit.
//
// Why: in the heap a hit moves its entry from the bottom (its old next use is the current invocation, the
// smallest priority) to near the top (Belady keeps the keys used soonest, so a new next use is usually later
// than theirs): a full sift on most hits. Here a hit stores the key's new next use and sets one bit.
//
// Structure. A resident key k sits in the bucket of its next use t = next(k), an invocation index, or, when
// it is never used again, in a slot of its own after the last invocation (slot = invocations + k, so that
// these come first and the larger key first among them, as the heap's priority (next << 32 | key) orders
// them). A hierarchical bitset over the slots marks the non-empty buckets. A bucket's members are not stored:
// a key whose next use is t is one of invocation t's keys, so they are the keys of invocation t (in the
// stream) whose next(k) is still t. Hits of invocation t empty bucket t as a whole (each of its members is
// looked up there and moves to its new next use), so nothing is removed on a hit.
//   hit / admission:  next(k) = next use; set the bit of k's slot                        O(1)
//   evict:            highest set bit (one word per level), then the largest key of that bucket not in use:
//                     a scan of the invocation's keys, kept as a bitmask of its members in a small cache of
//                     buckets (keys placed in a cached bucket join it); a bucket whose members are all in
//                     use is set aside until end_invocation, as the heap sets aside its in-use entries
//   The victim is the largest (next use, key) among resident keys not in use: the heap's.
//
// Contract: one partition (CacheConfig::partitions() == 1), driven by BasicCache over exactly `view`, the
// invocations in order from the first (core/expert_cache.h replay_stream), with the view's next uses. The
// structure is exact only when every next use is the stream's own: the index of the next invocation that
// looks the key up (traces/lookup_stream.h). That is checked as it goes (each lookup finds the key's
// previous next use equal to the current invocation, or finds the key never looked up before) and at the
// end (consistent_at_end: every key's last next use is "never"); a violation throws InconsistentNextUse
// (a corrupt or hand-made index), and the caller then replays with the heap, whose answer is defined for
// any next uses. No hook allocates.
#pragma once

#include <bit>
#include <cstdint>
#include <vector>

#include "core/eviction.h"

namespace moesim::policies {

// The view's next uses are not the stream's own (see the header comment).
struct InconsistentNextUse {};

// A bitset with one summary level per 64x: set, clear and the highest set bit in one word per level.
class HierarchicalBitset {
 public:
  static constexpr uint64_t kNone = ~uint64_t{0};

  explicit HierarchicalBitset(uint64_t bits) {
    uint64_t words = 0, total = 0;
    do {
      words = bits > 64 ? (bits + 63) / 64 : 1;
      offset_[levels_++] = total;
      total += words;
      bits = words;
    } while (words > 1);
    words_.assign(total, 0);
  }
  void set(uint64_t i) {
    uint64_t& w = words_[i >> 6];
    const uint64_t old = w;
    w = old | uint64_t{1} << (i & 63);
    if (old == 0) mark_above(i >> 6);  // the levels above already mark a word that was not empty
  }
  void clear(uint64_t i) {
    uint64_t* words = words_.data();
    for (uint32_t l = 0; l < levels_; ++l) {
      uint64_t& w = words[offset_[l] + (i >> 6)];
      w &= ~(uint64_t{1} << (i & 63));
      if (w != 0) return;
      i >>= 6;
    }
  }
  uint64_t highest() const {
    const uint64_t* words = words_.data();
    const uint64_t top = words[offset_[levels_ - 1]];
    if (top == 0) return kNone;
    uint64_t i = 63 - std::countl_zero(top);
    for (uint32_t l = levels_ - 1; l-- > 0;) i = i * 64 + (63 - std::countl_zero(words[offset_[l] + i]));
    return i;
  }

 private:
  void mark_above(uint64_t i) {
    uint64_t* words = words_.data();
    for (uint32_t l = 1; l < levels_; ++l) {
      uint64_t& w = words[offset_[l] + (i >> 6)];
      const uint64_t old = w;
      w = old | uint64_t{1} << (i & 63);
      if (old != 0) return;
      i >>= 6;
    }
  }

  std::vector<uint64_t> words_;  // level 0 (one bit per slot), then each summary level; the last is one word
  uint32_t levels_ = 0;
  uint32_t offset_[8] = {};  // start of each level in words_ (8 levels: 2^48 bits)
};

// The Belady policy for BasicCache<BeladyCalendar> (see the header comment).
class BeladyCalendar {
 public:
  // Whether the calendar can replay `view` under `cfg`; otherwise the caller uses the heap.
  static bool applies(const CacheConfig& cfg, const LookupView& view) {
    return cfg.partitions() == 1 && !view.next_use.empty() && view.invocations() < kGone;
  }

  BeladyCalendar(const CacheConfig& cfg, const LookupView& view)
      : inv_begin_(view.inv_begin.data()),
        inv_layer_(view.inv_layer.data()),
        key_(view.key.data()),
        invocations_(static_cast<uint32_t>(view.invocations())),
        experts_(cfg.experts),
        bits_(uint64_t{invocations_} + cfg.keys()),
        next_(cfg.keys(), kGone),
        gone_next_(cfg.keys(), kGone),
        used_at_(cfg.keys(), kGone),
        mask_words_(experts_ / 64 + 1),
        tag_(kCached, kGone),
        base_(kCached, 0),
        masks_(size_t{kCached} * mask_words_, 0) {
    aside_.reserve(cfg.experts);  // each bucket set aside holds an in-use key of its own
  }

  void on_layer(uint32_t, bool) {}
  void begin_invocation(uint32_t) {
    ++now_;
    protecting_ = true;
    later_ = invocations_ - now_ - 1;
  }
  void on_hit(uint32_t key, uint32_t, uint32_t next_use) {
    if (next_[key] != now_) throw InconsistentNextUse{};
    place(key, next_use);
  }
  void on_admit(uint32_t key, uint32_t, uint32_t next_use) {
    const uint32_t expected = gone_next_[key];  // kGone: never looked up before
    if (expected != now_ && expected != kGone) throw InconsistentNextUse{};
    ++resident_;
    place(key, next_use);
  }
  void on_refresh(uint32_t, uint32_t) {}
  uint32_t evict(uint32_t) {
    for (;;) {
      const uint64_t s = bits_.highest();
      if (s == HierarchicalBitset::kNone) {
        // After end_invocation every resident key is in a marked bucket; one that is not was lost to a next
        // use its key does not have.
        if (resident_ > 0 && !protecting_) throw InconsistentNextUse{};
        return kNoKey;
      }
      if (s >= invocations_) {  // a key never used again
        const uint32_t k = static_cast<uint32_t>(s - invocations_);
        bits_.clear(s);
        if (in_use(k)) {
          aside_.push_back(s);
          continue;
        }
        return drop(k);
      }
      const uint32_t k = evict_from(static_cast<uint32_t>(s));
      if (k != kNoKey) return k;
    }
  }
  void end_invocation(uint32_t) {
    for (const uint64_t s : aside_) bits_.set(s);
    aside_.clear();
    protecting_ = false;
  }

  // After the whole stream: every key's last next use was "never" (see the header comment).
  bool consistent_at_end() const {
    if (now_ + 1 != invocations_) return false;
    for (size_t k = 0; k < next_.size(); ++k) {
      const uint32_t last = next_[k] != kGone ? next_[k] : gone_next_[k];
      if (last != kNeverUsedAgain && last != kGone) return false;
    }
    return true;
  }

 private:
  // Neither an invocation index nor kNeverUsedAgain: a key not resident (next_), never looked up
  // (gone_next_).
  static constexpr uint32_t kGone = 0xFFFFFFFEu;

  bool in_use(uint32_t k) const { return protecting_ && used_at_[k] == now_; }

  void place(uint32_t key, uint32_t next_use) {
    // One compare for a next use inside (now, invocations); "never" and anything out of range below.
    if (next_use - now_ - 1 >= later_) [[unlikely]] {
      if (next_use != kNeverUsedAgain) throw InconsistentNextUse{};
      bits_.set(uint64_t{invocations_} + key);
    } else {
      bits_.set(next_use);
      if (tag_[next_use % kCached] == next_use) add_to_bucket(next_use, key);
    }
    next_[key] = next_use;
    used_at_[key] = now_;
  }
  uint32_t drop(uint32_t k) {
    gone_next_[k] = next_[k];
    next_[k] = kGone;
    --resident_;
    return k;
  }

  // The members of recently evicted-from buckets, as bitmasks over the experts of the bucket's layer, in a
  // direct-mapped cache of kCached buckets: evictions return to the same few large buckets (the prefill
  // invocations used furthest ahead) between placements, and a scan of a prefill invocation's keys is long.
  // Keys placed in a cached bucket join its mask; keys that left it (looked up at t) are dropped when met.
  static constexpr uint32_t kCached = 256;
  uint64_t* cached_mask(uint32_t t) { return &masks_[size_t{t % kCached} * mask_words_]; }
  uint64_t* load_bucket(uint32_t t) {
    const uint32_t e = t % kCached;
    uint64_t* mask = cached_mask(t);
    std::fill(mask, mask + mask_words_, 0);
    tag_[e] = t;
    base_[e] = uint32_t{inv_layer_[t]} * experts_;
    for (uint32_t j = inv_begin_[t], end = inv_begin_[t + 1]; j < end; ++j)
      if (next_[key_[j]] == t) add_to_bucket(t, key_[j]);
    return mask;
  }
  void add_to_bucket(uint32_t t, uint32_t key) {
    const uint32_t x = key - base_[t % kCached];
    if (x >= experts_) throw InconsistentNextUse{};  // not a key of the bucket's invocation
    cached_mask(t)[x >> 6] |= uint64_t{1} << (x & 63);
  }
  // The largest key of bucket t not in use, removed; kNoKey when every member is in use (the bucket is then
  // set aside) or there is none. The bucket's bit is cleared once it has no member left.
  uint32_t evict_from(uint32_t t) {
    uint64_t* bucket = tag_[t % kCached] == t ? cached_mask(t) : load_bucket(t);
    const uint32_t base = base_[t % kCached];
    uint32_t best = kNoKey;
    bool more = false;  // a member other than `best` remains
    for (size_t w = mask_words_; w-- > 0 && !(more && best != kNoKey);) {
      uint64_t m = bucket[w];
      while (m != 0) {
        const uint32_t b = 63 - std::countl_zero(m);
        m &= ~(uint64_t{1} << b);
        const uint32_t k = base + static_cast<uint32_t>(w) * 64 + b;
        if (next_[k] != t) {  // left the bucket
          bucket[w] &= ~(uint64_t{1} << b);
          continue;
        }
        if (best == kNoKey && !in_use(k)) {
          best = k;
          bucket[w] &= ~(uint64_t{1} << b);
          continue;
        }
        more = true;
        if (best != kNoKey) break;
      }
    }
    if (best == kNoKey) {
      bits_.clear(t);
      if (more) aside_.push_back(t);
      return kNoKey;
    }
    if (!more) bits_.clear(t);
    return drop(best);
  }

  const uint32_t* inv_begin_;
  const uint16_t* inv_layer_;
  const uint32_t* key_;
  uint32_t invocations_;
  uint32_t experts_;
  uint32_t now_ = 0xFFFFFFFFu;  // the current invocation; the first begin_invocation makes it 0
  uint32_t later_ = 0;          // invocations after now_
  bool protecting_ = false;     // between begin_invocation and end_invocation: keys used at now_ are in use
  uint64_t resident_ = 0;
  HierarchicalBitset bits_;          // [invocations + keys] non-empty buckets
  std::vector<uint32_t> next_;       // [keys] next use of a resident key; kGone when not resident
  std::vector<uint32_t> gone_next_;  // [keys] the next use a key had when evicted; kGone before its first
  std::vector<uint32_t> used_at_;    // [keys] the invocation that last looked the key up
  std::vector<uint64_t> aside_;      // buckets set aside in this invocation (every member in use)
  uint32_t mask_words_;              // words of one bucket's mask
  std::vector<uint32_t> tag_;        // [kCached] the bucket an entry holds (kGone: none)
  std::vector<uint32_t> base_;       // [kCached] the first key of its layer
  std::vector<uint64_t> masks_;      // [kCached x mask_words_] its members, by expert
};

}  // namespace moesim::policies
