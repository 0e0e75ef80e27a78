#include "traces/synth.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <functional>
#include <numeric>
#include <optional>
#include <string>

#include "base/error.h"
#include "base/progress.h"
#include "base/warnings.h"
#include "traces/stats.h"

namespace moesim::traces {
namespace {

// Sub-streams of the user's seed (Rng::split), one per purpose so that adding logits or changing the
// calibration never shifts the expert draws.
enum Stream : uint64_t { kPermutation = 1, kExperts = 2, kLogits = 3, kCalibration = 4 };

double gumbel(Rng& rng) {
  // u in (0, 1): never 0 or 1, so both logs are finite.
  const double u = (static_cast<double>(rng.next() >> 11) + 0.5) * 0x1.0p-53;
  return -std::log(-std::log(u));
}

double exponential(Rng& rng) {
  return -std::log((static_cast<double>(rng.next() >> 11) + 0.5) * 0x1.0p-53);
}

// Fits pi to L.f and L.pairs. Pair targets measured on a real trace with its own top_k are feasible (the
// empirical distribution satisfies them); after rescaling to another top_k, or after capping, a set of
// pair targets may admit no distribution at all. Then the weakest pair (the last, pairs are sorted by
// strength) is dropped and the fit retried; the marginals alone are always feasible.
void fit_layer(SynthLayer& L, uint32_t k) {
  for (;;) {
    std::string why;
    try {
      IpfResult r = fit_max_entropy(L.f, k, L.pairs);
      if (r.converged || r.max_residual <= 1e-6) {
        L.units = std::move(r.units);
        L.ipf_residual = r.max_residual;
        L.ipf_iterations = r.iterations;
        return;
      }
      why = "residual " + std::to_string(r.max_residual) + " after " + std::to_string(r.iterations) +
            " iterations";
    } catch (const Error& e) {
      if (L.pairs.empty()) throw;
      why = e.what();
    }
    if (L.pairs.empty()) throw Error("synth: maximum-entropy fit did not converge (" + why + ")");
    L.pairs.pop_back();
    ++L.dropped_pairs;
  }
}

// One layer's keep-and-refill chain (see synth.h). Scratch buffers are reused across tokens.
class LayerChain {
 public:
  LayerChain(const SynthLayer& L, uint32_t experts, uint32_t k)
      : L_(L), k_(k), base_(L.units, k), kept_mark_(experts, 0), seen_(experts, 0) {}

  // Starts a sequence (nothing seen) / records a token's experts as seen in it.
  void begin_sequence() {
    for (uint32_t e : seen_list_) seen_[e] = 0;
    seen_list_.clear();
  }
  void saw(const std::vector<uint32_t>& token) {
    for (uint32_t e : token)
      if (!seen_[e]) seen_[e] = 1, seen_list_.push_back(e);
  }

  // Fresh draw from pi.
  void fresh(Rng& rng, std::vector<uint32_t>& out) {
    out.clear();
    base_.draw(rng, out);
  }

  // Next token of a sequence whose earlier tokens at this layer are `hist` (oldest first), by the reuse
  // kernel K: each slot copies, with probability K.copy[d-1], a uniformly chosen expert of the token d back
  // (a copy of an expert already kept leaves the slot to the refill); the rest is drawn from pi
  // conditioned on containing the copies. Returns how many experts were kept.
  uint32_t next_reuse(Rng& rng, const std::vector<std::vector<uint32_t>>& hist, const ReuseKernel& K,
                      std::vector<uint32_t>& out) {
    out.clear();
    const size_t depth = std::min(hist.size(), K.copy.size());
    for (uint32_t slot = 0; slot < k_; ++slot) {
      double u = rng.uniform();
      for (size_t d = 1; d <= depth; ++d) {
        u -= K.copy[d - 1];
        if (u >= 0) continue;
        const std::vector<uint32_t>& src = hist[hist.size() - d];
        const uint32_t e = src[rng.below(src.size())];
        if (!kept_mark_[e]) {
          kept_mark_[e] = 1;
          out.push_back(e);
        }
        break;
      }
    }
    if (K.novel > 0) draw_novel(rng, K.novel, out);
    return refill(rng, out);
  }

  // Next token given the previous one; returns how many experts were kept.
  uint32_t next(Rng& rng, const std::vector<uint32_t>& prev, std::vector<uint32_t>& out) {
    out.clear();
    if (L_.keep <= 0) {
      base_.draw(rng, out);
      return 0;
    }
    for (uint32_t e : prev)
      if (rng.uniform() < L_.keep) {
        out.push_back(e);
        kept_mark_[e] = 1;
      }
    return refill(rng, out);
  }

 private:
  // Each slot left after the copies is, with probability `novel`, drawn from pi restricted to experts
  // not used before in the sequence: a first use, as when the sequence's topic moves on.
  void draw_novel(Rng& rng, double novel, std::vector<uint32_t>& out) {
    uint32_t m = 0;
    for (size_t i = out.size(); i < k_; ++i) m += rng.uniform() < novel;
    if (m == 0) return;
    auto banned = [&](uint32_t e) { return kept_mark_[e] || seen_[e]; };
    cond_.clear();
    uint32_t available = 0;
    for (const CpUnit& u : L_.units) {
      if (!u.is_pair()) {
        if (!banned(u.a)) cond_.push_back(u), ++available;
      } else if (!banned(u.a) && !banned(u.b)) {
        cond_.push_back(u), available += 2;
      } else if (!banned(u.a)) {
        cond_.push_back({u.a, kNoExpert, u.wa, 0, 0}), ++available;
      } else if (!banned(u.b)) {
        cond_.push_back({u.b, kNoExpert, u.wb, 0, 0}), ++available;
      }
    }
    m = std::min(m, available);
    if (m == 0) return;
    const size_t first = out.size();
    CpSampler(cond_, m).draw(rng, out);
    for (size_t i = first; i < out.size(); ++i) kept_mark_[out[i]] = 1;
  }

  // Completes `out` (the kept experts, marked in kept_mark_) with a draw from pi conditioned on
  // containing them, and clears the marks.
  uint32_t refill(Rng& rng, std::vector<uint32_t>& out) {
    const auto kept = static_cast<uint32_t>(out.size());
    if (kept == 0) {
      base_.draw(rng, out);
      return 0;
    }
    if (kept < k_) {
      // pi conditioned on containing K: drop kept singles; a pair with one kept member becomes a single
      // of the other member with weight w_ab / w_kept = w_other * phi_ab.
      cond_.clear();
      for (const CpUnit& u : L_.units) {
        if (!u.is_pair()) {
          if (!kept_mark_[u.a]) cond_.push_back(u);
        } else if (kept_mark_[u.a] && kept_mark_[u.b]) {
        } else if (kept_mark_[u.a]) {
          cond_.push_back({u.b, kNoExpert, u.wab / u.wa, 0, 0});
        } else if (kept_mark_[u.b]) {
          cond_.push_back({u.a, kNoExpert, u.wab / u.wb, 0, 0});
        } else {
          cond_.push_back(u);
        }
      }
      CpSampler(cond_, k_ - kept).draw(rng, out);
    }
    for (uint32_t i = 0; i < kept; ++i) kept_mark_[out[i]] = 0;
    return kept;
  }

  const SynthLayer& L_;
  uint32_t k_;
  CpSampler base_;
  std::vector<uint8_t> kept_mark_, seen_;  // seen_: used before in the current sequence
  std::vector<uint32_t> seen_list_;
  std::vector<CpUnit> cond_;
};

// One layer's tokens in one sequence, in execution order: `prompt` prompt positions, then decode steps.
struct SeqTokens {
  uint32_t prompt = 0;
  std::vector<std::vector<uint32_t>> tok;
};
using LayerTokens = std::vector<SeqTokens>;

// Last-use-distance profiles, [0] over prompt tokens and [1] over decode tokens (a sequence's first token
// excluded): the fraction of the tokens' experts last used at the same layer d tokens earlier in the
// sequence (the history runs through prompt and decode alike), binned by kReuseBinLo; then reuse beyond
// 64 tokens, and first uses (not used before in the sequence); then, unbinned, the fraction at each
// distance 1..64 (which shapes the kernel inside a bin). A phase with no such token has all zeros.
std::array<std::vector<double>, 2> reuse_profiles(const LayerTokens& seqs, uint32_t experts) {
  std::array<std::vector<double>, 2> h;
  std::array<uint64_t, 2> slots{0, 0};
  for (auto& x : h) x.assign(kReuseBinCount + kReuseDepth, 0.0);
  std::vector<int64_t> last(experts);
  for (const SeqTokens& seq : seqs) {
    std::fill(last.begin(), last.end(), -1);
    for (size_t t = 0; t < seq.tok.size(); ++t) {
      const int ph = t < seq.prompt ? 0 : 1;
      for (uint32_t e : seq.tok[t]) {
        if (t > 0) {
          ++slots[ph];
          const int64_t d = last[e] < 0 ? 0 : static_cast<int64_t>(t) - last[e];
          uint32_t b = d == 0 ? kReuseBins + 1 : kReuseBins;
          for (uint32_t i = 0; i < kReuseBins && d > 0; ++i)
            if (d >= kReuseBinLo[i] && d < kReuseBinLo[i + 1]) b = i;
          h[ph][b] += 1;
          if (b < kReuseBins) h[ph][kReuseBinCount + d - 1] += 1;
        }
        last[e] = static_cast<int64_t>(t);
      }
    }
  }
  for (int ph = 0; ph < 2; ++ph)
    if (slots[ph] > 0)
      for (double& x : h[ph]) x /= static_cast<double>(slots[ph]);
  return h;
}

// Generates one layer's tokens for sequences shaped like `shape` (prompt and total tokens).
LayerTokens simulate_layer(LayerChain& chain, const SynthLayer& L, const LayerTokens& shape, Rng rng) {
  LayerTokens out(shape.size());
  std::vector<uint32_t> cur;
  for (size_t s = 0; s < shape.size(); ++s) {
    chain.begin_sequence();
    out[s].prompt = shape[s].prompt;
    for (size_t t = 0; t < shape[s].tok.size(); ++t) {
      if (t == 0)
        chain.fresh(rng, cur);
      else
        chain.next_reuse(rng, out[s].tok, L.reuse[t < shape[s].prompt ? 0 : 1], cur);
      chain.saw(cur);
      out[s].tok.push_back(cur);
    }
  }
  return out;
}

// Fits the reuse kernels of both phases so that the model's last-use-distance profiles equal the real
// ones (`real`, its sequences' shapes repeated to at least calibration_steps tokens). Per bin a slot
// copy probability a_b, spread evenly over the bin's distances, and the first-use probability `novel`.
// Start at zero (independent draws from pi); then a fixed-point iteration a_b <- a_b + (target_b -
// model_b), novel <- novel + (target - model) / (share of slots left after copies), on simulated
// chains: a copy from d back lands at a shorter distance when the expert was also used in between, and
// copies displace refills, so the model's profile is measured, not derived. Total copy probability
// capped at 0.95. A phase the real trace has no measurable token of takes the other phase's kernel.
void calibrate_reuse(SynthLayer& L, uint32_t experts, uint32_t k, Rng rng, const FitOptions& opt,
                     const LayerTokens& real) {
  const auto target = reuse_profiles(real, experts);
  auto measured = [](const std::vector<double>& h) {
    double sum = 0;
    for (double x : h) sum += x;
    return sum > 0;
  };
  LayerTokens shape;
  uint64_t total = 0;
  while (total < opt.calibration_steps) {
    const uint64_t before = total;
    for (const SeqTokens& s : real) {
      shape.push_back({s.prompt, std::vector<std::vector<uint32_t>>(s.tok.size())});
      total += s.tok.size();
    }
    if (total == before) return;
  }
  const uint32_t depth = kReuseDepth;
  std::array<std::vector<double>, 2> a{std::vector<double>(kReuseBins, 0.0),
                                       std::vector<double>(kReuseBins, 0.0)};
  auto apply = [&] {
    for (int ph = 0; ph < 2; ++ph) {
      double sum = 0;
      for (double& x : a[ph]) {
        x = std::clamp(x, 0.0, 1.0);
        sum += x;
      }
      if (sum > 0.95)
        for (double& x : a[ph]) x *= 0.95 / sum;
      ReuseKernel& K = L.reuse[ph];
      K.copy.assign(depth, 0.0);
      // Inside a bin, the copy probability follows the real profile over its distances (evenly when
      // the real trace has none there).
      const std::vector<double>& fine = target[measured(target[ph]) ? ph : 1 - ph];
      for (uint32_t b = 0; b < kReuseBins; ++b) {
        const uint32_t lo = kReuseBinLo[b], hi = kReuseBinLo[b + 1];
        double in_bin = 0;
        for (uint32_t d = lo; d < hi; ++d) in_bin += fine[kReuseBinCount + d - 1];
        for (uint32_t d = lo; d < hi; ++d)
          K.copy[d - 1] = a[ph][b] * (in_bin > 0 ? fine[kReuseBinCount + d - 1] / in_bin : 1.0 / (hi - lo));
      }
    }
  };
  for (int ph = 0; ph < 2; ++ph)
    L.reuse[ph].target.assign(target[ph].begin(), target[ph].begin() + kReuseBinCount);
  for (uint32_t round = 0; round <= opt.calibration_rounds; ++round) {
    apply();
    LayerChain chain(L, experts, k);
    const auto h = reuse_profiles(simulate_layer(chain, L, shape, rng.split(round)), experts);
    for (int ph = 0; ph < 2; ++ph) {
      if (!measured(target[ph])) continue;  // no token of this phase to fit: takes the other's, below
      ReuseKernel& K = L.reuse[ph];
      if (round == opt.calibration_rounds) {
        K.residual = 0;
        for (size_t b = 0; b < kReuseBinCount; ++b)
          K.residual = std::max(K.residual, std::abs(h[ph][b] - target[ph][b]));
        continue;
      }
      for (uint32_t b = 0; b < kReuseBins; ++b) a[ph][b] += target[ph][b] - h[ph][b];
      // A first use can only come from the slots the copies leave: scale the step by their share.
      double copied = 0;
      for (double x : a[ph]) copied += std::clamp(x, 0.0, 1.0);
      K.novel = std::clamp(
          K.novel + (target[ph][kReuseBins + 1] - h[ph][kReuseBins + 1]) / std::max(0.05, 1 - copied), 0.0,
          1.0);
    }
  }
  for (int ph = 0; ph < 2; ++ph)
    if (!measured(target[ph]) && measured(target[1 - ph])) L.reuse[ph] = L.reuse[1 - ph];
}

Json kernel_provenance(const ReuseKernel& K) {
  Json j = Json::object();
  Json bins = Json::array();
  for (uint32_t b = 0; b < kReuseBins; ++b) {
    double a = 0;
    for (uint32_t d = kReuseBinLo[b]; d < kReuseBinLo[b + 1]; ++d) a += K.copy[d - 1];
    bins.push_back({{"distance", {kReuseBinLo[b], kReuseBinLo[b + 1] - 1}},
                    {"copy_probability", a},
                    {"real_fraction", K.target[b]}});
  }
  j["copy"] = std::move(bins);
  j["novel"] = K.novel;
  j["real_beyond_fraction"] = K.target[kReuseBins];
  j["real_first_use_fraction"] = K.target[kReuseBins + 1];
  j["residual"] = K.residual;
  return j;
}

Json layer_provenance(const SynthLayer& L) {
  Json j = Json::object();
  j["keep"] = L.keep;
  if (L.has_reuse())
    j["reuse"] = {{"prompt", kernel_provenance(L.reuse[0])}, {"decode", kernel_provenance(L.reuse[1])}};
  if (L.target_repeat >= 0) j["target_repeat"] = L.target_repeat;
  Json pairs = Json::array();
  for (const PairTarget& p : L.pairs) pairs.push_back({{"a", p.a}, {"b", p.b}, {"f_ab", p.f_ab}});
  j["pairs"] = std::move(pairs);
  j["dropped_pairs"] = L.dropped_pairs;
  j["ipf_iterations"] = L.ipf_iterations;
  j["ipf_residual"] = L.ipf_residual;
  return j;
}

// Logits consistent with the ranked top-k `S`: the other experts get log f_e + Gumbel noise; the chosen
// ones sit above their maximum with gaps E_r / r (E_r ~ Exp(1)), which is how the top order statistics of
// Gumbel-perturbed logits are spaced (Renyi's representation). Writes `experts` logits and the top-k
// weights softmax-renormalised over the chosen logits.
void make_logits(Rng& rng, const std::vector<double>& f, const std::vector<uint32_t>& S,
                 std::vector<float>& logits, std::vector<float>& weights, std::vector<uint8_t>& chosen) {
  const size_t E = f.size(), k = S.size();
  logits.assign(E, 0.0f);
  for (uint32_t e : S) chosen[e] = 1;
  float mx = -1e30f;
  bool any = false;
  for (size_t e = 0; e < E; ++e) {
    if (chosen[e]) continue;
    logits[e] = static_cast<float>(std::log(std::max(f[e], 1e-6)) + gumbel(rng));
    mx = any ? std::max(mx, logits[e]) : logits[e];
    any = true;
  }
  if (!any) mx = 0.0f;
  std::vector<double> z(k);
  double below = mx;
  for (size_t r = k; r-- > 0;) {
    z[r] = below + exponential(rng) / static_cast<double>(r + 1);
    // Strictly above the logit below it after rounding to float.
    float zf = static_cast<float>(z[r]);
    const float bf = static_cast<float>(below);
    if (!(zf > bf)) zf = std::nextafter(bf, 1e30f);
    logits[S[r]] = zf;
    below = zf;
  }
  weights.resize(k);
  double sum = 0;
  const double top = logits[S[0]];
  for (size_t r = 0; r < k; ++r) sum += std::exp(static_cast<double>(logits[S[r]]) - top);
  for (size_t r = 0; r < k; ++r)
    weights[r] = static_cast<float>(std::exp(static_cast<double>(logits[S[r]]) - top) / sum);
  for (uint32_t e : S) chosen[e] = 0;
}

// Co-activated pairs of a real layer worth modelling: co-activated at least `min_count` times and more
// often than independence predicts, strongest first by excess count c_ab - c_a c_b / T (which weighs both
// lift and support); ties by ids.
struct PairCand {
  uint32_t a, b;
  double excess, lift;
  uint32_t count;
};
std::vector<PairCand> pair_candidates(const Trace& real, uint32_t layer, const LayerStats& ls,
                                      uint32_t min_count) {
  std::vector<PairCand> cands;
  const double T = static_cast<double>(ls.tokens);
  for (const PairCount& pc : pair_counts(real, layer)) {
    if (pc.count < min_count) continue;
    const double expect = static_cast<double>(ls.counts[pc.a]) * static_cast<double>(ls.counts[pc.b]) / T;
    if (pc.count <= expect) continue;
    cands.push_back({pc.a, pc.b, pc.count - expect, pc.count / expect, pc.count});
  }
  std::sort(cands.begin(), cands.end(), [](const PairCand& x, const PairCand& y) {
    if (x.excess != y.excess) return x.excess > y.excess;
    return x.a != y.a ? x.a < y.a : x.b < y.b;
  });
  return cands;
}

// With fewer than k + 1 experts of positive weight, no distribution with every f < 1 exists: mix in 1%
// of uniform (only then; documented in docs/synth.md). Then water-filling to sum f = k.
std::vector<double> inclusion_from_popularity(std::vector<double> p, uint32_t k) {
  size_t positive = 0;
  for (double x : p) positive += x > 0;
  if (positive <= k) {
    const double total = std::accumulate(p.begin(), p.end(), 0.0);
    for (double& x : p) x = 0.99 * x / total + 0.01 / static_cast<double>(p.size());
  }
  return inclusion_from_weights(p, k);
}

// Reshaped fit, rank-frequency: the real layer's counts sorted by rank give the cumulative share curve
// S(x) = share of the layer's selections taken by its top x fraction of experts (x in [0, 1], linear
// between the real experts). Expert rank j of n (0-based) gets S((j + 1) / n) - S(j / n): the top x of
// the new experts take the same share as the top x of the real ones, exactly at every x = j / n.
std::vector<double> resample_rank_frequency(const std::vector<uint64_t>& counts, uint32_t n) {
  std::vector<uint64_t> c(counts);
  std::sort(c.begin(), c.end(), std::greater<>());
  const size_t m = c.size();
  std::vector<double> cum(m + 1, 0.0);
  for (size_t i = 0; i < m; ++i) cum[i + 1] = cum[i] + static_cast<double>(c[i]);
  auto S = [&](uint64_t num, uint64_t den) {  // S(num / den), in counts
    const uint64_t whole = num * m / den;
    if (whole >= m) return cum[m];
    const double frac = static_cast<double>(num * m - whole * den) / static_cast<double>(den);
    return cum[whole] + frac * static_cast<double>(c[whole]);
  };
  std::vector<double> w(n);
  for (uint32_t j = 0; j < n; ++j) w[j] = (S(j + 1, n) - S(j, n)) / cum[m];
  return w;
}

// Gini coefficient of a popularity vector (0 = uniform, 1 - 1/n = one expert takes everything).
double gini(std::vector<double> p) {
  std::sort(p.begin(), p.end());
  double sum = 0, weighted = 0;
  for (size_t i = 0; i < p.size(); ++i) {
    sum += p[i];
    weighted += static_cast<double>(2 * i + 1) * p[i];
  }
  const double n = static_cast<double>(p.size());
  return sum > 0 ? weighted / (n * sum) - 1.0 : 0.0;
}

// Share of the total taken by the top `frac` of the entries (rounded to whole entries).
double top_share(std::vector<double> p, double frac) {
  std::sort(p.begin(), p.end(), std::greater<>());
  const auto n = static_cast<size_t>(std::lround(frac * static_cast<double>(p.size())));
  double top = 0, all = 0;
  for (size_t i = 0; i < p.size(); ++i) (i < n ? top : all) += p[i];
  return top + all > 0 ? top / (top + all) : 0.0;
}

}  // namespace

uint32_t reshape_source_layer(uint32_t layer, uint32_t model_layers, uint32_t real_layers) {
  // round(layer * real / model), half up, in integers; clamped (a model with more than twice the real
  // layers would round its last layer past the end).
  const uint64_t s = (2 * uint64_t{layer} * real_layers + model_layers) / (2 * uint64_t{model_layers});
  return static_cast<uint32_t>(std::min<uint64_t>(s, real_layers - 1));
}

double popularity_gini(const std::vector<double>& p) {
  return gini(p);
}

SynthShape shape_from_model(const ModelSpec& m) {
  SynthShape s;
  s.model = m.name;
  s.layers = m.moe_layers;
  s.experts = m.routed_experts;
  s.top_k = m.top_k;
  for (uint32_t l = 0; l < m.moe_layers; ++l) s.expert_bytes.push_back(m.bytes_per_expert(l));
  return s;
}

SynthModel zipf_model(const SynthShape& shape, double alpha, uint64_t seed) {
  if (!(alpha >= 0) || !std::isfinite(alpha)) throw Error("--zipf: alpha must be a finite number >= 0");
  if (shape.layers == 0 || shape.experts == 0 || shape.top_k == 0 || shape.top_k >= shape.experts)
    throw Error("synth: the model needs layers, experts and 0 < top_k < experts");
  SynthModel m;
  m.shape = shape;
  m.layers.resize(shape.layers);
  const Rng perm_root = Rng(seed).split(kPermutation);
  for (uint32_t l = 0; l < shape.layers; ++l) {
    Rng rng = perm_root.split(l);
    std::vector<uint32_t> perm(shape.experts);
    std::iota(perm.begin(), perm.end(), 0u);
    for (size_t i = perm.size(); i > 1; --i) std::swap(perm[i - 1], perm[rng.below(i)]);
    std::vector<double> p(shape.experts);
    for (uint32_t r = 0; r < shape.experts; ++r) p[perm[r]] = std::pow(static_cast<double>(r + 1), -alpha);
    SynthLayer& L = m.layers[l];
    L.f = inclusion_from_weights(p, shape.top_k);
    fit_layer(L, shape.top_k);
  }
  m.provenance = {{"generator", "zipf"}, {"parameters", {{"alpha", alpha}}}, {"seed", seed}};
  return m;
}

namespace {

// The same-shape fit of real layer `l` with `k` experts per token (sum f = k): real marginals of the same
// expert ids, the strongest disjoint pairs with their lifts, and (opt.temporal) the reuse kernels
// calibrated to the layer's last-use-distance profile with the stream `calib`.
SynthLayer fit_real_layer(const Trace& real, uint32_t l, const LayerStats& ls, uint32_t k,
                          const FitOptions& opt, const Rng& calib, const LayerTokens& tokens) {
  const uint32_t experts = real.info().experts;
  SynthLayer L;
  std::vector<double> p(experts);
  for (uint32_t e = 0; e < experts; ++e) p[e] = static_cast<double>(ls.counts[e]);
  // f_e = c_e / T_l exactly when top_k is unchanged and no expert reaches kMaxInclusion.
  L.f = inclusion_from_popularity(std::move(p), k);
  if (opt.pairs > 0) {
    // Strongest co-activations, chosen greedily so pairs are disjoint.
    std::vector<uint8_t> used(experts, 0);
    for (const PairCand& c : pair_candidates(real, l, ls, opt.min_pair_count)) {
      if (L.pairs.size() >= opt.pairs) break;
      if (used[c.a] || used[c.b]) continue;
      // Keep the measured lift; stay strictly inside (0, min(f_a, f_b)) so the fit exists.
      const double fab = std::min(c.lift * L.f[c.a] * L.f[c.b], 0.98 * std::min(L.f[c.a], L.f[c.b]));
      L.pairs.push_back({c.a, c.b, fab});
      used[c.a] = used[c.b] = 1;
    }
  }
  fit_layer(L, k);
  if (opt.temporal) {
    // The profile is a fraction of the real top-k's slots; with another top_k it is kept as a fraction.
    if (ls.repeat_pairs > 0) L.target_repeat = ls.repeat_rate();
    calibrate_reuse(L, experts, k, calib, opt, tokens);
  }
  return L;
}

// A reshaped fit's layer (docs/synth.md, "Fitting a model of another shape") from real layer `src` of
// statistics `ls`: the rank-frequency curve resampled onto the model's experts by relative rank (a
// seeded permutation `prng` assigns the ranks to ids: real ids mean nothing in another model), the
// strongest pairs mapped by relative rank with their phi coefficient, and the reuse kernels of the
// same-shape fit of the real layer (`real_fit`), unchanged. Writes the layer's "reshape" provenance.
SynthLayer reshape_layer(const Trace& real, uint32_t src, const LayerStats& ls, const SynthShape& shape,
                         uint32_t pairs, const FitOptions& opt, Rng prng, const SynthLayer* real_fit,
                         Json& prov) {
  const uint32_t n = shape.experts, real_n = real.info().experts;
  SynthLayer L;
  const std::vector<double> w = resample_rank_frequency(ls.counts, n);
  std::vector<uint32_t> perm(n);
  std::iota(perm.begin(), perm.end(), 0u);
  for (size_t i = perm.size(); i > 1; --i) std::swap(perm[i - 1], perm[prng.below(i)]);
  std::vector<double> p(n);
  for (uint32_t j = 0; j < n; ++j) p[perm[j]] = w[j];
  L.f = inclusion_from_popularity(std::move(p), shape.top_k);
  Json pairs_prov = Json::array();
  if (pairs > 0) {
    // A real pair maps, by the relative rank of each member, onto the model's experts of the same
    // relative rank; its strength carries over as the phi coefficient (the correlation of the two
    // experts' indicators; unlike the lift, bounded by 1 / f, it does not depend on how many experts
    // share the traffic). Pairs that land on one expert, or on an expert already paired, are skipped.
    std::vector<uint32_t> rank_of(real_n, 0);
    for (uint32_t r = 0; r < ls.rank_experts.size(); ++r) rank_of[ls.rank_experts[r]] = r;
    auto mapped = [&](uint32_t e) {
      const uint64_t j = (2 * uint64_t{rank_of[e]} + 1) * n / (2 * uint64_t{real_n});
      return perm[std::min<uint64_t>(j, n - 1)];
    };
    const double T = static_cast<double>(ls.tokens);
    std::vector<uint8_t> used(n, 0);
    for (const PairCand& c : pair_candidates(real, src, ls, opt.min_pair_count)) {
      if (L.pairs.size() >= pairs) break;
      const uint32_t a = mapped(c.a), b = mapped(c.b);
      if (a == b || used[a] || used[b]) continue;
      const double ra = static_cast<double>(ls.counts[c.a]) / T, rb = static_cast<double>(ls.counts[c.b]) / T;
      const double phi = (c.count / T - ra * rb) / std::sqrt(ra * (1 - ra) * rb * (1 - rb));
      const double fa = L.f[a], fb = L.f[b];
      const double fab =
          std::min(fa * fb + phi * std::sqrt(fa * (1 - fa) * fb * (1 - fb)), 0.98 * std::min(fa, fb));
      if (!(phi > 0) || !(fab > fa * fb)) continue;
      L.pairs.push_back({std::min(a, b), std::max(a, b), fab});
      pairs_prov.push_back({{"source", {c.a, c.b}}, {"to", {std::min(a, b), std::max(a, b)}}, {"phi", phi}});
      used[a] = used[b] = 1;
    }
  }
  fit_layer(L, shape.top_k);
  if (real_fit) {
    L.reuse = real_fit->reuse;
    L.target_repeat = real_fit->target_repeat;
  }
  std::vector<double> real_share(ls.counts.begin(), ls.counts.end());
  prov = {{"source_layer", src},
          {"gini_source", gini(real_share)},
          {"gini_fitted", gini(L.f)},
          {"top_quarter_share_source", top_share(real_share, 0.25)},
          {"top_quarter_share_fitted", top_share(L.f, 0.25)},
          {"pairs", std::move(pairs_prov)}};
  return L;
}

}  // namespace

SynthModel fit_model(const Trace& real, const SynthShape& shape, const FitOptions& opt, uint64_t seed,
                     const std::string& source, Progress* progress) {
  const TraceInfo& ri = real.info();
  const uint32_t k = shape.top_k;
  const std::string dims = std::to_string(shape.layers) + " layers x " + std::to_string(shape.experts) +
                           " experts, top-" + std::to_string(k);
  if (shape.layers == 0 || shape.experts == 0)
    throw Error("synth --fit: the model " + shape.model + " (" + dims +
                ") needs at least one layer and expert");
  if (k == 0 || k >= shape.experts)
    throw Error("synth --fit: top_k must be in [1, experts) but the model " + shape.model + " has " + dims);
  if (ri.layers == 0 || ri.experts == 0 || real.records() == 0)
    throw Error("synth --fit: " + source + " has no record to fit");
  // Other layers or experts (top_k alone keeps the same-shape path): a reshaped fit.
  const bool reshape = shape.layers != ri.layers || shape.experts != ri.experts;
  StatsOptions so;
  so.top_pairs = 0;
  const TraceStats st = compute_stats(real, so);
  SynthModel m;
  m.shape = shape;
  m.layers.resize(shape.layers);
  const Rng calib_root = Rng(seed).split(kCalibration);
  const Rng perm_root = Rng(seed).split(kPermutation);
  // Each layer's tokens per sequence in execution order (canonical record order is prefill by (layer,
  // step), then decode by (step, layer), so a layer's records come in token order). A layer's sequence
  // lengths are its own (llama.cpp runs the last layer of a prompt for its last token only).
  const std::vector<uint32_t> seq_ids = real.sequence_ids();
  std::vector<LayerTokens> tokens(ri.layers, LayerTokens(seq_ids.size()));
  for (size_t r = 0, si = 0; r < real.records(); ++r) {
    while (seq_ids[si] != real.seq(r)) ++si;
    const auto ex = real.experts(r);
    SeqTokens& st_l = tokens[real.layer(r)][si];
    st_l.tok.emplace_back(ex.begin(), ex.end());
    if (real.phase(r) == Phase::kPrefill) st_l.prompt = static_cast<uint32_t>(st_l.tok.size());
  }
  // Reshaped fit: modelled pairs per layer are the same share of the experts as --pairs gives the real
  // shape (8 pairs = 16 of 128 experts -> 1 pair of 8 experts), rounded; the reuse kernels are those of
  // the same-shape fit of the source layer, fitted once per source layer.
  const auto reshaped_pairs = static_cast<uint32_t>((2 * uint64_t{opt.pairs} * shape.experts + ri.experts) /
                                                    (2 * uint64_t{ri.experts}));
  std::vector<std::optional<SynthLayer>> real_fits(reshape ? ri.layers : 0);
  Json layers_prov = Json::array();
  Json layer_map = Json::array();
  for (uint32_t l = 0; l < shape.layers; ++l) {
    const uint32_t src = reshape ? reshape_source_layer(l, shape.layers, ri.layers) : l;
    const LayerStats& ls = st.layers[src];
    if (ls.tokens == 0)
      throw Error("synth --fit: " + source + " has no record at layer " + std::to_string(src) +
                  (reshape ? " (the source of the model's layer " + std::to_string(l) + ")" : ""));
    SynthLayer& L = m.layers[l];
    if (!reshape) {
      L = fit_real_layer(real, l, ls, k, opt, calib_root.split(l), tokens[l]);
    } else {
      if (opt.temporal && !real_fits[src])
        real_fits[src] = fit_real_layer(real, src, ls, ri.top_k, opt, calib_root.split(src), tokens[src]);
      Json prov;
      L = reshape_layer(real, src, ls, shape, reshaped_pairs, opt, perm_root.split(l),
                        real_fits[src] ? &*real_fits[src] : nullptr, prov);
      layers_prov.push_back(layer_provenance(L));
      layers_prov.back()["reshape"] = std::move(prov);
      layer_map.push_back(src);
    }
    if (!reshape) layers_prov.push_back(layer_provenance(L));
    if (progress) progress->add(1);
  }
  Json params = {{"pairs_per_layer", opt.pairs},
                 {"min_pair_count", opt.min_pair_count},
                 {"temporal", opt.temporal},
                 {"calibration_steps", opt.calibration_steps},
                 {"calibration_rounds", opt.calibration_rounds}};
  m.provenance = {{"generator", "fit"},
                  {"parameters", std::move(params)},
                  {"seed", seed},
                  {"source", source},
                  {"source_model", ri.model},
                  {"source_top_k", ri.top_k},
                  {"layers", std::move(layers_prov)}};
  if (reshape) {
    // Implausible (a warning, docs/synth.md): the real curve is steeper than M's top-k allows, so the top
    // experts were capped at kMaxInclusion and the fitted curve is flatter at the top than the real one.
    uint32_t capped = 0;
    double real_top = 0, fit_top = 0;
    for (const Json& lp : m.provenance["layers"]) {
      const double r = lp["reshape"]["top_quarter_share_source"],
                   f = lp["reshape"]["top_quarter_share_fitted"];
      if (r - f > 0.02) ++capped, real_top += r, fit_top += f;
    }
    if (capped > 0)
      warn("synth --fit: reshaped onto " + std::to_string(shape.experts) + " experts, top-" +
           std::to_string(k) + ", the popularity curve of " + source +
           " would need an inclusion probability of 1 or more for the " + "top experts on " +
           std::to_string(capped) + " of " + std::to_string(shape.layers) +
           " layers: capped, so the top quarter of the experts takes " + std::to_string(fit_top / capped) +
           " of the selections instead of " + std::to_string(real_top / capped) +
           " (mean over those layers)");
  }
  if (reshape)
    m.provenance["reshape"] = {
        {"from", {{"model", ri.model}, {"layers", ri.layers}, {"experts", ri.experts}, {"top_k", ri.top_k}}},
        {"to", {{"model", shape.model}, {"layers", shape.layers}, {"experts", shape.experts}, {"top_k", k}}},
        {"layer_map", std::move(layer_map)},
        {"pairs_per_layer", reshaped_pairs},
        {"method",
         "model layer l from real layer round(l * real_layers / layers): its rank-frequency curve resampled "
         "by relative rank (seeded id permutation, sum f = top_k); the reuse kernels (copy probability per "
         "slot and distance, first-use probability) of its same-shape fit; its strongest pairs mapped by "
         "relative rank with their phi coefficient (docs/synth.md, 'Fitting a model of another shape')"}};
  return m;
}

Trace generate_trace(const SynthModel& model, const SynthOptions& opt, Progress* progress) {
  const SynthShape& sh = model.shape;
  if (opt.sequences == 0) throw Error("synth: --sequences must be at least 1");
  if (opt.prompt_tokens == 0 && opt.decode_tokens == 0)
    throw Error("synth: --tokens and --prompt-tokens are both 0");
  if (model.layers.size() != sh.layers) throw Error("synth: model has the wrong number of layers");
  TraceInfo info;
  info.model = sh.model;
  info.layers = sh.layers;
  info.experts = sh.experts;
  info.top_k = sh.top_k;
  info.expert_bytes = sh.expert_bytes;
  info.synthetic = true;
  info.provenance = model.provenance;
  info.provenance["options"] = {{"sequences", opt.sequences},
                                {"prompt_tokens", opt.prompt_tokens},
                                {"decode_tokens", opt.decode_tokens},
                                {"logits", opt.logits}};
  TraceBuilder tb(info, opt.logits, opt.logits, "synthetic");
  const Rng seed_root(opt.seed);
  const Rng expert_root = seed_root.split(kExperts);
  const Rng logit_root = seed_root.split(kLogits);
  std::vector<uint32_t> prev, cur;
  std::vector<std::vector<uint32_t>> hist;
  std::vector<std::pair<double, uint32_t>> keyed;
  std::vector<float> logits, weights;
  std::vector<uint8_t> chosen(sh.experts, 0);
  uint64_t line = 0;
  for (uint32_t s = 0; s < opt.sequences; ++s) {
    for (uint32_t l = 0; l < sh.layers; ++l) {
      const SynthLayer& L = model.layers[l];
      LayerChain chain(L, sh.experts, sh.top_k);
      const uint64_t stream = uint64_t{s} * sh.layers + l;
      Rng rng = expert_root.split(stream);
      Rng lrng = logit_root.split(stream);
      auto emit = [&](Phase ph, uint32_t step) {
        // Rank order: Plackett-Luce by f (Gumbel keys), drawn from the same stream.
        keyed.clear();
        for (uint32_t e : cur) keyed.push_back({std::log(L.f[e]) + gumbel(rng), e});
        std::sort(keyed.begin(), keyed.end(), [](const auto& a, const auto& b) {
          return a.first != b.first ? a.first > b.first : a.second < b.second;
        });
        for (size_t i = 0; i < keyed.size(); ++i) cur[i] = keyed[i].second;
        if (opt.logits) make_logits(lrng, L.f, cur, logits, weights, chosen);
        tb.add(s, ph, step, l, cur, weights, logits, ++line);
      };
      if (L.has_reuse()) {
        // Reuse kernel: one history over the prompt and the decode tokens of the sequence, kept only as
        // deep as the kernel reaches.
        hist.clear();
        chain.begin_sequence();
        for (uint32_t t = 0; t < opt.prompt_tokens + opt.decode_tokens; ++t) {
          if (t == 0)
            chain.fresh(rng, cur);
          else
            chain.next_reuse(rng, hist, L.reuse[t < opt.prompt_tokens ? 0 : 1], cur);
          chain.saw(cur);
          if (hist.size() == L.reuse[1].copy.size()) hist.erase(hist.begin());
          hist.push_back(cur);
          const bool prompt = t < opt.prompt_tokens;
          emit(prompt ? Phase::kPrefill : Phase::kDecode, prompt ? t : t - opt.prompt_tokens);
        }
      } else {
        for (uint32_t t = 0; t < opt.prompt_tokens; ++t) {
          chain.fresh(rng, cur);
          emit(Phase::kPrefill, t);
        }
        for (uint32_t t = 0; t < opt.decode_tokens; ++t) {
          if (t == 0)
            chain.fresh(rng, cur);
          else
            chain.next(rng, prev, cur);
          emit(Phase::kDecode, t);
          prev = cur;
        }
      }
      if (progress) progress->add(1);
    }
  }
  return std::move(tb).finish();
}

}  // namespace moesim::traces
