#include "traces/buddy_profile.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "base/error.h"
#include "base/json_schema.h"

namespace moesim::traces {

void topk_probabilities(std::span<const uint16_t> ids, std::span<const float> w, std::span<const float> z,
                        std::vector<double>& p) {
  const size_t K = ids.size();
  p.assign(K, 1.0 / static_cast<double>(K));
  double sum = 0;
  if (!w.empty()) {
    for (size_t i = 0; i < K; ++i) sum += p[i] = std::max(0.0, static_cast<double>(w[i]));
  } else if (!z.empty()) {
    double zmax = z[ids[0]];
    for (uint16_t e : ids) zmax = std::max(zmax, static_cast<double>(z[e]));
    for (size_t i = 0; i < K; ++i) sum += p[i] = std::exp(z[ids[i]] - zmax);
  } else {
    return;
  }
  if (!(sum > 0) || !std::isfinite(sum)) {
    p.assign(K, 1.0 / static_cast<double>(K));
    return;
  }
  for (double& x : p) x /= sum;
}

double token_activating_entropy(const std::vector<double>& p) {
  if (p.size() < 2) return 0.0;
  double h = 0;
  for (double x : p)
    if (x > 0) h -= x * std::log(x);
  return h / std::log(static_cast<double>(p.size()));
}

BuddyProfile build_buddy_profile(const Trace& t, const BuddyOptions& opt, const std::string& source) {
  if (!(opt.alpha > 0 && opt.alpha <= 1)) throw Error("buddy profile: alpha must be in (0, 1]");
  if (opt.k_max == 0) throw Error("buddy profile: k_max must be at least 1");
  if (!(opt.epsilon >= 0) || !std::isfinite(opt.epsilon)) throw Error("buddy profile: epsilon must be >= 0");
  if (t.records() == 0) throw Error(source + ": the profiling trace has no records");
  const uint32_t L = t.info().layers, E = t.info().experts, K = t.info().top_k;
  BuddyProfile prof;
  prof.layers = L;
  prof.experts = E;
  prof.top_k = K;
  prof.options = opt;
  prof.source = source;
  prof.layer.resize(L);
  std::vector<std::vector<double>> tae(L);
  for (auto& bl : prof.layer) {
    bl.activations.assign(E, 0);
    bl.coact_bin.assign(E, std::vector<uint64_t>(E, 0));
    bl.coact_prob.assign(E, std::vector<double>(E, 0.0));
  }
  std::vector<double> p;
  for (size_t r = 0; r < t.records(); ++r) {
    BuddyLayer& bl = prof.layer[t.layer(r)];
    const auto ids = t.experts(r);
    topk_probabilities(ids, t.has_weights() ? t.weights(r) : std::span<const float>{},
                       t.has_logits() ? t.logits(r) : std::span<const float>{}, p);
    tae[t.layer(r)].push_back(token_activating_entropy(p));
    for (uint32_t a = 0; a < K; ++a) {
      ++bl.activations[ids[a]];
      for (uint32_t b = 0; b < K; ++b) {
        if (a == b) continue;
        ++bl.coact_bin[ids[a]][ids[b]];
        bl.coact_prob[ids[a]][ids[b]] += std::min(p[a], p[b]);
      }
    }
  }
  std::vector<uint16_t> order(E);
  std::vector<double> q(E);
  for (uint32_t l = 0; l < L; ++l) {
    BuddyLayer& bl = prof.layer[l];
    bl.buddies.assign(E, {});
    bl.buddy_q.assign(E, {});
    for (uint32_t i = 0; i < E; ++i) {
      if (bl.activations[i] == 0 || E < 2) continue;
      double sum = 0;
      for (uint32_t j = 0; j < E; ++j) {
        q[j] = j == i ? 0.0
                      : (opt.probability_weighted ? bl.coact_prob[i][j] : static_cast<double>(bl.coact_bin[i][j])) +
                            opt.epsilon;
        sum += q[j];
      }
      if (!(sum > 0)) continue;
      for (double& x : q) x /= sum;
      std::iota(order.begin(), order.end(), uint16_t{0});
      std::stable_sort(order.begin(), order.end(), [&](uint16_t a, uint16_t b) { return q[a] > q[b]; });
      double cum = 0;
      for (uint32_t n = 0; n < E - 1 && bl.buddies[i].size() < opt.k_max; ++n) {
        const uint16_t j = order[n];
        if (j == i) continue;
        bl.buddies[i].push_back(j);
        bl.buddy_q[i].push_back(q[j]);
        cum += q[j];
        if (cum >= opt.alpha) break;
      }
    }
    auto& v = tae[l];
    std::sort(v.begin(), v.end());
    bl.tae_percentiles.assign(101, 0.0);
    if (!v.empty())
      for (int pc = 0; pc <= 100; ++pc) {
        const double pos = pc / 100.0 * static_cast<double>(v.size() - 1);
        const auto lo = static_cast<size_t>(pos);
        const size_t hi = std::min(lo + 1, v.size() - 1);
        bl.tae_percentiles[pc] = v[lo] + (v[hi] - v[lo]) * (pos - static_cast<double>(lo));
      }
  }
  return prof;
}

Json to_json(const BuddyProfile& p) {
  Json j;
  j["format"] = "moesim buddy profile v1";
  j["source"] = p.source;
  j["layers"] = p.layers;
  j["experts"] = p.experts;
  j["top_k"] = p.top_k;
  j["alpha"] = p.options.alpha;
  j["k_max"] = p.options.k_max;
  j["epsilon"] = p.options.epsilon;
  j["weighting"] = p.options.probability_weighted ? "probability" : "binary";
  Json layers = Json::array();
  for (const auto& bl : p.layer) {
    Json lj;
    lj["activations"] = bl.activations;
    lj["buddies"] = bl.buddies;
    lj["buddy_q"] = bl.buddy_q;
    lj["tae_percentiles"] = bl.tae_percentiles;
    // Co-activations, sparse: [i, j, binary, probability-weighted] for i < j with any co-activation.
    Json co = Json::array();
    for (size_t i = 0; i < bl.coact_bin.size(); ++i)
      for (size_t k = i + 1; k < bl.coact_bin.size(); ++k)
        if (bl.coact_bin[i][k]) co.push_back(Json::array({i, k, bl.coact_bin[i][k], bl.coact_prob[i][k]}));
    lj["coactivations"] = co;
    layers.push_back(lj);
  }
  j["per_layer"] = layers;
  return j;
}

BuddyProfile buddy_profile_from_json(const Json& j, const std::string& origin) {
  if (!j.is_object() || !j.contains("format") || j["format"] != "moesim buddy profile v1")
    throw Error(origin + ": not a buddy profile (write one with `moesim buddy profile --trace T -o FILE`)");
  const JsonAt root(j, origin);
  root.only_keys({"format", "source", "layers", "experts", "top_k", "alpha", "k_max", "epsilon", "weighting",
                  "per_layer"});
  if (auto s = root.find("source")) (void)s->string();
  for (const char* k : {"alpha", "epsilon"})
    if (auto v = root.find(k)) (void)v->number();
  if (auto v = root.find("k_max")) (void)v->integer();
  if (auto v = root.find("weighting")) (void)v->string_of({"probability", "binary"});
  BuddyProfile p;
  p.layers = static_cast<uint32_t>(root["layers"].integer(1, 65535));
  p.experts = static_cast<uint32_t>(root["experts"].integer(1, 65535));
  p.top_k = static_cast<uint32_t>(root["top_k"].integer(1, p.experts));
  const JsonAt layers = root["per_layer"];
  if (layers.size() != p.layers) layers.expected("an array of " + std::to_string(p.layers) + " layers (\"layers\")");
  for (uint32_t l = 0; l < p.layers; ++l) {
    const JsonAt lj = layers[l];
    lj.only_keys({"activations", "buddies", "buddy_q", "tae_percentiles", "coactivations"});
    BuddyLayer bl;
    const JsonAt buddies = lj["buddies"];
    if (buddies.size() != p.experts)
      buddies.expected("an array of " + std::to_string(p.experts) + " buddy lists (\"experts\")");
    bl.buddies.resize(p.experts);
    for (uint32_t i = 0; i < p.experts; ++i) {
      const JsonAt list = buddies[i];
      for (size_t k = 0; k < list.size(); ++k) {
        const JsonAt b = list[k];
        const uint64_t id = b.integer(0, p.experts - 1);
        if (id == i) b.fail("expert " + std::to_string(i) + " lists itself as its buddy");
        bl.buddies[i].push_back(static_cast<uint16_t>(id));
      }
    }
    const JsonAt tae = lj["tae_percentiles"];
    if (tae.size() != 101) tae.expected("an array of 101 percentiles");
    for (size_t k = 0; k < 101; ++k) bl.tae_percentiles.push_back(tae[k].number());
    p.layer.push_back(std::move(bl));
  }
  return p;
}

}  // namespace moesim::traces
