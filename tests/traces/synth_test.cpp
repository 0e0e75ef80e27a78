// Synthetic generators: determinism, labelling, marginals of the keep-and-refill chain, logits.
// Fidelity against the bundled real traces is in synth_longtest.cpp.
#include "traces/synth.h"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <functional>

#include "base/error.h"
#include "base/warnings.h"
#include "tests/fixtures.h"
#include "traces/stats.h"

namespace moesim::traces {
namespace {

SynthShape small_shape(uint32_t layers = 2, uint32_t experts = 16, uint32_t k = 2) {
  return SynthShape{"small", layers, experts, k, std::vector<uint64_t>(layers, 1000)};
}

bool same_columns(const Trace& a, const Trace& b) {
  if (a.records() != b.records()) return false;
  const auto &x = a.columns(), &y = b.columns();
  auto eq = [](auto s, auto t) { return std::equal(s.begin(), s.end(), t.begin(), t.end()); };
  return eq(x.seq, y.seq) && eq(x.phase, y.phase) && eq(x.step, y.step) && eq(x.layer, y.layer) &&
         eq(x.experts, y.experts) && eq(x.weights, y.weights) && eq(x.logits, y.logits);
}

TEST(Synth, SameSeedIsBitIdenticalDifferentSeedDiffers) {
  SynthOptions o;
  o.sequences = 2;
  o.prompt_tokens = 5;
  o.decode_tokens = 40;
  o.logits = true;
  o.seed = 11;
  const Trace a = generate_trace(zipf_model(small_shape(), 1.0, 11), o);
  const Trace b = generate_trace(zipf_model(small_shape(), 1.0, 11), o);
  EXPECT_TRUE(same_columns(a, b));
  o.seed = 12;
  const Trace c = generate_trace(zipf_model(small_shape(), 1.0, 12), o);
  EXPECT_FALSE(same_columns(a, c));
  EXPECT_EQ(a.records(), 2u * 2 * 45);
  EXPECT_EQ(a.tokens(Phase::kPrefill), 10u);
  EXPECT_EQ(a.tokens(Phase::kDecode), 80u);
}

TEST(Synth, TracesAreLabelledSyntheticWithTheirProvenance) {
  SynthOptions o;
  o.decode_tokens = 3;
  o.seed = 5;
  const Trace t = generate_trace(zipf_model(small_shape(), 0.7, 5), o);
  EXPECT_TRUE(t.info().synthetic);
  EXPECT_EQ(t.info().provenance["generator"], "zipf");
  EXPECT_EQ(t.info().provenance["parameters"]["alpha"], 0.7);
  EXPECT_EQ(t.info().provenance["seed"], 5);
  EXPECT_EQ(t.info().provenance["options"]["decode_tokens"], 3);
  EXPECT_EQ(t.info().expert_bytes, std::vector<uint64_t>(2, 1000));
}

// Zipf marginals: each expert's frequency over N independent tokens is binomial(N, f_e)/N; 5 sigma.
TEST(Synth, ZipfTokensFollowTheZipfInclusionProbabilities) {
  const SynthModel m = zipf_model(small_shape(1, 16, 3), 1.1, 3);
  SynthOptions o;
  o.decode_tokens = 20000;
  o.seed = 3;
  const TraceStats s = compute_stats(generate_trace(m, o));
  const auto& f = m.layers[0].f;
  double fsum = 0;
  for (uint32_t e = 0; e < 16; ++e) {
    fsum += f[e];
    const double freq = static_cast<double>(s.layers[0].counts[e]) / 20000;
    EXPECT_NEAR(freq, f[e], 5 * std::sqrt(f[e] * (1 - f[e]) / 20000) + 1e-9) << "expert " << e;
  }
  EXPECT_NEAR(fsum, 3.0, 1e-12);
  // Popularity 1/r^alpha: the most popular expert's f over the least popular one's is 16^1.1 (none capped).
  const auto [mn, mx] = std::minmax_element(f.begin(), f.end());
  EXPECT_NEAR(*mx / *mn, std::pow(16.0, 1.1), 1e-9);
  // No temporal structure: repeat rate = sum f^2 / k (independent draws), within 5 sigma of per-pair noise.
  double indep = 0;
  for (double x : f) indep += x * x / 3;
  EXPECT_NEAR(s.layers[0].repeat_rate(), indep, 5 * std::sqrt(0.25 / (3 * 20000.0)));
}

// The keep-and-refill chain keeps pi stationary (docs/synth.md), so marginals and modelled pair
// probabilities hold for any keep. Tokens are autocorrelated, so the tolerance uses the standard error of
// 100 batch means (each batch 400 tokens, far longer than the chain's memory of a few tokens at keep 0.6).
TEST(Synth, KeepChainPreservesMarginalsAndPairProbabilities) {
  const uint32_t E = 10, k = 3;
  SynthModel m;
  m.shape = small_shape(1, E, k);
  m.layers.resize(1);
  SynthLayer& L = m.layers[0];
  L.f = inclusion_from_weights(std::vector<double>{5, 4, 3, 3, 2, 2, 1, 1, 0.5, 0.5}, k);
  L.pairs = {{1, 6, 0.8 * std::min(L.f[1], L.f[6])}, {0, 9, 0.2 * L.f[0] * L.f[9]}};
  IpfResult r = fit_max_entropy(L.f, k, L.pairs);
  ASSERT_TRUE(r.converged);
  L.units = r.units;
  L.keep = 0.6;
  SynthOptions o;
  o.decode_tokens = 40000;
  o.seed = 99;
  const Trace t = generate_trace(m, o);
  const int B = 100, per = 400;
  std::vector<std::vector<double>> batch(E + 2, std::vector<double>(B, 0.0));
  uint64_t repeat_hits = 0;
  for (size_t rix = 0; rix < t.records(); ++rix) {
    const auto ex = t.experts(rix);
    const int b = static_cast<int>(rix / per);
    bool has[10] = {};
    for (uint16_t e : ex) has[e] = true;
    for (uint32_t e = 0; e < E; ++e) batch[e][b] += has[e] ? 1.0 / per : 0.0;
    batch[E][b] += (has[1] && has[6]) ? 1.0 / per : 0.0;
    batch[E + 1][b] += (has[0] && has[9]) ? 1.0 / per : 0.0;
    if (rix > 0)
      for (uint16_t e : t.experts(rix - 1)) repeat_hits += has[e];
  }
  auto check = [&](const std::vector<double>& v, double target, const char* what) {
    double mean = 0, var = 0;
    for (double x : v) mean += x / B;
    for (double x : v) var += (x - mean) * (x - mean) / (B - 1);
    EXPECT_NEAR(mean, target, 5 * std::sqrt(var / B) + 1e-4) << what;
  };
  for (uint32_t e = 0; e < E; ++e) check(batch[e], L.f[e], "marginal");
  check(batch[E], L.pairs[0].f_ab, "pair (1,6)");
  check(batch[E + 1], L.pairs[1].f_ab, "pair (0,9)");
  // Each kept expert repeats, so the repeat rate is at least keep; refills add more.
  const double repeat = static_cast<double>(repeat_hits) / (39999.0 * k);
  EXPECT_GT(repeat, 0.6);
  EXPECT_LT(repeat, 0.8);
}

TEST(Synth, LogitsAgreeWithTheChosenExpertsAndWeightsAreTheirSoftmax) {
  SynthOptions o;
  o.decode_tokens = 50;
  o.prompt_tokens = 3;
  o.logits = true;
  o.seed = 8;
  const SynthModel m = zipf_model(small_shape(3, 16, 4), 1.0, 8);
  const Trace t = generate_trace(m, o);
  ASSERT_TRUE(t.has_logits());
  ASSERT_TRUE(t.has_weights());
  for (size_t r = 0; r < t.records(); ++r) {
    const auto ex = t.experts(r);
    const auto lg = t.logits(r);
    const auto w = t.weights(r);
    // Chosen logits strictly decreasing in rank order, and all above every other logit.
    for (size_t i = 1; i < ex.size(); ++i) ASSERT_GT(lg[ex[i - 1]], lg[ex[i]]);
    float other = -1e30f;
    for (uint32_t e = 0; e < 16; ++e)
      if (std::find(ex.begin(), ex.end(), e) == ex.end()) other = std::max(other, lg[e]);
    ASSERT_GT(lg[ex[ex.size() - 1]], other);
    double z = 0, sum = 0;
    for (uint16_t e : ex) z += std::exp(static_cast<double>(lg[e]) - lg[ex[0]]);
    for (size_t i = 0; i < ex.size(); ++i) {
      EXPECT_NEAR(w[i], std::exp(static_cast<double>(lg[ex[i]]) - lg[ex[0]]) / z, 1e-6);
      sum += w[i];
    }
    EXPECT_NEAR(sum, 1.0, 1e-6);
  }
  // Logits come from their own stream: the experts are those of the run without logits.
  o.logits = false;
  const Trace plain = generate_trace(m, o);
  EXPECT_TRUE(std::equal(plain.columns().experts.begin(), plain.columns().experts.end(),
                         t.columns().experts.begin(), t.columns().experts.end()));
}

Trace tiny_real() {
  // A 1-layer, 6-expert, top-2 "real" trace: expert 0 and 1 always together in half the tokens.
  TraceInfo info;
  info.model = "tiny";
  info.layers = 1;
  info.experts = 6;
  info.top_k = 2;
  TraceBuilder tb(info, false, false, "tiny");
  const uint32_t sets[8][2] = {{0, 1}, {2, 3}, {0, 1}, {4, 5}, {0, 1}, {2, 4}, {0, 1}, {3, 5}};
  for (uint32_t t = 0; t < 40; ++t) {
    const std::vector<uint32_t> e = {sets[t % 8][0], sets[t % 8][1]};
    tb.add(0, Phase::kDecode, t, 0, e, {}, {}, t + 1);
  }
  return std::move(tb).finish();
}

TEST(Synth, FitUsesTheRealMarginalsAndRescalesToAnotherTopK) {
  const Trace real = tiny_real();
  FitOptions fo;
  fo.temporal = false;
  SynthShape sh{"tiny", 1, 6, 2, {}};
  const SynthModel m = fit_model(real, sh, fo, 1, "tiny.csv");
  // f_e = c_e / T: 0 and 1 in 20 of 40 tokens; 2..5 in 10 each.
  EXPECT_NEAR(m.layers[0].f[0], 0.5, 1e-12);
  EXPECT_NEAR(m.layers[0].f[3], 0.25, 1e-12);
  // Excess co-activations c_ab - c_a c_b / T: (0,1) 20 - 10 = 10; (2,3), (2,4), (3,5), (4,5) 5 - 2.5 each.
  // Greedy disjoint by excess, ties by ids: (0,1), (2,3), (4,5).
  const auto& pairs = m.layers[0].pairs;
  ASSERT_EQ(pairs.size(), 3u);
  EXPECT_EQ(pairs[0].a, 0u);
  EXPECT_EQ(pairs[0].b, 1u);
  EXPECT_NEAR(pairs[0].f_ab, 0.98 * 0.5, 1e-12);  // real 0.5 = f_a: capped inside the polytope
  EXPECT_EQ(pairs[1].a, 2u);
  EXPECT_EQ(pairs[1].b, 3u);
  EXPECT_NEAR(pairs[1].f_ab, 5.0 / 40, 1e-12);
  EXPECT_EQ(pairs[2].a, 4u);
  EXPECT_EQ(pairs[2].b, 5u);
  EXPECT_EQ(m.provenance["generator"], "fit");
  EXPECT_EQ(m.provenance["source"], "tiny.csv");
  sh.top_k = 3;
  const SynthModel m3 = fit_model(real, sh, fo, 1, "tiny.csv");
  double sum = 0;
  for (double x : m3.layers[0].f) sum += x;
  EXPECT_NEAR(sum, 3.0, 1e-12);
  EXPECT_NEAR(m3.layers[0].f[0] / m3.layers[0].f[3], 2.0, 1e-12);  // proportions kept
  // With lifts kept, (0,1) at 0.735 and (2,3), (4,5) at 0.28 each cannot all hold with 3 experts per token
  // (either of the latter "both" states needs (0,1) not both: 0.56 > 0.265), so weak pairs are dropped
  // until the fit exists; the marginals still hold exactly.
  EXPECT_GE(m3.layers[0].dropped_pairs, 1u);
  EXPECT_EQ(m3.layers[0].pairs.size() + m3.layers[0].dropped_pairs, 3u);
  const CpInclusion inc = cp_inclusion(m3.layers[0].units, 3, 6);
  for (uint32_t e = 0; e < 6; ++e) EXPECT_NEAR(inc.expert[e], m3.layers[0].f[e], 1e-9);
  // Another expert count is a reshaped fit (tests below), not the same-shape path.
  sh.experts = 8;
  EXPECT_TRUE(fit_model(real, sh, fo, 1, "tiny.csv").provenance.contains("reshape"));
}

// A "real" trace with reuse at distances 2..8 only: each slot copies, with probability 0.6, an expert of
// the token 2..8 back, else takes a random expert. The old chain could only add reuse at distance 1; the
// reuse kernel must reproduce reuse further back, and a fitted trace must be bit-identical for a seed.
// `layers` layers x 32 experts, top-2, `tokens` decode tokens: each slot copies, with probability 0.6, an
// expert of the same layer's token 2..8 back, else takes a random expert.
Trace bursty_real(uint32_t layers, uint32_t tokens) {
  TraceInfo info;
  info.model = "bursty";
  info.layers = layers;
  info.experts = 32;
  info.top_k = 2;
  TraceBuilder b(info, false, false, "bursty");
  Rng rng(7);
  std::vector<std::vector<std::vector<uint32_t>>> toks(layers);
  for (uint32_t t = 0; t < tokens; ++t)
    for (uint32_t l = 0; l < layers; ++l) {
      std::vector<uint32_t> e;
      while (e.size() < 2) {
        uint32_t x = static_cast<uint32_t>(rng.below(32));
        if (t >= 8 && rng.uniform() < 0.6) x = toks[l][t - 2 - rng.below(7)][rng.below(2)];
        if (std::find(e.begin(), e.end(), x) == e.end()) e.push_back(x);
      }
      toks[l].push_back(e);
      b.add(0, Phase::kDecode, t, l, e, {}, {}, uint64_t{t} * layers + l + 1);
    }
  return std::move(b).finish();
}

// Fraction of a layer's token's experts used by one of that layer's tokens lo..hi back.
double reused_within(const Trace& t, uint32_t layer, uint32_t lo, uint32_t hi) {
  std::vector<std::vector<uint16_t>> seq;
  for (size_t r = 0; r < t.records(); ++r)
    if (t.layer(r) == layer) seq.emplace_back(t.experts(r).begin(), t.experts(r).end());
  uint64_t hits = 0, slots = 0;
  for (size_t i = hi; i < seq.size(); ++i)
    for (uint16_t e : seq[i]) {
      bool found = false;
      for (uint32_t d = lo; d <= hi; ++d)
        found = found || std::find(seq[i - d].begin(), seq[i - d].end(), e) != seq[i - d].end();
      hits += found, ++slots;
    }
  return static_cast<double>(hits) / static_cast<double>(slots);
}

TEST(Synth, FitReproducesReuseAtLongerDistances) {
  const Trace real = bursty_real(1, 2000);
  const SynthShape sh{"bursty", 1, 32, 2, {}};
  FitOptions fo;
  fo.pairs = 0;
  const SynthModel m = fit_model(real, sh, fo, 3, "bursty");
  ASSERT_TRUE(m.layers[0].has_reuse());
  EXPECT_TRUE(m.provenance["layers"][0].contains("reuse"));
  // No prompt token to fit: prompt tokens (if asked for) reuse like decode tokens.
  EXPECT_EQ(m.layers[0].reuse[0].copy, m.layers[0].reuse[1].copy);
  EXPECT_EQ(m.layers[0].reuse[0].novel, m.layers[0].reuse[1].novel);
  SynthOptions o;
  o.seed = 3;
  o.decode_tokens = 2000;
  const Trace syn = generate_trace(m, o);
  EXPECT_TRUE(same_columns(syn, generate_trace(fit_model(real, sh, fo, 3, "bursty"), o)));
  // Independent draws from the marginals reuse ~0.35 within 2..8 tokens; the real trace far more.
  const double real_2_8 = reused_within(real, 0, 2, 8), syn_2_8 = reused_within(syn, 0, 2, 8);
  EXPECT_GT(real_2_8, 0.6);
  EXPECT_NEAR(syn_2_8, real_2_8, 0.06);
  EXPECT_NEAR(reused_within(syn, 0, 1, 1), reused_within(real, 0, 1, 1), 0.06);
}

// A 2-layer "real" trace (24 experts, top-3, 20 prompt + 180 decode tokens) with skewed popularity,
// reuse at short distances and one co-activated pair per layer: enough structure for every part of a fit.
Trace structured_real(uint32_t layers = 2, uint32_t experts = 24, uint32_t k = 3) {
  TraceInfo info;
  info.model = "structured";
  info.layers = layers;
  info.experts = experts;
  info.top_k = k;
  TraceBuilder b(info, false, false, "structured");
  Rng rng(17);
  uint64_t line = 0;
  std::vector<std::vector<std::vector<uint32_t>>> toks(layers);
  const uint32_t prompt = 20, total = 200;
  auto token = [&](uint32_t l, uint32_t t) {
    std::vector<uint32_t> e;
    while (e.size() < k) {
      // Popularity ~ 1/(rank+1)^1.2 by rejection; ranks shifted per layer.
      uint32_t x = 0;
      do x = static_cast<uint32_t>(rng.below(experts));
      while (rng.uniform() > std::pow(1.0 + x, -1.2));
      x = (x + 5 * l) % experts;
      if (t >= 2 && rng.uniform() < 0.4) {
        const auto& src = toks[l][t - 1 - rng.below(std::min<uint32_t>(t, 6))];
        x = src[rng.below(src.size())];
      }
      const uint32_t partner = (7 + l) % experts;
      auto has = [&](uint32_t y) { return std::find(e.begin(), e.end(), y) != e.end(); };
      if (has(x)) continue;
      if (x == (1 + l) % experts && e.size() + 2 <= k && !has(partner) && rng.uniform() < 0.7)
        e.push_back(partner);
      e.push_back(x);
    }
    toks[l].push_back(e);
    return e;
  };
  // Canonical order: prefill by (layer, step), then decode by (step, layer).
  for (uint32_t l = 0; l < layers; ++l)
    for (uint32_t t = 0; t < prompt; ++t) b.add(0, Phase::kPrefill, t, l, token(l, t), {}, {}, ++line);
  for (uint32_t t = prompt; t < total; ++t)
    for (uint32_t l = 0; l < layers; ++l)
      b.add(0, Phase::kDecode, t - prompt, l, token(l, t), {}, {}, ++line);
  return std::move(b).finish();
}

uint64_t fnv(uint64_t h, const void* p, size_t n) {
  const auto* c = static_cast<const unsigned char*>(p);
  for (size_t i = 0; i < n; ++i) h = (h ^ c[i]) * 1099511628211ull;
  return h;
}

// Same-shape fits must stay exactly what they were before reshaped fits existed: the hash of the experts
// (and seq/phase/step/layer) columns of a fit of structured_real(), recorded from the code before the
// reshape path was added (integer columns only: float logits could differ in the last bit across libms).
TEST(Synth, SameShapeFitIsUnchangedByTheReshapePath) {
  const Trace real = structured_real();
  for (uint32_t k : {3u, 4u}) {
    const SynthModel m = fit_model(real, SynthShape{"structured", 2, 24, k, {}}, FitOptions{}, 9, "s.csv");
    EXPECT_FALSE(m.provenance.contains("reshape"));
    SynthOptions o;
    o.seed = 9;
    o.prompt_tokens = 10;
    o.decode_tokens = 300;
    o.sequences = 2;
    o.logits = true;
    const Trace t = generate_trace(m, o);
    const auto& c = t.columns();
    uint64_t h = 1469598103934665603ull;
    h = fnv(h, c.seq.data(), c.seq.size_bytes());
    h = fnv(h, c.phase.data(), c.phase.size_bytes());
    h = fnv(h, c.step.data(), c.step.size_bytes());
    h = fnv(h, c.layer.data(), c.layer.size_bytes());
    h = fnv(h, c.experts.data(), c.experts.size_bytes());
    EXPECT_EQ(h, k == 3 ? 17217754673663008317ull : 16022369631821283778ull) << "top-" << k;
  }
}

// Share of the selections taken by the top `frac` of experts (counts or inclusion probabilities).
double top_share(std::vector<double> p, double frac) {
  std::sort(p.begin(), p.end(), std::greater<>());
  const auto n = static_cast<size_t>(std::lround(frac * static_cast<double>(p.size())));
  double top = 0, all = 0;
  for (size_t i = 0; i < p.size(); ++i) (i < n ? top : all) += p[i];
  return top / (top + all);
}

std::vector<double> as_double(const std::vector<uint64_t>& c) {
  return {c.begin(), c.end()};
}

TEST(Synth, ReshapeMapsLayersProportionally) {
  EXPECT_EQ(reshape_source_layer(0, 24, 48), 0u);
  EXPECT_EQ(reshape_source_layer(23, 24, 48), 46u);
  EXPECT_EQ(reshape_source_layer(31, 32, 48), 47u);  // 46.5 rounds half up
  EXPECT_EQ(reshape_source_layer(1, 32, 48), 2u);    // 1.5 -> 2
  EXPECT_EQ(reshape_source_layer(31, 32, 30), 29u);  // 29.06
  EXPECT_EQ(reshape_source_layer(63, 64, 30), 29u);  // 29.5 would be past the end: clamped
  EXPECT_EQ(reshape_source_layer(5, 10, 1), 0u);
}

// A "real" trace of 4 layers x 64 experts, top-4 with Zipf skew (2000 tokens), fitted to 2 layers x 16
// experts, top-2: per layer the rank-frequency curve carries over by relative rank.
TEST(Synth, ReshapedFitCarriesTheRankFrequencyCurve) {
  SynthOptions ro;
  ro.seed = 21;
  ro.decode_tokens = 2000;
  const Trace real = generate_trace(zipf_model(small_shape(4, 64, 4), 0.8, 21), ro);
  const TraceStats rs = compute_stats(real);
  const SynthShape sh{"small16", 2, 16, 2, {7, 7}};
  const SynthModel m = fit_model(real, sh, FitOptions{}, 4, "zipf64.mtr");
  ASSERT_TRUE(m.provenance.contains("reshape"));
  const Json& rp = m.provenance["reshape"];
  EXPECT_EQ(rp["from"]["experts"], 64);
  EXPECT_EQ(rp["from"]["layers"], 4);
  EXPECT_EQ(rp["from"]["top_k"], 4);
  EXPECT_EQ(rp["to"]["model"], "small16");
  EXPECT_EQ(rp["to"]["experts"], 16);
  EXPECT_EQ(rp["layer_map"], Json::array({0, 2}));
  SynthOptions o;
  o.seed = 4;
  o.decode_tokens = 6000;
  const Trace syn = generate_trace(m, o);
  EXPECT_EQ(syn.info().experts, 16u);
  EXPECT_EQ(syn.info().top_k, 2u);
  EXPECT_EQ(syn.info().expert_bytes, (std::vector<uint64_t>{7, 7}));
  EXPECT_TRUE(syn.info().synthetic);
  EXPECT_EQ(syn.info().provenance["reshape"]["layer_map"], Json::array({0, 2}));
  const TraceStats ss = compute_stats(syn);
  for (uint32_t l = 0; l < 2; ++l) {
    const std::vector<double> src = as_double(rs.layers[2 * l].counts);
    const std::vector<double>& f = m.layers[l].f;
    double sum = 0;
    for (double x : f) {
      sum += x;
      ASSERT_LT(x, kMaxInclusion);  // none capped here, so the shares are exact
    }
    EXPECT_NEAR(sum, 2.0, 1e-12);
    // At x = j / 16 (a quarter = 16 of 64 real experts, 4 of 16) the top share is the real one exactly.
    for (double x : {0.125, 0.25, 0.5})
      EXPECT_NEAR(top_share(f, x), top_share(src, x), 1e-9) << "layer " << l << " top " << x;
    // The Gini of a coarser grid is a little lower (the curve is linear within a model expert).
    const double g_src = popularity_gini(src), g_fit = popularity_gini(f);
    EXPECT_GT(g_src, 0.3);
    EXPECT_NEAR(g_fit, g_src, 0.03) << "layer " << l;
    EXPECT_NEAR(m.provenance["layers"][l]["reshape"]["gini_source"].get<double>(), g_src, 1e-12);
    // The generated trace follows the fitted curve (6000 tokens: sampling error of the shares ~0.01).
    const std::vector<double> got = as_double(ss.layers[l].counts);
    EXPECT_NEAR(popularity_gini(got), g_src, 0.04) << "layer " << l;
    EXPECT_NEAR(top_share(got, 0.25), top_share(src, 0.25), 0.04) << "layer " << l;
  }
  // Deterministic for a seed (fit and generation), another seed differs.
  EXPECT_TRUE(same_columns(syn, generate_trace(fit_model(real, sh, FitOptions{}, 4, "zipf64.mtr"), o)));
  o.seed = 5;
  EXPECT_FALSE(same_columns(syn, generate_trace(fit_model(real, sh, FitOptions{}, 5, "zipf64.mtr"), o)));
}

// Real pairs map by relative rank with their phi coefficient; more experts than the real trace also work
// (a real expert's share is split over the model experts of its relative rank).
TEST(Synth, ReshapedFitCarriesPairStrengthAsPhi) {
  const Trace real = structured_real();  // layer 0: expert 7 joins expert 1 in 70% of its tokens
  const TraceStats rs = compute_stats(real);
  const auto pc = pair_counts(real, 0);
  const double T = static_cast<double>(rs.layers[0].tokens);
  FitOptions fo;
  fo.temporal = false;
  for (const uint32_t experts : {12u, 48u}) {
    const SynthModel m = fit_model(real, SynthShape{"p", 1, experts, 3, {}}, fo, 2, "s.csv");
    // --pairs 8 on 24 experts -> 4 on 12, 16 on 48 (the same share of the experts in pairs).
    EXPECT_EQ(m.provenance["reshape"]["pairs_per_layer"], experts / 3);
    const SynthLayer& L = m.layers[0];
    const Json& prov = m.provenance["layers"][0]["reshape"]["pairs"];
    ASSERT_FALSE(L.pairs.empty());
    ASSERT_EQ(prov.size(), L.pairs.size());
    double strongest = 0;
    for (size_t i = 0; i < L.pairs.size(); ++i) {
      // The recorded phi is the real pair's, from the real counts.
      const uint32_t a = prov[i]["source"][0], b = prov[i]["source"][1];
      const double fa = rs.layers[0].counts[a] / T, fb = rs.layers[0].counts[b] / T;
      const double phi_src = (pair_count(pc, a, b) / T - fa * fb) / std::sqrt(fa * (1 - fa) * fb * (1 - fb));
      EXPECT_NEAR(prov[i]["phi"].get<double>(), phi_src, 1e-12);
      strongest = std::max(strongest, phi_src);
      // The modelled pair has that phi, unless capped inside the polytope.
      const PairTarget& p = L.pairs[i];
      EXPECT_EQ(prov[i]["to"][0], p.a);
      const double ga = L.f[p.a], gb = L.f[p.b];
      const double phi = (p.f_ab - ga * gb) / std::sqrt(ga * (1 - ga) * gb * (1 - gb));
      if (p.f_ab < 0.98 * std::min(ga, gb) - 1e-12) {
        EXPECT_NEAR(phi, phi_src, 1e-9) << experts << " pair " << i;
      } else {
        EXPECT_LT(phi, phi_src + 1e-12);
      }
    }
    // On 48 experts no two real experts share a model expert, so the strongest real pair (phi 0.29) is kept.
    EXPECT_GT(strongest, experts == 48 ? 0.28 : 0.1);
    // Disjoint pairs, and the fitted distribution honours the marginals.
    std::vector<int> uses(experts, 0);
    for (const PairTarget& q : L.pairs) ++uses[q.a], ++uses[q.b];
    EXPECT_LE(*std::max_element(uses.begin(), uses.end()), 1);
    const CpInclusion inc = cp_inclusion(L.units, 3, experts);
    for (uint32_t e = 0; e < experts; ++e) EXPECT_NEAR(inc.expert[e], L.f[e], 1e-6);
  }
}

// The reuse kernels (copy probability per slot and distance) are those of the same-shape fit of the source
// layer: a trace reusing at distances 2..8 (top-2 of 32) fitted to 64 experts, top-4 (the same top-k /
// experts, so the same reuse from independent draws) reuses as much within 2..8 tokens per slot.
TEST(Synth, ReshapedFitCarriesReuseScaledToTheNewTopK) {
  const Trace real = bursty_real(2, 1500);
  FitOptions fo;
  fo.pairs = 0;
  const SynthModel m = fit_model(real, SynthShape{"wide", 3, 64, 4, {}}, fo, 3, "bursty");
  EXPECT_EQ(m.provenance["reshape"]["layer_map"], Json::array({0, 1, 1}));
  const SynthModel same = fit_model(real, SynthShape{"bursty", 2, 32, 2, {}}, fo, 3, "bursty");
  for (uint32_t l = 0; l < 3; ++l)
    for (int ph = 0; ph < 2; ++ph) {
      EXPECT_EQ(m.layers[l].reuse[ph].copy, same.layers[l == 0 ? 0 : 1].reuse[ph].copy);
      EXPECT_EQ(m.layers[l].reuse[ph].novel, same.layers[l == 0 ? 0 : 1].reuse[ph].novel);
    }
  SynthOptions o;
  o.seed = 3;
  o.decode_tokens = 1500;
  const Trace syn = generate_trace(m, o);
  for (uint32_t l = 0; l < 3; ++l) {
    const uint32_t src = l == 0 ? 0 : 1;
    EXPECT_GT(reused_within(real, src, 2, 8), 0.6);
    EXPECT_NEAR(reused_within(syn, l, 2, 8), reused_within(real, src, 2, 8), 0.06) << "layer " << l;
    EXPECT_NEAR(reused_within(syn, l, 1, 1), reused_within(real, src, 1, 1), 0.06) << "layer " << l;
  }
}

// A curve steeper than the model's top-k allows (the top expert would need f >= 1) is capped, with a warning.
TEST(Synth, ReshapedFitWarnsWhenTheCurveIsCapped) {
  const Trace real = structured_real();  // top quarter of 24 experts: well over half of the selections
  clear_warnings();
  set_warnings_printed(false);
  const FitOptions fo;
  fit_model(real, SynthShape{"wide", 2, 48, 3, {}}, fo, 1, "s.csv");  // no cap needed
  EXPECT_TRUE(warnings().empty());
  const SynthModel m = fit_model(real, SynthShape{"narrow", 2, 4, 3, {}}, fo, 1, "s.csv");  // f <= 0.999 of 3
  ASSERT_EQ(warnings().size(), 1u);
  EXPECT_NE(warnings()[0].find("capped"), std::string::npos) << warnings()[0];
  EXPECT_LT(m.provenance["layers"][0]["reshape"]["top_quarter_share_fitted"].get<double>(),
            m.provenance["layers"][0]["reshape"]["top_quarter_share_source"].get<double>() - 0.02);
  clear_warnings();
  set_warnings_printed(true);
}

TEST(Synth, ReshapedFitRejectsBadShapes) {
  const Trace real = structured_real();
  const FitOptions fo;
  EXPECT_THROW(fit_model(real, SynthShape{"m", 2, 8, 8, {}}, fo, 1, "s"), Error);  // top_k = experts
  EXPECT_THROW(fit_model(real, SynthShape{"m", 2, 8, 9, {}}, fo, 1, "s"), Error);  // top_k > experts
  EXPECT_THROW(fit_model(real, SynthShape{"m", 2, 8, 0, {}}, fo, 1, "s"), Error);  // top_k = 0
  EXPECT_THROW(fit_model(real, SynthShape{"m", 0, 8, 2, {}}, fo, 1, "s"), Error);  // no layer
  EXPECT_THROW(fit_model(real, SynthShape{"m", 2, 0, 2, {}}, fo, 1, "s"), Error);  // no expert
  try {
    fit_model(real, SynthShape{"m", 2, 8, 8, {}}, fo, 1, "s");
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("top_k"), std::string::npos) << e.what();
  }
  // A real layer with no record that a model layer maps onto: the error names both layers.
  TraceInfo info;
  info.model = "gap";
  info.layers = 2;
  info.experts = 8;
  info.top_k = 2;
  TraceBuilder b(info, false, false, "gap");
  for (uint32_t t = 0; t < 20; ++t)
    b.add(0, Phase::kDecode, t, 0, std::vector<uint32_t>{t % 8, (t + 3) % 8}, {}, {}, t + 1);
  const Trace gap = std::move(b).finish();
  try {
    fit_model(gap, SynthShape{"m", 4, 6, 2, {}}, fo, 1, "gap.csv");
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    const std::string w = e.what();
    EXPECT_NE(w.find("gap.csv has no record at layer 1"), std::string::npos) << w;
    EXPECT_NE(w.find("model's layer 1"), std::string::npos) << w;  // round(1 * 2 / 4) = 1, half up
  }
}

TEST(Synth, RejectsBadParameters) {
  EXPECT_THROW(zipf_model(small_shape(), -1.0, 1), Error);
  EXPECT_THROW(zipf_model(small_shape(2, 4, 4), 1.0, 1), Error);
  SynthOptions o;
  EXPECT_THROW(generate_trace(zipf_model(small_shape(), 1.0, 1), o), Error);  // no tokens
}

// The CLI end to end: synth writes a labelled .mtr, stats reads it back; a failed synth leaves no file.
std::string run_cli(const std::string& args, int* status) {
  const std::string cmd =
      "MOESIM_DATA=" + test::bundled_data("") + " " + MOESIM_CLI_PATH + " " + args + " 2>&1";
  FILE* p = popen(cmd.c_str(), "r");
  std::string out;
  char buf[4096];
  while (p && fgets(buf, sizeof buf, p)) out += buf;
  *status = p ? pclose(p) : -1;
  return out;
}

TEST(SynthCli, SynthThenStatsJson) {
  const auto dir =
      std::filesystem::temp_directory_path() / ("moesim_synth_cli_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::string out = (dir / "z.mtr").string();
  int st = 0;
  std::string log = run_cli(
      "trace synth --model olmoe-1b-7b --zipf 0.9 --tokens 20 --prompt-tokens 4 --seed 3 --logits -o " + out,
      &st);
  ASSERT_EQ(st, 0) << log;
  EXPECT_NE(log.find("SYNTHETIC"), std::string::npos);
  const std::string json = run_cli("trace stats --json --top-pairs 2 " + out, &st);
  ASSERT_EQ(st, 0) << json;
  const Json j = Json::parse(json);
  EXPECT_EQ(j.begin().key(), "header");
  EXPECT_EQ(j["header"]["command"], "trace stats");
  EXPECT_EQ(j["trace"]["synthetic"], true);
  EXPECT_EQ(j["trace"]["provenance"]["generator"], "zipf");
  EXPECT_EQ(j["trace"]["decode_tokens"], 20);
  EXPECT_EQ(j["layers"][0]["top_pairs"].size(), 2u);
  const std::string text = run_cli("trace stats " + out, &st);
  EXPECT_NE(text.find("(SYNTHETIC)"), std::string::npos);
  // Bad alpha: error, non-zero exit, no output file.
  const std::string bad = (dir / "bad.mtr").string();
  log = run_cli("trace synth --model olmoe-1b-7b --zipf -2 --tokens 5 --seed 1 -o " + bad, &st);
  EXPECT_NE(st, 0);
  EXPECT_NE(log.find("alpha"), std::string::npos);
  EXPECT_FALSE(std::filesystem::exists(bad));
  log = run_cli("trace synth --tokens 5 --seed 1 -o " + bad, &st);  // neither --zipf nor --fit
  EXPECT_NE(st, 0);
  EXPECT_NE(log.find("exactly one of"), std::string::npos);
  // Out-of-range options: a usage error naming the option, before any work, no output file.
  const std::string real = test::test_data("traces/tiny.route.csv");
  for (const auto& [args, option] : std::vector<std::pair<std::string, std::string>>{
           {"--fit " + real + " --tokens 0 --seed 1", "--tokens"},
           {"--fit " + real + " --tokens 5 --sequences 0 --seed 1", "--sequences"},
           {"--fit " + real + " --tokens 5 --pairs 5000 --seed 1", "--pairs"},
           {"--fit " + real + " --trace " + real + " --tokens 5 --seed 1", "--trace"}}) {
    log = run_cli("trace synth " + args + " -o " + bad, &st);
    EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 2) << args;  // a usage error
    EXPECT_NE(log.find("moesim: error: "), std::string::npos) << log;
    EXPECT_NE(log.find(option), std::string::npos) << log;
    EXPECT_FALSE(std::filesystem::exists(bad));
  }
  // The trace to fit may also be given as --trace or positionally, like every trace-reading command.
  for (const std::string& input : {"--trace " + real, real}) {
    log = run_cli("trace synth " + input + " --tokens 5 --seed 1 -o " + out, &st);
    EXPECT_EQ(st, 0) << log;
    EXPECT_NE(log.find("(fit, seed 1)"), std::string::npos) << log;
  }
  // Another model's shape: a reshaped fit, said on stderr and in the provenance, labelled synthetic.
  log = run_cli("trace synth --fit " + real + " --model mixtral-8x7b --tokens 5 --seed 1 --logits -o " + out,
                &st);
  ASSERT_EQ(st, 0) << log;
  EXPECT_NE(log.find("RESHAPED from"), std::string::npos) << log;
  const Json rj = Json::parse(run_cli("trace stats --json " + out, &st));
  EXPECT_EQ(rj["trace"]["synthetic"], true);
  EXPECT_EQ(rj["trace"]["provenance"]["reshape"]["from"]["experts"], 4);
  EXPECT_EQ(rj["trace"]["provenance"]["reshape"]["to"]["experts"], 8);
  EXPECT_EQ(rj["trace"]["provenance"]["reshape"]["to"]["layers"], 32);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace moesim::traces
