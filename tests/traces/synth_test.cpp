// Synthetic generators: determinism, labelling, marginals of the keep-and-refill chain, logits.
// Fidelity against the bundled real traces is in synth_longtest.cpp.
#include "traces/synth.h"

#include <sys/wait.h>

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>

#include "core/error.h"
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
  sh.experts = 8;
  EXPECT_THROW(fit_model(real, sh, fo, 1, "tiny.csv"), Error);
}

// A "real" trace with reuse at distances 2..8 only: each slot copies, with probability 0.6, an expert of
// the token 2..8 back, else takes a random expert. The old chain could only add reuse at distance 1; the
// reuse kernel must reproduce reuse further back, and a fitted trace must be bit-identical for a seed.
TEST(Synth, FitReproducesReuseAtLongerDistances) {
  TraceInfo info;
  info.model = "bursty";
  info.layers = 1;
  info.experts = 32;
  info.top_k = 2;
  TraceBuilder b(info, false, false, "bursty");
  Rng rng(7);
  std::vector<std::vector<uint32_t>> toks;
  for (uint32_t t = 0; t < 2000; ++t) {
    std::vector<uint32_t> e;
    while (e.size() < 2) {
      uint32_t x = static_cast<uint32_t>(rng.below(32));
      if (t >= 8 && rng.uniform() < 0.6) {
        const auto& src = toks[t - 2 - rng.below(7)];
        x = src[rng.below(2)];
      }
      if (std::find(e.begin(), e.end(), x) == e.end()) e.push_back(x);
    }
    toks.push_back(e);
    b.add(0, Phase::kDecode, t, 0, e, {}, {}, t + 1);
  }
  const Trace real = std::move(b).finish();
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
  // Fraction of a token's experts used by one of the tokens lo..hi back.
  auto reused = [](const Trace& t, uint32_t lo, uint32_t hi) {
    uint64_t hits = 0, slots = 0;
    for (size_t r = hi; r < t.records(); ++r) {
      for (uint16_t e : t.experts(r)) {
        bool found = false;
        for (uint32_t d = lo; d <= hi; ++d) {
          const auto before = t.experts(r - d);
          found = found || std::find(before.begin(), before.end(), e) != before.end();
        }
        hits += found;
        ++slots;
      }
    }
    return static_cast<double>(hits) / static_cast<double>(slots);
  };
  // Independent draws from the marginals reuse ~0.35 within 2..8 tokens; the real trace far more.
  const double real_2_8 = reused(real, 2, 8), syn_2_8 = reused(syn, 2, 8);
  EXPECT_GT(real_2_8, 0.6);
  EXPECT_NEAR(syn_2_8, real_2_8, 0.06);
  EXPECT_NEAR(reused(syn, 1, 1), reused(real, 1, 1), 0.06);
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
      std::string("MOESIM_DATA=") + MOESIM_SOURCE_DIR + "/data " + MOESIM_CLI_PATH + " " + args + " 2>&1";
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
  const std::string real = std::string(MOESIM_SOURCE_DIR) + "/tests/data/traces/tiny.route.csv";
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
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace moesim::traces
