// Fidelity of the fitted generator against the bundled real traces (data/traces, SOURCE.md): a synthetic
// trace fitted to a real one, 2000 decode tokens long, has per layer the real activation entropy,
// rank-frequency curve, next-token repeat rate and strongest co-activation lifts, within tolerances that
// come from the sampling error of a 2000-token trace plus the model's measured bias (beside each check);
// and a fitted trace of the real length has the real trace's global and per-layer LRU hit rates at three
// budgets within 3 points. Prints the tables quoted in docs/synth.md.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <string>

#include "replay/cache_replay.h"
#include "tests/fixtures.h"
#include "traces/lookup_stream.h"
#include "traces/stats.h"
#include "traces/synth.h"
#include "traces/trace_io.h"

namespace moesim::traces {
namespace {

struct Fidelity {
  double max_entropy_diff = 0, max_l1 = 0, max_l1_tol = 0, max_repeat_diff = 0, max_lift_rel = 0,
         max_lift_sigmas = 0;
  uint32_t pairs_checked = 0;
};

void check_fidelity(const std::string& name, uint64_t seed) {
  const std::string path = test::bundled_data("traces/") + name + ".route.csv";
  const Trace real = load_trace(path);
  const TraceInfo& ri = real.info();
  const SynthShape shape{ri.model, ri.layers, ri.experts, ri.top_k, ri.expert_bytes};
  const SynthModel m = fit_model(real, shape, FitOptions{}, seed, path);
  SynthOptions o;
  o.seed = seed;
  o.decode_tokens = 2000;
  o.prompt_tokens = static_cast<uint32_t>(real.tokens(Phase::kPrefill));
  const Trace syn = generate_trace(m, o);
  StatsOptions so;
  so.top_pairs = 0;
  const TraceStats rs = compute_stats(real, so), ss = compute_stats(syn, so);
  const double k = ri.top_k;
  const double T = static_cast<double>(syn.tokens(Phase::kPrefill) + syn.tokens(Phase::kDecode));
  Fidelity fd;
  std::printf(
      "%s: layer, entropy real/synth, L1 (tol), repeat real/synth (decode copy-from-previous probability), "
      "modelled pairs lift real/synth\n",
      name.c_str());
  for (uint32_t l = 0; l < ri.layers; ++l) {
    const LayerStats &a = rs.layers[l], &b = ss.layers[l];
    const SynthLayer& L = m.layers[l];
    // Tokens are autocorrelated through the reuse kernel: the variance of a mean over T tokens grows by about
    // (1 + R) / (1 - R) (an AR(1) indicator with lag-1 correlation R = the repeat rate).
    const double R = std::max(a.repeat_rate(), b.repeat_rate());
    const double infl = std::sqrt((1 + R) / (1 - R));

    // Entropy: pi's usage distribution is exactly the real one (f_e = c_e / T_real), so the synthetic
    // plug-in entropy differs only by sampling: bias (m - 1) / (2 N ln 2) ~ 0.01 bit for m ~ 100 experts
    // and N = k T ~ 12000 slots, standard deviation sqrt(Var[log2 p] / N) * infl ~ 0.02 bit.
    const double dH = std::abs(a.entropy_bits - b.entropy_bits);
    // On top of that, the reuse kernel's first-use draws (fitted on a sequence of the real length) bring
    // every expert of the support in early, rare ones included, so a 2000-token trace's usage is a little
    // flatter than pi: measured up to +0.144 bit (gpt-oss layer 4, fitted on 149 tokens), so 0.2.
    EXPECT_LT(dH, 0.20) << name << " layer " << l;
    fd.max_entropy_diff = std::max(fd.max_entropy_diff, dH);

    // Rank-frequency curve (sum = k): L1 distance between the sorted curves. Unsorted, the expected L1 of
    // T-token frequency estimates is sqrt(2/pi) * sum_e sd_e with sd_e = sqrt(f_e (1 - f_e) / T) * infl;
    // sorting only pairs up closer values. Tolerance 1.5x that expectation: the sum of ~100 independent
    // |deviations| has a relative spread of about 0.1, so 1.5x is > 4 standard deviations.
    double l1 = 0, expect = 0;
    for (uint32_t r = 0; r < ri.experts; ++r) {
      l1 += std::abs(a.rank_frequency[r] - b.rank_frequency[r]);
      const double f = L.f[r];
      expect += std::sqrt(2 / M_PI) * std::sqrt(f * (1 - f) / T) * infl;
    }
    // The reuse kernel keeps pi only approximately (copies from tokens further back than the previous
    // one, and first-use draws, are not the exact keep-and-refill chain of docs/synth.md), which adds a
    // small bias: measured at up to 1.55x the expected sampling L1 (gpt-oss layer 12), so 2x.
    EXPECT_LT(l1, 2.0 * expect) << name << " layer " << l;
    fd.max_l1 = std::max(fd.max_l1, l1);
    fd.max_l1_tol = std::max(fd.max_l1_tol, 2.0 * expect);

    // Repeat rate: measured on 2000 tokens, an estimate has a standard deviation of about
    // sqrt(R (1 - R) / (k T)) * infl <= 0.015. Reference: the real rate, or that of independent draws
    // (sum f^2 / k) when the real one is lower (anti-correlation is not modelled).
    double indep = 0;
    for (double f : L.f) indep += f * f / k;
    const double target = std::max(a.repeat_rate(), indep);
    const double dR = std::abs(b.repeat_rate() - target);
    // The repeat rate is no longer calibrated on its own: it is the first bin of the last-use-distance
    // profile fitted on sequences of the real length (64 decode tokens on gpt-oss), and a 2000-token
    // sequence drifts from it (first uses run out, copies from 2+ tokens back also repeat the previous
    // token): measured up to 0.058 (gpt-oss layer 20, where the real rate is below the independent one),
    // so 0.08.
    EXPECT_LT(dR, 0.08) << name << " layer " << l << " real " << a.repeat_rate() << " indep " << indep;
    fd.max_repeat_diff = std::max(fd.max_repeat_diff, dR);

    // Modelled co-activations: the synthetic lift f^_ab / (f^_a f^_b) estimates the fitted lift from T
    // autocorrelated tokens; its relative standard deviation is about
    // infl * sqrt((1 - f_ab) / (f_ab T) + (1 - f_a) / (f_a T) + (1 - f_b) / (f_b T)) (delta method, the
    // three frequencies treated as independent, which overstates it a little since they are positively
    // correlated). Each pair is checked at 4.5 of its own standard deviations (~800 pairs in all three
    // traces: a chance failure somewhere has probability below 1%).
    std::string lifts;
    const std::vector<PairCount> pc = pair_counts(syn, l);
    for (const PairTarget& p : L.pairs) {
      const double target_lift = p.f_ab / (L.f[p.a] * L.f[p.b]);
      const double fab = pair_count(pc, p.a, p.b) / T;
      const double fa = static_cast<double>(b.counts[p.a]) / T, fb = static_cast<double>(b.counts[p.b]) / T;
      const double lift = fab / (fa * fb);
      const double fa0 = L.f[p.a], fb0 = L.f[p.b];
      const double rel_sd =
          infl * std::sqrt((1 - p.f_ab) / (p.f_ab * T) + (1 - fa0) / (fa0 * T) + (1 - fb0) / (fb0 * T));
      EXPECT_NEAR(lift, target_lift, 4.5 * rel_sd * target_lift)
          << name << " layer " << l << " pair " << p.a << "+" << p.b;
      fd.max_lift_rel = std::max(fd.max_lift_rel, std::abs(lift - target_lift) / target_lift);
      fd.max_lift_sigmas =
          std::max(fd.max_lift_sigmas, std::abs(lift - target_lift) / (target_lift * rel_sd));
      ++fd.pairs_checked;
      if (lifts.size() < 40)
        lifts += " " + std::to_string(target_lift).substr(0, 4) + "/" + std::to_string(lift).substr(0, 4);
    }
    std::printf("  %2u  H %.3f/%.3f  L1 %.3f (%.3f)  R %.3f/%.3f (copy1 %.3f)  lifts%s\n", l, a.entropy_bits,
                b.entropy_bits, l1, 2.0 * expect, a.repeat_rate(), b.repeat_rate(), L.reuse[1].copy.at(0),
                lifts.c_str());
  }
  std::printf(
      "%s summary: mean entropy real %.3f synth %.3f; repeat real %.3f synth %.3f; max |dH| %.3f, "
      "max L1 %.3f (max tol %.3f), max |dR| %.3f, max lift error %.1f%% (%.1f sd) over %u pairs\n",
      name.c_str(), rs.entropy_bits_mean, ss.entropy_bits_mean, rs.repeat_rate, ss.repeat_rate,
      fd.max_entropy_diff, fd.max_l1, fd.max_l1_tol, fd.max_repeat_diff, 100 * fd.max_lift_rel,
      fd.max_lift_sigmas, fd.pairs_checked);
  EXPECT_GT(fd.pairs_checked, 0u);
}

TEST(SynthFidelity, Qwen3) {
  check_fidelity("qwen3-30b-a3b", 2026);
}
TEST(SynthFidelity, Gemma4) {
  check_fidelity("gemma-4-26b-a4b", 2026);
}
TEST(SynthFidelity, GptOss) {
  check_fidelity("gpt-oss-120b", 2026);
}

// Reuse distances: a synthetic trace of the real trace's length (same prompt, same decode tokens) has
// reuse-distance quantiles close to the real ones. The reuse kernel is fitted to a per-token last-use
// distance profile (within a layer, in tokens); these distances are counted on the lookup stream, where a
// prompt is one invocation, so they are a related but not the fitted statistic: the pooled p50 within +-1
// invocation and p90 within a factor 1.5, both averaged over 5 seeds.
TEST(SynthFidelity, ReuseDistancesOfASameLengthTrace) {
  const std::string path = test::bundled_data("traces/qwen3-30b-a3b.route.csv");
  const Trace real = load_trace(path);
  const TraceInfo& ri = real.info();
  const SynthShape shape{ri.model, ri.layers, ri.experts, ri.top_k, ri.expert_bytes};
  const SynthModel m = fit_model(real, shape, FitOptions{}, 1, path);
  StatsOptions so;
  so.top_pairs = 0;
  const TraceStats rs = compute_stats(real, so);
  double p50 = 0, p90 = 0, never = 0;
  for (uint64_t seed = 1; seed <= 5; ++seed) {
    SynthOptions o;
    o.seed = seed;
    o.prompt_tokens = static_cast<uint32_t>(real.tokens(Phase::kPrefill));
    o.decode_tokens = static_cast<uint32_t>(real.tokens(Phase::kDecode));
    const TraceStats ss = compute_stats(generate_trace(m, o), so);
    p50 += *ss.reuse.p50 / 5.0;
    p90 += *ss.reuse.p90 / 5.0;
    never += ss.reuse.never_reused_fraction() / 5.0;
  }
  std::printf(
      "reuse (qwen3, same length, 5 seeds): p50 real %u synth %.1f; p90 real %u synth %.1f; never reused "
      "real %.3f synth %.3f\n",
      *rs.reuse.p50, p50, *rs.reuse.p90, p90, rs.reuse.never_reused_fraction(), never);
  EXPECT_NEAR(p50, *rs.reuse.p50, 1.0);
  EXPECT_GT(p90, *rs.reuse.p90 / 1.5);
  EXPECT_LT(p90, *rs.reuse.p90 * 1.5);
}

// LRU hit rates of the real trace and of fitted traces of the same shape (same prompt and decode lengths,
// one sequence). Budgets: the per-layer capacities (experts per layer; the global cache holds that many
// times the layers) at which the real trace's per-layer LRU hit rate is closest to 30%, 60% and 85%, so
// that low, medium and high hit rates are compared on every trace without per-trace constants.
struct HitRates {
  double layer = 0, global = 0;
};

HitRates lru_hits(const Trace& t, uint32_t cap) {
  const LookupStream s = build_lookup_stream(t);
  const replay::ReplayInput in(s, t.info().top_k, t.info().expert_bytes);
  std::vector<replay::ReplayConfig> cfgs(2);
  for (auto& c : cfgs) c.capacity = {CacheCapacity::Unit::kExperts, cap};
  cfgs[0].scope = CacheScope::kPerLayer;
  cfgs[1].scope = CacheScope::kGlobal;
  const auto r = replay::replay_sweep(in, cfgs, 1);
  return {r[0].hit_pct, r[1].hit_pct};
}

// A fitted trace of the real length is one short realization: its hit rate has a seed-to-seed spread of
// a few points (printed below). The comparison uses the mean over kSeeds seeds, i.e. the model's expected
// hit rate, whose standard error is that spread / sqrt(kSeeds).
constexpr uint64_t kSeeds = 8;

void check_hit_rates(const std::string& name) {
  const std::string path = test::bundled_data("traces/") + name + ".route.csv";
  const Trace real = load_trace(path);
  const TraceInfo& ri = real.info();
  const SynthShape shape{ri.model, ri.layers, ri.experts, ri.top_k, ri.expert_bytes};
  std::vector<uint32_t> caps;
  for (double target : {30.0, 60.0, 85.0}) {
    uint32_t best = ri.top_k;
    double best_err = 1e9;
    for (uint32_t c = ri.top_k; c < ri.experts; ++c) {
      const double err = std::abs(lru_hits(real, c).layer - target);
      if (err < best_err) best_err = err, best = c;
    }
    caps.push_back(best);
  }
  std::vector<Trace> syn;
  for (uint64_t seed = 1; seed <= kSeeds; ++seed) {
    const SynthModel m = fit_model(real, shape, FitOptions{}, seed, path);
    SynthOptions o;
    o.seed = seed;
    o.prompt_tokens = static_cast<uint32_t>(real.tokens(Phase::kPrefill));
    o.decode_tokens = static_cast<uint32_t>(real.tokens(Phase::kDecode));
    syn.push_back(generate_trace(m, o));
  }
  for (uint32_t cap : caps) {
    const HitRates r = lru_hits(real, cap);
    HitRates mean;
    double sd_layer = 0, sd_global = 0;
    std::vector<HitRates> all;
    for (const Trace& t : syn) all.push_back(lru_hits(t, cap));
    for (const HitRates& h : all) mean.layer += h.layer / kSeeds, mean.global += h.global / kSeeds;
    for (const HitRates& h : all) {
      sd_layer += (h.layer - mean.layer) * (h.layer - mean.layer) / (kSeeds - 1);
      sd_global += (h.global - mean.global) * (h.global - mean.global) / (kSeeds - 1);
    }
    std::printf("| %s | %u | %.1f | %.1f (sd %.1f) | %+.1f | %.1f | %.1f (sd %.1f) | %+.1f |\n", name.c_str(),
                cap, r.layer, mean.layer, std::sqrt(sd_layer), mean.layer - r.layer, r.global, mean.global,
                std::sqrt(sd_global), mean.global - r.global);
    EXPECT_NEAR(mean.layer, r.layer, 3.0) << name << " per-layer LRU, " << cap << " experts per layer";
    EXPECT_NEAR(mean.global, r.global, 3.0) << name << " global LRU, " << cap << " experts per layer";
  }
}

TEST(SynthFidelity, LruHitRatesQwen3) {
  check_hit_rates("qwen3-30b-a3b");
}
TEST(SynthFidelity, LruHitRatesGemma4) {
  check_hit_rates("gemma-4-26b-a4b");
}
TEST(SynthFidelity, LruHitRatesGptOss) {
  check_hit_rates("gpt-oss-120b");
}

}  // namespace
}  // namespace moesim::traces
