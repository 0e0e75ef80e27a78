// activation-aware -- replacement guided by the request's expert activation matrix, in the style of
// MoE-Infinity (Xue et al., "MoE-Infinity: Offloading-Efficient MoE Model Serving", arXiv 2401.14361, its
// activation-aware expert caching). That paper traces, per request, an expert activation matrix (EAM: layers
// x experts, how often the request used each expert) and ranks each cached expert by (a) the expert's share
// of its layer's activations in the current request and (b) its layer's place in the model: experts of the
// first layers are kept more willingly, because the next token starts there and a prefetch has the least
// time to hide their loads. Its prefetcher, which predicts from past requests' matrices, is the prefetch
// policy of the same name (policies/prefetch/activation_prefetch.cpp).
//
//   request     begins at a prefill invocation of layer 0 (EvictionPolicy::on_layer) and at the start of the
//               run: a trace without prefill steps is one request; in a batch, a group's sequences share
//               one request, as they share the invocations
//   eam(l,e)    lookups of (l, e) since the request began (an invocation looks each expert up once; for a
//               decode step of batch 1 that is its token's activations); a prefetch's admission is not a
//               lookup and is not counted (a driver that never calls on_layer gets every admission counted)
//   share(l,e)  eam(l,e) / sum over e' of eam(l,e'); for a layer the request has not reached yet, the same
//               share over the run's earlier requests (so that a request's first token does not evict
//               blindly); 0 when neither has seen the layer
//   priority    (share(l,e) + eps) * (1 - l / (L + 1)), eps = 1 / (1024 E): unused experts still keep
//               their layer's order
//   evict(p)    the resident key of p that is not in use with the lowest priority; ties: the least recently
//               looked up or refreshed
//   on refresh  recency only (not an activation)
// With per-layer scope the layer factor is one constant per partition: the policy is then LFU over the
// current request's activations. Cost: O(residents of the partition) per eviction; counting is O(1).
#include <cstdint>
#include <vector>

#include "core/eviction.h"
#include "policies/eviction/key_lists.h"

namespace moesim::policies {
namespace {

class ActivationAware final : public EvictionPolicyBase<ActivationAware> {
 public:
  explicit ActivationAware(const CacheConfig& cfg)
      : EvictionPolicyBase(cfg),
        experts_(cfg.experts),
        layers_(cfg.layers),
        eps_(1.0 / (1024.0 * cfg.experts)),
        lists_(cfg.keys(), cfg.partitions()),
        stamps_(cfg.keys()),
        eam_(cfg.keys(), 0),
        history_(cfg.keys(), 0),
        eam_row_(cfg.layers, 0),
        history_row_(cfg.layers, 0) {}

  void on_layer(uint32_t layer, bool decode) override {
    driven_ = true;
    counting_ = true;
    if (layer == 0 && !decode && request_lookups_ > 0) end_request();
  }
  void begin_invocation(uint32_t) override { stamps_.next_epoch(); }
  void on_hit(uint32_t key, uint32_t part, uint32_t) override {
    lists_.unlink(key);
    touch(key, part, true);
  }
  void on_admit(uint32_t key, uint32_t part, uint32_t) override { touch(key, part, true); }
  void on_refresh(uint32_t key, uint32_t part) override {
    lists_.unlink(key);
    touch(key, part, false);
  }
  uint32_t evict(uint32_t part) override {
    uint32_t victim = kNoKey;
    double lowest = 0;
    // Back to front is least to most recent, so the first key of the lowest priority wins its ties.
    for (uint32_t k = lists_.back(part); k != kNoKey; k = lists_.toward_front(k)) {
      if (stamps_.in_use(k)) continue;
      const double pr = priority(k);
      if (victim == kNoKey || pr < lowest) {
        victim = k;
        lowest = pr;
      }
    }
    if (victim != kNoKey) lists_.unlink(victim);
    return victim;
  }
  void end_invocation(uint32_t) override {
    stamps_.next_epoch();
    counting_ = false;
  }

 private:
  void touch(uint32_t key, uint32_t part, bool activation) {
    lists_.push_front(part, key);
    stamps_.mark(key);
    if (!activation || (driven_ && !counting_)) return;
    const uint32_t layer = key / experts_;  // keys are layer * experts + expert (core/cache_config.h)
    ++eam_[key];
    ++eam_row_[layer];
    ++request_lookups_;
  }

  double priority(uint32_t key) const {
    const uint32_t layer = key / experts_;
    double share = 0;
    if (eam_row_[layer] > 0)
      share = static_cast<double>(eam_[key]) / static_cast<double>(eam_row_[layer]);
    else if (history_row_[layer] > 0)
      share = static_cast<double>(history_[key]) / static_cast<double>(history_row_[layer]);
    return (share + eps_) * (1.0 - static_cast<double>(layer) / (layers_ + 1.0));
  }

  void end_request() {
    for (size_t k = 0; k < eam_.size(); ++k) {
      history_[k] += eam_[k];
      eam_[k] = 0;
    }
    for (uint32_t l = 0; l < layers_; ++l) {
      history_row_[l] += eam_row_[l];
      eam_row_[l] = 0;
    }
    request_lookups_ = 0;
  }

  uint32_t experts_, layers_;
  double eps_;
  KeyLists lists_;        // residents per partition, most recent at the front
  InUseStamps stamps_;
  std::vector<uint64_t> eam_, history_;          // [key]: this request's lookups, earlier requests' lookups
  std::vector<uint64_t> eam_row_, history_row_;  // [layer]: their sums
  uint64_t request_lookups_ = 0;
  bool driven_ = false;    // the driver calls on_layer (the caches of core/ and serving/ do)
  bool counting_ = false;  // between on_layer and end_invocation: lookups of an invocation, not a prefetch
};

}  // namespace

MOESIM_REGISTER(EvictionRegistry, "activation-aware",
                "MoE-Infinity-style: evicts the expert with the smallest share of its layer's activations in the "
                "current request, experts of later layers first (request = from a prefill of layer 0)",
                {}, [](const Params&, const CacheConfig& cfg) -> std::unique_ptr<EvictionPolicy> {
                  return std::make_unique<ActivationAware>(cfg);
                });

}  // namespace moesim::policies
