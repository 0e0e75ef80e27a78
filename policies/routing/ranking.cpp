#include "policies/routing/ranking.h"

#include <algorithm>

#include "base/error.h"

namespace moesim::policies::routing {

std::span<const uint16_t> Ranker::prefix(const InvocationTokens& tok, uint32_t t, uint32_t n) {
  const auto ids = tok.ids(t);
  const uint32_t K = tok.top_k();
  r_.assign(ids.begin(), ids.end());
  if (n <= K) return {r_.data(), n};
  const auto z = tok.logits(t);
  if (z.empty()) throw Error(needs_logits_message("a rank window beyond the top-" + std::to_string(K)));
  n = std::min<uint32_t>(n, tok.experts());
  for (uint16_t e : ids) mark_[e] = 1;
  order_.clear();
  for (uint32_t e = 0; e < tok.experts(); ++e)
    if (!mark_[e]) order_.push_back(static_cast<uint16_t>(e));
  for (uint16_t e : ids) mark_[e] = 0;
  const auto by_logit = [&](uint16_t a, uint16_t b) { return z[a] > z[b] || (z[a] == z[b] && a < b); };
  const size_t more = n - K;
  std::partial_sort(order_.begin(), order_.begin() + static_cast<std::ptrdiff_t>(more), order_.end(), by_logit);
  r_.insert(r_.end(), order_.begin(), order_.begin() + static_cast<std::ptrdiff_t>(more));
  return {r_.data(), n};
}

void Ranker::write(std::span<const uint16_t> ids, std::span<uint16_t> out) {
  // mark_ is 1 for every chosen expert here.
  size_t next = 0;  // next brought-in expert of chosen_
  auto brought_in = [&]() -> uint16_t {
    while (next < chosen_.size()) {
      const uint16_t e = chosen_[next++];
      if (std::find(ids.begin(), ids.end(), e) == ids.end()) return e;
    }
    return kNoExpert;
  };
  for (size_t s = 0; s < ids.size(); ++s) out[s] = mark_[ids[s]] ? ids[s] : brought_in();
  for (uint16_t e : chosen_) mark_[e] = 0;
}

std::string needs_logits_message(const std::string& what) {
  return what + " needs the router's full logits, and this trace has only the top-k (with top-k weights "
                "alone, ranks beyond k are unknown, so Max-Rank with M <= k and Cumsum can only reorder a "
                "token's own top-k, which changes nothing). Attach synthetic logits consistent with the recorded "
                "routing: moesim trace synth --logits-for TRACE -o T.mtr";
}

}  // namespace moesim::policies::routing
