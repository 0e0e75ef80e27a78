// ZipMoE §3.4 "Pool Dispatching" (see the header for the contract).
//
//   lookup(key):                       state = state of pool[key]
//     count[key] += 1; move key up the layer's frequency order (ties: earlier first activation, lower id)
//   refresh(key):                      key is the most recently used (evict=lru); no count
//   end_invocation: for each key of the invocation: r = its rank now; target = first active pool p with
//     r < tau_p = sum_{q <= p} S_q + delta, else none; move it there (a use produced every component: no
//     I/O; none: evicted right after execution); then while a pool of the layer holds more than S_p:
//     evict by the in-pool policy (freq: lowest count), never an expert of this invocation unless only
//     they are left (degenerate, counted)
//
// Ranks are kept incrementally: an increment moves an expert up past the experts it now beats, so a
// lookup costs O(1) amortized on skewed workloads instead of a sort.
#include "serving/zipmoe_residency.h"

#include <algorithm>
#include <limits>
#include <vector>

#include "core/error.h"
#include "core/rng.h"

namespace moesim::serving {
namespace {

constexpr int8_t kNone = -1;
constexpr uint64_t kNever = std::numeric_limits<uint64_t>::max();
enum class Evict : uint8_t { kFreq, kLru, kFifo, kMarking };

ExpertState state_of(int8_t pool) {
  switch (pool) {
    case 0:
      return ExpertState::kFull;
    case 1:
      return ExpertState::kCompressed;
    case 2:
      return ExpertState::kSM;
    case 3:
      return ExpertState::kE;
    default:
      return ExpertState::kMissed;
  }
}

TensorPart part_of(int8_t pool) {
  return pool == 2 ? TensorPart::kSm : pool == 3 ? TensorPart::kE : TensorPart::kWhole;
}

class ZipMoeResidency final : public Residency {
 public:
  explicit ZipMoeResidency(const ZipMoePoolsConfig& c) : cfg_(c), rng_(c.seed) {
    if (c.layers == 0 || c.experts == 0) throw Error("zipmoe pools: no layers or experts");
    if (c.evict == "freq") {
      evict_ = Evict::kFreq;
    } else if (c.evict == "lru") {
      evict_ = Evict::kLru;
    } else if (c.evict == "fifo") {
      evict_ = Evict::kFifo;
    } else if (c.evict == "marking") {
      evict_ = Evict::kMarking;
    } else {
      throw Error("zipmoe pools: unknown in-pool eviction '" + c.evict + "' (known: freq, lru, fifo, marking)");
    }
    const size_t keys = size_t{c.layers} * c.experts;
    pool_.assign(keys, kNone);
    count_.assign(keys, 0);
    first_.assign(keys, kNever);
    last_.assign(keys, 0);
    entered_.assign(keys, 0);
    marked_.assign(keys, 0);
    stamp_.assign(keys, 0);
    slot_.assign(keys, 0);
    order_.resize(keys);
    pos_.resize(keys);
    for (uint32_t l = 0; l < c.layers; ++l)
      for (uint32_t e = 0; e < c.experts; ++e) {
        order_[l * c.experts + e] = static_cast<uint16_t>(e);
        pos_[l * c.experts + e] = static_cast<uint16_t>(e);
      }
    members_.resize(size_t{c.layers} * 4);
    uint32_t tau = 0;
    for (int p = 0; p < 4; ++p) {
      tau += c.capacity[p];
      tau_[p] = tau + c.delta;
    }
  }

  std::vector<PoolInfo> pools() const override {
    static const char* names[4] = {"F", "C", "S", "E"};
    std::vector<PoolInfo> v;
    for (int p = 0; p < 4; ++p)
      v.push_back(PoolInfo{names[p], cfg_.tier[p], uint64_t{cfg_.capacity[p]} * cfg_.expert_bytes[p] * cfg_.layers});
    return v;
  }
  std::string name() const override {
    return "zipmoe-dispatch:delta=" + std::to_string(cfg_.delta) + ",evict=" + cfg_.evict;
  }

  void begin_invocation(uint32_t layer, bool decode) override {
    layer_ = layer;
    decode_ = decode;
    ++invocation_;
    current_.clear();
    ++counters_.invocations;
  }

  LookupResult lookup(uint32_t key, uint32_t, uint32_t) override {
    const int8_t had = pool_[key];
    const LookupResult found{state_of(had), had == kNone ? MemoryTier::kUnified : cfg_.tier[had]};
    ++counters_.lookups;
    if (found.state == ExpertState::kFull) ++counters_.hits;
    if (decode_) {
      ++counters_.decode_lookups;
      if (found.state == ExpertState::kFull) ++counters_.decode_hits;
    }
    stamp_[key] = invocation_;
    current_.push_back(key);
    last_[key] = ++tick_;
    bump(key);
    if (had != kNone && evict_ == Evict::kMarking) marked_[key] = 1;
    return found;
  }

  // A duplicate touch inside the invocation: the most recent use for the LRU in-pool order; not an
  // activation (frequency ranks, FIFO entry and marking are unchanged).
  void refresh(uint32_t key) override { last_[key] = ++tick_; }

  void end_invocation(uint32_t) override {
    // Dispatch by the ranks after every count of the invocation: an expert looked up early may be overtaken
    // by the later ones. Past every threshold it is evicted right after execution.
    for (uint32_t key : current_) move(key, dispatch(key));
    bool degenerate = false;
    uint64_t excess = 0;
    for (int p = 0; p < 4; ++p) {
      auto& m = members_[layer_ * 4 + p];
      while (m.size() > cfg_.capacity[p]) {
        uint32_t v = victim(layer_, p, true);
        if (v == kNoKey) {  // only this invocation's experts are left: the pool cannot hold them
          if (!degenerate) excess = m.size() - cfg_.capacity[p];
          degenerate = true;
          v = victim(layer_, p, false);
        }
        move(v, kNone);
      }
    }
    if (degenerate) {
      ++counters_.over_capacity_invocations;
      counters_.max_over_capacity = std::max(counters_.max_over_capacity, excess);
    }
  }

  ExpertState prefetch(uint32_t layer, uint32_t key, uint32_t, ExpertState* target) override {
    const int8_t had = pool_[key];
    const int8_t to = dispatch(key);
    if (to == kNone || to == had) {
      *target = state_of(had);
      return state_of(had);
    }
    move(key, to);
    entered_[key] = ++tick_;
    last_[key] = tick_;
    auto& m = members_[layer * 4 + to];
    while (m.size() > cfg_.capacity[to]) {
      // Never the prefetched expert itself, nor an expert of the invocation that is running.
      const uint32_t v = victim(layer, to, true, key);
      if (v == kNoKey) {
        move(key, had);  // nothing else can go: give the prefetch up
        *target = state_of(had);
        return state_of(had);
      }
      move(v, kNone);
    }
    *target = state_of(to);
    return state_of(had);
  }

  LookupResult peek(uint32_t key) const override {
    const int8_t p = pool_[key];
    return {state_of(p), p == kNone ? MemoryTier::kUnified : cfg_.tier[p]};
  }
  CacheCounters counters() const override { return counters_; }
  uint64_t capacity_experts() const override {
    uint64_t n = 0;
    for (uint32_t c : cfg_.capacity) n += c;
    return n * cfg_.layers;
  }

 private:
  // Whether a beats b in the layer's frequency order.
  bool before(uint32_t a, uint32_t b) const {
    if (count_[a] != count_[b]) return count_[a] > count_[b];
    if (first_[a] != first_[b]) return first_[a] < first_[b];
    return a < b;
  }
  void bump(uint32_t key) {
    ++count_[key];
    if (first_[key] == kNever) first_[key] = tick_;
    const uint32_t layer = key / cfg_.experts, base = layer * cfg_.experts;
    uint32_t i = pos_[key];
    while (i > 0) {
      const uint32_t prev = base + order_[base + i - 1];
      if (!before(key, prev)) break;
      order_[base + i] = order_[base + i - 1];
      pos_[prev] = static_cast<uint16_t>(i);
      --i;
    }
    order_[base + i] = static_cast<uint16_t>(key - base);
    pos_[key] = static_cast<uint16_t>(i);
  }
  int8_t dispatch(uint32_t key) const {
    const uint32_t r = pos_[key];
    for (int p = 0; p < 4; ++p)
      if (cfg_.capacity[p] > 0 && r < tau_[p]) return static_cast<int8_t>(p);
    return kNone;
  }
  void send(MemoryEvent::Kind kind, int8_t pool, uint32_t key, bool leaving) {
    emit(MemoryEvent{kind, static_cast<uint32_t>(pool), key, part_of(pool), cfg_.expert_bytes[pool], leaving});
  }
  // Moves key to pool `to` (kNone: out of every pool), with its memory events and membership.
  void move(uint32_t key, int8_t to) {
    const int8_t from = pool_[key];
    if (from == to) return;
    const uint32_t layer = key / cfg_.experts;
    if (from != kNone) {
      auto& m = members_[layer * 4 + from];
      const uint32_t i = slot_[key];
      m[i] = m.back();
      slot_[m[i]] = i;
      m.pop_back();
    }
    if (to != kNone) {
      auto& m = members_[layer * 4 + to];
      slot_[key] = static_cast<uint32_t>(m.size());
      m.push_back(key);
      entered_[key] = ++tick_;
      marked_[key] = 0;
    }
    pool_[key] = to;
    if (from == kNone) {
      send(MemoryEvent::Kind::kAdmit, to, key, false);
    } else if (to == kNone) {
      ++counters_.evictions;
      send(MemoryEvent::Kind::kEvict, from, key, true);
    } else {
      const auto kind = to > from ? MemoryEvent::Kind::kDemote : MemoryEvent::Kind::kPromote;
      send(kind, from, key, true);
      send(kind, to, key, false);
    }
  }
  // The in-pool policy's choice among the pool's experts of `layer`; with `spare_in_use`, never one of the
  // running invocation's experts (nor `keep`). kNoKey when none is eligible.
  uint32_t victim(uint32_t layer, int p, bool spare_in_use, uint32_t keep = kNoKey) {
    const auto& m = members_[layer * 4 + p];
    auto eligible = [&](uint32_t k) {
      return k != keep && !(spare_in_use && stamp_[k] == invocation_ && layer == layer_);
    };
    uint32_t best = kNoKey;
    if (evict_ == Evict::kMarking) {
      uint32_t unmarked = 0;
      for (uint32_t k : m) unmarked += eligible(k) && !marked_[k];
      if (unmarked == 0) {  // a new phase: unmark everything
        for (uint32_t k : m) marked_[k] = 0;
        for (uint32_t k : m) unmarked += eligible(k);
        if (unmarked == 0) return kNoKey;
      }
      auto r = static_cast<uint32_t>(rng_.below(unmarked));
      for (uint32_t k : m)
        if (eligible(k) && !marked_[k] && r-- == 0) return k;
      return kNoKey;
    }
    for (uint32_t k : m) {
      if (!eligible(k)) continue;
      if (best == kNoKey) {
        best = k;
        continue;
      }
      switch (evict_) {
        case Evict::kFreq:  // the lowest activation count; ties: the worse rank
          if (count_[k] < count_[best] || (count_[k] == count_[best] && pos_[k] > pos_[best])) best = k;
          break;
        case Evict::kLru:
          if (last_[k] < last_[best]) best = k;
          break;
        case Evict::kFifo:
          if (entered_[k] < entered_[best]) best = k;
          break;
        case Evict::kMarking:
          break;
      }
    }
    return best;
  }

  ZipMoePoolsConfig cfg_;
  Evict evict_ = Evict::kFreq;
  Rng rng_;
  std::array<uint32_t, 4> tau_{};
  std::vector<int8_t> pool_;
  std::vector<uint64_t> count_, first_, last_, entered_, stamp_;
  std::vector<uint8_t> marked_;
  std::vector<uint32_t> slot_;
  std::vector<uint16_t> order_, pos_;  // per layer: experts in frequency order; each key's position
  std::vector<std::vector<uint32_t>> members_;  // [layer * 4 + pool]
  std::vector<uint32_t> current_;
  uint32_t layer_ = 0;
  bool decode_ = false;
  uint64_t invocation_ = 0, tick_ = 0;
  CacheCounters counters_;
};

}  // namespace

std::unique_ptr<Residency> make_zipmoe_residency(const ZipMoePoolsConfig& cfg) {
  return std::make_unique<ZipMoeResidency>(cfg);
}

}  // namespace moesim::serving
