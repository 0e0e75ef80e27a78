// Shared pieces of the cache-aware routing policies (Mixture of Cache-Conditional Experts, §3): the router's
// ranking r of a token (Eq. 2), the promote operation (Eq. 5) and writing a new top-K back into a token's
// slots (core/routing.h contract).
//
// The ranking r: the trace's recorded top-k in rank order -- the recorded selection is ground truth, even
// where logits disagree with it -- followed, when the trace has logits, by every other expert by logit
// descending (ties: lower id first). Without logits r has only the k recorded entries: no rank beyond k
// is known.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "core/routing.h"

namespace moesim::policies::routing {

// Per-policy scratch, sized once from the setup (no allocation per token).
class Ranker {
 public:
  explicit Ranker(uint32_t experts) : mark_(experts, 0), order_(experts) {}
  // The first n entries of r for token t (n <= experts; without logits n <= top_k).
  std::span<const uint16_t> prefix(const InvocationTokens& tok, uint32_t t, uint32_t n);
  // Max-Rank selection (Alg. 1, Eq. 7): the first K of promote(r[:J]; promote(r[:M] ∩ C; r)), written
  // into `out` (the token's slots). `cached(e)` is membership in the cache C.
  template <typename Cached>
  void max_rank(const InvocationTokens& tok, uint32_t t, uint32_t M, uint32_t J, Cached cached,
                std::span<uint16_t> out) {
    const uint32_t K = tok.top_k();
    const auto r = prefix(tok, t, std::max(M, K));
    chosen_.clear();
    for (uint32_t i = 0; i < std::min(J, K); ++i) take(r[i]);
    for (uint32_t i = 0; i < M && chosen_.size() < K; ++i)
      if (cached(r[i])) take(r[i]);
    for (uint32_t i = 0; chosen_.size() < K; ++i) take(r[i]);
    write(tok.ids(t), out);
  }
  // Writes chosen_ (K experts) into the token's slots: an expert of the router's top-k that stays keeps
  // its slot; brought-in experts fill the vacated slots in the order they were chosen.
  void write(std::span<const uint16_t> ids, std::span<uint16_t> out);
  std::vector<uint16_t>& chosen() { return chosen_; }
  void take(uint16_t e) {
    if (mark_[e]) return;
    mark_[e] = 1;
    chosen_.push_back(e);
  }

 private:
  std::vector<uint8_t> mark_;
  std::vector<uint16_t> order_, r_, chosen_;
};

// The error for a rank window the trace cannot serve (no logits: no rank beyond top-k is known).
std::string needs_logits_message(const std::string& what);

}  // namespace moesim::policies::routing
