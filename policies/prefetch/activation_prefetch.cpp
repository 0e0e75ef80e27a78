// activation-aware -- prefetching from request-level expert activation matrices, in the style of MoE-Infinity
// (Xue et al., "MoE-Infinity: Offloading-Efficient MoE Model Serving", arXiv 2401.14361, its activation-aware
// prefetching). The current request's expert activation matrix (EAM: layers x experts, tokens routed) is
// matched against a collection of past requests' matrices (the EAMC); the most similar one predicts the
// layers ahead. The eviction policy of the same name (policies/eviction/activation_aware.cpp) ranks the cache
// by the same matrix.
//
//   request     begins at a prefill step's layer-0 invocation and at the run's start: a trace without prefill
//               steps is one request; in a batch, a group's sequences share one request. When a request ends
//               its EAM joins the collection (capacity `collection`); a full collection replaces the entry
//               matched least often, ties the oldest.
//   eam(l,e)    tokens of the request routed to (l, e), counting the invocation that starts now (its lookups
//               are done when propose() runs; nothing later is read)
//   match       the entry with the highest mean, over the layers the request has reached, of the cosine
//               similarity of its row and the EAM's row; ties: the lower index. The match's count grows by 1.
//   predicted   the match's rows; with an empty collection, the run's activations so far (all requests,
//               this one included), so that the first request is prefetched by frequency
//   propose     for the next `depth` layers l' of the step: every expert with a predicted share s > 0 of its
//               layer, ranked by s * (1 - (l' - l) / L) (nearer layers first, as the paper's priority),
//               ties by layer then expert; at most `per_layer` x depth of them (per_layer 0: top_k x batch);
//               target: layer l''s next invocation in the step
// Matching is incremental: each entry keeps its rows' dot products with the EAM, updated by the invocation's
// lookups, so a call costs O(collection x (lookups + layers reached)), not a pass over every matrix.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "base/error.h"
#include "core/prefetch.h"

namespace moesim::policies {
namespace {

class ActivationAwarePrefetch final : public PrefetchPolicy {
 public:
  ActivationAwarePrefetch(const PrefetchSetup& s, uint32_t collection, uint32_t depth, uint32_t per_layer)
      : layers_(s.layers),
        experts_(s.experts),
        capacity_(collection),
        depth_(depth),
        per_layer_(per_layer),
        eam_(size_t{s.layers} * s.experts, 0),
        eam_sq_(s.layers, 0),
        total_(size_t{s.layers} * s.experts, 0),
        total_row_(s.layers, 0) {}

  void propose(const PrefetchContext& ctx, std::vector<PrefetchRequest>& out) override {
    const WorkloadView& w = *ctx.workload;
    if (!ctx.decode && ctx.layer == 0 && request_tokens_ > 0) end_request();
    count_invocation(w, ctx.invocation);
    const std::vector<uint64_t>* predicted = nullptr;
    const uint64_t* predicted_row_sum = nullptr;
    const int m = best_match();
    if (m >= 0) {
      ++entries_[m].matched;
      predicted = &entries_[m].eam;
      predicted_row_sum = entries_[m].row_sum.data();
    } else {
      predicted = &total_;
      predicted_row_sum = total_row_.data();
    }
    const uint32_t per_layer = per_layer_ > 0 ? per_layer_ : std::max<uint32_t>(1, w.top_k * w.batch);
    candidates_.clear();
    const uint32_t step_end = w.step_begin[ctx.step + 1];
    for (uint32_t ahead = 1; ahead <= depth_; ++ahead) {
      const uint32_t inv = ctx.invocation + ahead;
      if (inv >= step_end) break;
      const uint32_t l = w.lookups.inv_layer[inv];
      if (l >= layers_ || predicted_row_sum[l] == 0) continue;
      const double decay = 1.0 - static_cast<double>(ahead) / layers_;
      for (uint32_t e = 0; e < experts_; ++e) {
        const uint64_t c = (*predicted)[size_t{l} * experts_ + e];
        if (c == 0) continue;
        const double share = static_cast<double>(c) / static_cast<double>(predicted_row_sum[l]);
        candidates_.push_back(Candidate{share * decay, l, e, inv});
      }
    }
    std::sort(candidates_.begin(), candidates_.end(), [](const Candidate& a, const Candidate& b) {
      if (a.priority != b.priority) return a.priority > b.priority;
      return a.layer != b.layer ? a.layer < b.layer : a.expert < b.expert;
    });
    const size_t keep = std::min<size_t>(candidates_.size(), size_t{per_layer} * depth_);
    for (size_t i = 0; i < keep; ++i)
      out.push_back(PrefetchRequest{static_cast<uint16_t>(candidates_[i].layer),
                                    static_cast<uint16_t>(candidates_[i].expert), candidates_[i].target});
  }

 private:
  struct Entry {
    std::vector<uint64_t> eam;      // [layer * experts + expert]
    std::vector<uint64_t> row_sum;  // [layer]
    std::vector<double> row_norm;   // [layer]: Euclidean norm of the row
    std::vector<double> dot;        // [layer]: the row's dot product with the current request's
    uint64_t matched = 0, born = 0;
  };
  struct Candidate {
    double priority;
    uint32_t layer, expert, target;
  };

  void count_invocation(const WorkloadView& w, uint32_t inv) {
    for (uint32_t j = w.lookups.inv_begin[inv]; j < w.lookups.inv_begin[inv + 1]; ++j) {
      const uint32_t key = w.lookups.key[j];
      const uint64_t t = w.tokens.empty() ? 1 : w.tokens[j];
      const uint32_t l = key / experts_;
      if (eam_sq_[l] == 0) reached_.push_back(l);
      // (a + t)^2 - a^2 = t (2a + t): the row's squared norm, kept exact in integers
      eam_sq_[l] += t * (2 * eam_[key] + t);
      eam_[key] += t;
      total_[key] += t;
      total_row_[l] += t;
      request_tokens_ += t;
      for (Entry& en : entries_) en.dot[l] += static_cast<double>(t) * static_cast<double>(en.eam[key]);
    }
  }

  int best_match() const {
    int best = -1;
    double best_sim = -1;
    for (size_t c = 0; c < entries_.size(); ++c) {
      const Entry& en = entries_[c];
      double sim = 0;
      for (uint32_t l : reached_)
        if (en.row_norm[l] > 0)
          sim += en.dot[l] / (en.row_norm[l] * std::sqrt(static_cast<double>(eam_sq_[l])));
      sim /= static_cast<double>(std::max<size_t>(reached_.size(), 1));
      if (sim > best_sim) {
        best_sim = sim;
        best = static_cast<int>(c);
      }
    }
    return best;
  }

  void end_request() {
    size_t slot = entries_.size();
    if (entries_.size() >= capacity_) {
      slot = 0;
      for (size_t c = 1; c < entries_.size(); ++c)
        if (entries_[c].matched < entries_[slot].matched ||
            (entries_[c].matched == entries_[slot].matched && entries_[c].born < entries_[slot].born))
          slot = c;
    } else {
      entries_.emplace_back();
    }
    Entry& en = entries_[slot];
    en.eam = eam_;
    en.row_sum.assign(layers_, 0);
    en.row_norm.assign(layers_, 0);
    for (uint32_t l = 0; l < layers_; ++l) {
      double sq = 0;
      for (uint32_t e = 0; e < experts_; ++e) {
        const uint64_t c = eam_[size_t{l} * experts_ + e];
        en.row_sum[l] += c;
        sq += static_cast<double>(c) * static_cast<double>(c);
      }
      en.row_norm[l] = std::sqrt(sq);
    }
    en.matched = 0;
    en.born = ++requests_;
    std::fill(eam_.begin(), eam_.end(), 0);
    std::fill(eam_sq_.begin(), eam_sq_.end(), 0);
    reached_.clear();
    request_tokens_ = 0;
    for (Entry& e : entries_) e.dot.assign(layers_, 0);  // the new request has no activations yet
  }

  uint32_t layers_, experts_, capacity_, depth_, per_layer_;
  std::vector<uint64_t> eam_;      // the current request's matrix
  std::vector<uint64_t> eam_sq_;   // [layer]: its rows' squared norms
  std::vector<uint32_t> reached_;  // layers with a nonzero row, in order reached
  std::vector<uint64_t> total_, total_row_;
  std::vector<Entry> entries_;
  std::vector<Candidate> candidates_;
  uint64_t request_tokens_ = 0, requests_ = 0;
};

}  // namespace

MOESIM_REGISTER(
    PrefetchRegistry, "activation-aware",
    "MoE-Infinity-style: matches the request's expert activation matrix against past requests' and "
    "prefetches the best match's most used experts of the next layers",
    {{"collection", "64", "past requests' matrices kept (the EAMC)", ParamType::kWhole,
      ParamRange::closed(1, 100000)},
     {"depth", "1", "layers ahead to prefetch", ParamType::kWhole, ParamRange::closed(1, 1024)},
     {"per_layer", "0", "experts per layer ahead at most (0: top_k x batch)", ParamType::kWhole,
      ParamRange::closed(0, 65536)}},
    [](const Params& p, const PrefetchSetup& s) -> std::unique_ptr<PrefetchPolicy> {
      return std::make_unique<ActivationAwarePrefetch>(s, static_cast<uint32_t>(p.get_uint("collection")),
                                                       static_cast<uint32_t>(p.get_uint("depth")),
                                                       static_cast<uint32_t>(p.get_uint("per_layer")));
    });

}  // namespace moesim::policies
