// LIRS: Jiang and Zhang, "LIRS: An Efficient Low Inter-reference Recency Set Replacement Policy to Improve
// Buffer Cache Performance", SIGMETRICS 2002, the implementation of Section 3.3 (stack S, list Q, stack
// pruning; the worked example of its Figures 2-3). Keys with a low inter-reference recency (LIR) fill most of
// the cache (Llirs); the rest (Lhirs) holds resident keys with a high one (HIR), listed in Q. S is an LRU
// stack of LIR keys, resident HIR keys and non-resident HIR keys whose recency is still below the largest LIR
// recency:
//
//   stack pruning: while the bottom of S is a HIR key, remove it from S (a non-resident one is forgotten)
//   access to a LIR key X (hit):           move X to the top of S; if X was at the bottom: stack pruning
//   access to a resident HIR key X (hit):  move X to the top of S
//     (a) X was in S: X becomes LIR; remove X from Q; the LIR key at the bottom of S becomes HIR and moves to
//         the end of Q; stack pruning
//     (b) X was not in S: X stays HIR; move X to the end of Q
//   access to a non-resident key X (miss): evict the resident HIR key at the front of Q (if it is in S,
//     it stays there as non-resident); load X and put it on the top of S
//     (a) X was in S: X becomes LIR; the LIR key at the bottom of S moves to the end of Q as HIR;
//         stack pruning
//     (b) X was not in S: X is HIR and goes to the end of Q
//   while the cache fills, every new key is LIR until the LIR keys reach Llirs
//
// Parameters as libCacheSim's LIRS: Lhirs = max(1, floor(hir x capacity)) with hir = 1%, Llirs = capacity -
// Lhirs (weights in capacity units), and S bounded to `stack` x the capacity by forgetting the non-resident
// HIR keys of S, oldest non-resident first (without a bound S grows with every key ever seen).
//
// Invocation semantics (docs/architecture.md §4): status changes happen at the lookups; the invocation's
// evictions come after them and take the front of Q that is not in use. When Q holds only in-use keys the
// resident key nearest the bottom of S that is not in use is evicted (and forgotten); none when every
// resident key is in use. A refresh changes nothing: the lookup already put the key on the top of S.
#include <algorithm>

#include "core/eviction.h"
#include "policies/eviction/key_lists.h"

namespace moesim::policies {
namespace {

class Lirs final : public EvictionPolicyBase<Lirs> {
 public:
  Lirs(const CacheConfig& cfg, double hir, double stack)
      : EvictionPolicyBase(cfg),
        weight_(config().key_weight),
        s_(cfg.keys(), cfg.partitions()),
        q_(cfg.keys(), cfg.partitions()),
        nh_(cfg.keys(), cfg.partitions()),
        flags_(cfg.keys(), 0),
        stamps_(cfg.keys()),
        parts_(cfg.partitions()) {
    for (uint32_t p = 0; p < cfg.partitions(); ++p) {
      const auto c = static_cast<double>(cfg.capacity[p]);
      const uint64_t lhirs = std::max<uint64_t>(1, static_cast<uint64_t>(c * hir));
      parts_[p].llirs = cfg.capacity[p] > lhirs ? cfg.capacity[p] - lhirs : 0;
      parts_[p].s_limit = static_cast<uint64_t>(c * stack);
    }
  }

  void begin_invocation(uint32_t) override { stamps_.next_epoch(); }
  void on_hit(uint32_t key, uint32_t part, uint32_t) override {
    stamps_.mark(key);
    if (has(key, kLir)) {
      to_top(part, key);
      prune(part);
      return;
    }
    if (has(key, kInS)) {  // (a)
      to_top(part, key);
      q_.unlink(key);
      clear(key, kInQ);
      make_lir(part, key);
      prune(part);
    } else {  // (b)
      to_top(part, key);
      q_.unlink(key);
      q_.push_front(part, key);
    }
    limit_stack(part);
  }
  void on_admit(uint32_t key, uint32_t part, uint32_t) override {
    stamps_.mark(key);
    set(key, kResident);
    if (has(key, kInS)) {  // (a): a non-resident HIR key still in S
      nh_.unlink(key);
      to_top(part, key);
      make_lir(part, key);
      prune(part);
    } else if (parts_[part].lir_w + weight_[key] <= parts_[part].llirs) {  // the cache fills
      to_top(part, key);
      set(key, kLir);
      parts_[part].lir_w += weight_[key];
    } else {  // (b)
      to_top(part, key);
      q_.push_front(part, key);
      set(key, kInQ);
    }
    limit_stack(part);
  }
  void on_refresh(uint32_t, uint32_t) override {}
  uint32_t evict(uint32_t part) override {
    uint32_t v = q_.back(part);
    while (v != kNoKey && stamps_.in_use(v)) v = q_.toward_front(v);
    if (v != kNoKey) {
      q_.unlink(v);
      clear(v, kInQ | kResident);
      if (has(v, kInS)) nh_.push_front(part, v);  // stays in S, non-resident
      return v;
    }
    // Q holds only in-use keys: the resident key nearest the bottom of S that is not in use.
    for (v = s_.back(part); v != kNoKey; v = s_.toward_front(v)) {
      if (!has(v, kResident) || stamps_.in_use(v)) continue;
      if (has(v, kLir)) parts_[part].lir_w -= weight_[v];
      if (has(v, kInQ)) q_.unlink(v);
      remove_from_s(part, v);
      flags_[v] = 0;
      prune(part);
      return v;
    }
    return kNoKey;
  }
  void end_invocation(uint32_t) override { stamps_.next_epoch(); }

 private:
  enum : uint8_t { kLir = 1, kInS = 2, kInQ = 4, kResident = 8 };
  struct Part {
    uint64_t llirs = 0, s_limit = 0;
    uint64_t lir_w = 0, s_w = 0;  // weights of the LIR keys and of the entries of S
  };

  bool has(uint32_t k, uint8_t f) const { return (flags_[k] & f) != 0; }
  void set(uint32_t k, uint8_t f) { flags_[k] = static_cast<uint8_t>(flags_[k] | f); }
  void clear(uint32_t k, uint8_t f) { flags_[k] = static_cast<uint8_t>(flags_[k] & ~f); }

  void to_top(uint32_t part, uint32_t k) {
    if (has(k, kInS)) {
      s_.unlink(k);
    } else {
      set(k, kInS);
      parts_[part].s_w += weight_[k];
    }
    s_.push_front(part, k);
  }
  void remove_from_s(uint32_t part, uint32_t k) {
    s_.unlink(k);
    clear(k, kInS);
    parts_[part].s_w -= weight_[k];
  }
  // k (on the top of S) becomes LIR; LIR keys at the bottom of S become resident HIR at the end of Q while
  // the LIR keys exceed Llirs.
  void make_lir(uint32_t part, uint32_t k) {
    Part& p = parts_[part];
    set(k, kLir);
    p.lir_w += weight_[k];
    while (p.lir_w > p.llirs) {
      prune(part);
      const uint32_t b = s_.back(part);
      if (b == k || b == kNoKey) break;
      clear(b, kLir);
      p.lir_w -= weight_[b];
      remove_from_s(part, b);
      q_.push_front(part, b);
      set(b, kInQ);
    }
  }
  void prune(uint32_t part) {
    for (uint32_t b = s_.back(part); b != kNoKey && !has(b, kLir); b = s_.back(part)) {
      remove_from_s(part, b);
      if (!has(b, kResident)) nh_.unlink(b);  // forgotten
    }
  }
  void limit_stack(uint32_t part) {
    Part& p = parts_[part];
    while (p.s_w > p.s_limit) {
      const uint32_t v = nh_.back(part);
      if (v == kNoKey) break;
      nh_.unlink(v);
      remove_from_s(part, v);
    }
  }

  const std::vector<uint64_t>& weight_;  // config().key_weight
  KeyLists s_;                           // per partition: the stack S, front = top
  KeyLists q_;                  // per partition: the list Q of resident HIR keys, front = end (newest)
  KeyLists nh_;                 // per partition: the non-resident HIR keys of S, newest first
  std::vector<uint8_t> flags_;  // [keys] kLir | kInS | kInQ | kResident
  InUseStamps stamps_;
  std::vector<Part> parts_;
};

}  // namespace

MOESIM_REGISTER(
    EvictionRegistry, "lirs",
    "LIRS (Jiang & Zhang, SIGMETRICS'02): low inter-reference recency keys stay, a small HIR list "
    "gives the victims",
    {{"hir", "0.01", "Lhirs: share of the capacity for resident HIR keys (at least one unit)",
      ParamType::kReal, ParamRange::open(0, 1)},
     {"stack", "2", "bound of the stack S (resident and non-resident entries), x the capacity",
      ParamType::kReal, ParamRange::at_least(1)}},
    [](const Params& p, const CacheConfig& cfg) -> std::unique_ptr<EvictionPolicy> {
      const double hir = p.get_double("hir"), stack = p.get_double("stack");
      return std::make_unique<Lirs>(cfg, hir, stack);
    });

}  // namespace moesim::policies
