#include "traces/logits_for.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "base/error.h"
#include "base/rng.h"

namespace moesim::traces {
namespace {

// u in (0, 1), never 0 or 1, so the logs below are finite.
double open_uniform(Rng& rng) { return (static_cast<double>(rng.next() >> 11) + 0.5) * 0x1.0p-53; }

}  // namespace

Trace attach_synthetic_logits(const Trace& real, uint64_t seed, const std::string& source) {
  const TraceInfo& in = real.info();
  if (real.records() == 0) throw Error(source + ": the trace has no records to attach logits to");
  if (real.has_logits())
    throw Error(source + ": the trace already has router logits; --logits-for would replace them with synthetic "
                         "ones (use the trace as it is)");
  const uint32_t E = in.experts, K = in.top_k, L = in.layers;
  // f_l(e): the share of layer l's tokens that chose e.
  std::vector<double> count(size_t{L} * E, 0.0), tokens(L, 0.0);
  for (size_t r = 0; r < real.records(); ++r) {
    tokens[real.layer(r)] += 1;
    for (uint16_t e : real.experts(r)) count[size_t{real.layer(r)} * E + e] += 1;
  }
  std::vector<double> logf(count.size());
  for (uint32_t l = 0; l < L; ++l)
    for (uint32_t e = 0; e < E; ++e)
      logf[size_t{l} * E + e] =
          tokens[l] > 0 ? std::log(std::max(count[size_t{l} * E + e], 0.5) / tokens[l]) : 0.0;

  TraceInfo info = in;
  info.synthetic = true;
  Json prov = Json::object();
  prov["generator"] = "logits-for";
  prov["synthetic_part"] = "logits";
  prov["routing_source"] = source;
  prov["source_provenance"] = in.provenance;
  prov["seed"] = seed;
  prov["weights"] = real.has_weights() ? "recorded" : "softmax of the synthetic logits over the top-k";
  info.provenance = prov;
  TraceBuilder tb(info, true, true, source + " (with synthetic logits)");

  Rng rng = Rng(seed).split(0x10617);
  std::vector<float> z(E), w(K);
  std::vector<uint32_t> ids(K);
  std::vector<uint8_t> chosen(E, 0);
  for (size_t r = 0; r < real.records(); ++r) {
    const auto S = real.experts(r);
    const uint32_t l = real.layer(r);
    for (uint32_t i = 0; i < K; ++i) {
      ids[i] = S[i];
      chosen[S[i]] = 1;
    }
    double mx = -1e300;
    for (uint32_t e = 0; e < E; ++e) {
      if (chosen[e]) continue;
      z[e] = static_cast<float>(logf[size_t{l} * E + e] - std::log(-std::log(open_uniform(rng))));
      mx = std::max(mx, static_cast<double>(z[e]));
    }
    if (mx == -1e300) mx = 0;  // top_k == experts
    const auto rw = real.has_weights() ? real.weights(r) : std::span<const float>{};
    bool use_w = !rw.empty();
    for (uint32_t i = 0; i < K && use_w; ++i) use_w = std::isfinite(rw[i]) && rw[i] > 0;
    float below = static_cast<float>(mx);
    if (use_w) {
      const double gap = -std::log(open_uniform(rng)) / static_cast<double>(K);
      const double c = mx + gap - std::log(static_cast<double>(rw[K - 1]));
      for (uint32_t i = K; i-- > 0;) {
        float v = static_cast<float>(std::log(static_cast<double>(rw[i])) + c);
        // Strictly above every other expert, and never below the next rank (float rounding).
        if (i == K - 1 && !(v > below)) v = std::nextafter(below, 1e30f);
        if (i < K - 1) v = std::max(v, z[S[i + 1]]);
        z[S[i]] = v;
      }
    } else {
      for (uint32_t i = K; i-- > 0;) {
        float v = static_cast<float>(below - std::log(open_uniform(rng)) / static_cast<double>(i + 1));
        if (!(v > below)) v = std::nextafter(below, 1e30f);
        z[S[i]] = v;
        below = v;
      }
    }
    if (!rw.empty()) {
      std::copy(rw.begin(), rw.end(), w.begin());
    } else {
      double sum = 0;
      for (uint32_t i = 0; i < K; ++i) sum += std::exp(static_cast<double>(z[S[i]]) - z[S[0]]);
      for (uint32_t i = 0; i < K; ++i) w[i] = static_cast<float>(std::exp(static_cast<double>(z[S[i]]) - z[S[0]]) / sum);
    }
    for (uint32_t i = 0; i < K; ++i) chosen[S[i]] = 0;
    tb.add(real.seq(r), real.phase(r), real.step(r), l, ids, w, z, r + 1);
  }
  return std::move(tb).finish();
}

}  // namespace moesim::traces
