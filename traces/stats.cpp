#include "traces/stats.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "traces/lookup_stream.h"

namespace moesim::traces {
namespace {

// Nearest-rank quantile of a histogram of distances (hist[d] = how many distances equal d).
std::optional<uint32_t> quantile(const std::vector<uint64_t>& hist, uint64_t total, double p) {
  if (total == 0) return std::nullopt;
  const auto rank = static_cast<uint64_t>(std::ceil(p * static_cast<double>(total)));
  uint64_t seen = 0;
  for (size_t d = 0; d < hist.size(); ++d) {
    seen += hist[d];
    if (seen >= std::max<uint64_t>(rank, 1)) return static_cast<uint32_t>(d);
  }
  return static_cast<uint32_t>(hist.size() - 1);
}

void finish_reuse(ReuseStats& r, const std::vector<uint64_t>& hist) {
  r.p50 = quantile(hist, r.reused, 0.50);
  r.p90 = quantile(hist, r.reused, 0.90);
  r.p99 = quantile(hist, r.reused, 0.99);
}

Json opt_json(const std::optional<uint32_t>& v) {
  return v ? Json(*v) : Json(nullptr);
}

Json reuse_json(const ReuseStats& r) {
  Json j = Json::object();
  j["lookups"] = r.lookups;
  j["reused"] = r.reused;
  j["never_reused"] = r.never_reused;
  j["never_reused_fraction"] = r.never_reused_fraction();
  j["p50"] = opt_json(r.p50);
  j["p90"] = opt_json(r.p90);
  j["p99"] = opt_json(r.p99);
  return j;
}

std::string opt_text(const std::optional<uint32_t>& v) {
  return v ? std::to_string(*v) : "-";
}

}  // namespace

double LayerStats::repeat_rate() const {
  if (repeat_pairs == 0 || top_k == 0) return 0.0;
  return static_cast<double>(repeat_hits) / (static_cast<double>(repeat_pairs) * top_k);
}

std::vector<PairCount> pair_counts(const Trace& trace, uint32_t layer) {
  std::vector<uint32_t> keys;  // a << 16 | b; expert ids are < 65536
  for (size_t r = 0; r < trace.records(); ++r) {
    if (trace.layer(r) != layer) continue;
    const auto ex = trace.experts(r);
    for (size_t i = 0; i < ex.size(); ++i)
      for (size_t j = i + 1; j < ex.size(); ++j) {
        const uint32_t a = std::min(ex[i], ex[j]), b = std::max(ex[i], ex[j]);
        keys.push_back(a << 16 | b);
      }
  }
  std::sort(keys.begin(), keys.end());
  std::vector<PairCount> out;
  for (size_t i = 0; i < keys.size();) {
    size_t j = i;
    while (j < keys.size() && keys[j] == keys[i]) ++j;
    out.push_back({keys[i] >> 16, keys[i] & 0xFFFFu, static_cast<uint32_t>(j - i)});
    i = j;
  }
  return out;
}

uint32_t pair_count(const std::vector<PairCount>& pc, uint32_t a, uint32_t b) {
  if (a > b) std::swap(a, b);
  const auto it =
      std::lower_bound(pc.begin(), pc.end(), std::pair{a, b}, [](const PairCount& p, const auto& key) {
        return p.a != key.first ? p.a < key.first : p.b < key.second;
      });
  return it != pc.end() && it->a == a && it->b == b ? it->count : 0;
}

namespace {

// Usage counts and next-token repeats in one pass over canonical records. Within a sequence, decode
// records come by (step, layer), so the previous decode record of each layer is remembered per layer.
void count_usage_and_repeats(const Trace& trace, TraceStats& s) {
  const uint32_t L = trace.info().layers, E = trace.info().experts;
  std::vector<int64_t> prev(L, -1);
  std::vector<uint8_t> mark(E, 0);
  for (size_t r = 0; r < trace.records(); ++r) {
    if (r > 0 && (trace.seq(r) != trace.seq(r - 1) || trace.phase(r) != trace.phase(r - 1)))
      std::fill(prev.begin(), prev.end(), -1);
    const uint32_t l = trace.layer(r);
    LayerStats& ls = s.layers[l];
    ++ls.tokens;
    const auto ex = trace.experts(r);
    for (uint16_t e : ex) ++ls.counts[e];
    if (trace.phase(r) != Phase::kDecode) continue;
    const int64_t p = prev[l];
    if (p >= 0 && trace.step(static_cast<size_t>(p)) + 1 == trace.step(r)) {
      for (uint16_t e : trace.experts(static_cast<size_t>(p))) mark[e] = 1;
      uint64_t hits = 0;
      for (uint16_t e : ex) hits += mark[e];
      for (uint16_t e : trace.experts(static_cast<size_t>(p))) mark[e] = 0;
      ++ls.repeat_pairs;
      ls.repeat_hits += hits;
    }
    prev[l] = static_cast<int64_t>(r);
  }
}

// Reuse distances on the batch-1 lookup stream, in invocations of the same layer: counts them per layer
// into s, and their histograms per layer (hist) and over all layers (all_hist).
void count_reuse(const Trace& trace, TraceStats& s, std::vector<std::vector<uint64_t>>& hist,
                 std::vector<uint64_t>& all_hist) {
  const uint32_t L = trace.info().layers;
  const LookupStream ls = build_lookup_stream(trace, 1);
  std::vector<uint32_t> local(ls.invocations());
  std::vector<uint32_t> per_layer(L, 0);
  for (size_t i = 0; i < ls.invocations(); ++i) local[i] = per_layer[ls.inv_layer[i]]++;
  hist.assign(L, {});
  for (size_t i = 0; i < ls.invocations(); ++i) {
    const uint32_t l = ls.inv_layer[i];
    ReuseStats& rs = s.layers[l].reuse;
    for (uint32_t j = ls.inv_begin[i]; j < ls.inv_begin[i + 1]; ++j) {
      ++rs.lookups;
      const uint32_t nu = ls.next_use[j];
      if (nu == kNoNextUse) {
        ++rs.never_reused;
        continue;
      }
      // The distance of the *next* lookup from this one: every reused lookup is counted exactly once.
      const uint32_t d = local[nu] - local[i];
      ++rs.reused;
      if (hist[l].size() <= d) hist[l].resize(size_t{d} + 1, 0);
      ++hist[l][d];
      if (all_hist.size() <= d) all_hist.resize(size_t{d} + 1, 0);
      ++all_hist[d];
    }
  }
}

// The layer's experts ranked by use (ties in id order), with each rank's frequency per token, all 0
// for a layer without tokens.
void rank_experts(LayerStats& x, uint32_t E) {
  x.rank_experts.resize(E);
  for (uint32_t e = 0; e < E; ++e) x.rank_experts[e] = e;
  std::stable_sort(x.rank_experts.begin(), x.rank_experts.end(),
                   [&](uint32_t a, uint32_t b) { return x.counts[a] > x.counts[b]; });
  x.rank_frequency.assign(E, 0.0);
  if (x.tokens == 0) return;
  for (uint32_t r = 0; r < E; ++r) {
    const uint64_t c = x.counts[x.rank_experts[r]];
    x.rank_frequency[r] = static_cast<double>(c) / static_cast<double>(x.tokens);
  }
}

// The layer's distinct experts and routing entropy over its k slots per token; the layer has tokens.
void layer_entropy(LayerStats& x, uint32_t E, uint32_t k) {
  const double slots = static_cast<double>(x.tokens) * k;
  for (uint32_t r = 0; r < E; ++r) {
    const uint64_t c = x.counts[x.rank_experts[r]];
    if (c == 0) continue;
    ++x.distinct_experts;
    const double p = static_cast<double>(c) / slots;
    x.entropy_bits -= p * std::log2(p);
  }
}

// The layer's `top` most co-selected expert pairs, with their lift over independent selection.
std::vector<PairStat> top_pairs(const Trace& trace, uint32_t l, const LayerStats& x, size_t top) {
  std::vector<PairStat> pairs;
  for (const PairCount& p : pair_counts(trace, l)) {
    const double lift = static_cast<double>(p.count) * static_cast<double>(x.tokens) /
                        (static_cast<double>(x.counts[p.a]) * static_cast<double>(x.counts[p.b]));
    pairs.push_back({p.a, p.b, p.count, lift});
  }
  auto better = [](const PairStat& p, const PairStat& q) {
    if (p.count != q.count) return p.count > q.count;
    if (p.lift != q.lift) return p.lift > q.lift;
    return p.a != q.a ? p.a < q.a : p.b < q.b;
  };
  const size_t n = std::min<size_t>(top, pairs.size());
  std::partial_sort(pairs.begin(), pairs.begin() + static_cast<std::ptrdiff_t>(n), pairs.end(), better);
  pairs.resize(n);
  return pairs;
}

}  // namespace

TraceStats compute_stats(const Trace& trace, const StatsOptions& opt) {
  const TraceInfo& info = trace.info();
  const uint32_t L = info.layers, E = info.experts, k = info.top_k;
  TraceStats s;
  s.info = info;
  s.records = trace.records();
  s.sequences = trace.sequence_ids().size();
  s.prefill_tokens = trace.tokens(Phase::kPrefill);
  s.decode_tokens = trace.tokens(Phase::kDecode);
  s.entropy_bits_max = E ? std::log2(static_cast<double>(E)) : 0.0;
  s.layers.resize(L);
  for (uint32_t l = 0; l < L; ++l) {
    s.layers[l].layer = l;
    s.layers[l].top_k = k;
    s.layers[l].counts.assign(E, 0);
  }
  count_usage_and_repeats(trace, s);
  std::vector<std::vector<uint64_t>> hist;
  std::vector<uint64_t> all_hist;
  count_reuse(trace, s, hist, all_hist);

  double entropy_sum = 0;
  uint32_t layers_with_tokens = 0;
  uint64_t hits_all = 0;
  for (uint32_t l = 0; l < L; ++l) {
    LayerStats& x = s.layers[l];
    finish_reuse(x.reuse, hist[l]);
    s.reuse.lookups += x.reuse.lookups;
    s.reuse.reused += x.reuse.reused;
    s.reuse.never_reused += x.reuse.never_reused;
    s.repeat_pairs += x.repeat_pairs;
    hits_all += x.repeat_hits;
    rank_experts(x, E);
    if (x.tokens == 0) continue;
    ++layers_with_tokens;
    layer_entropy(x, E, k);
    entropy_sum += x.entropy_bits;
    if (opt.top_pairs == 0) continue;
    x.top_pairs = top_pairs(trace, l, x, opt.top_pairs);
  }
  finish_reuse(s.reuse, all_hist);
  s.entropy_bits_mean = layers_with_tokens ? entropy_sum / layers_with_tokens : 0.0;
  s.repeat_rate =
      s.repeat_pairs && k ? static_cast<double>(hits_all) / (static_cast<double>(s.repeat_pairs) * k) : 0.0;
  return s;
}

Json stats_to_json(const TraceStats& s, Json header, Json trace) {
  Json j = Json::object();
  j["header"] = std::move(header);
  j["trace"] = std::move(trace);
  Json sum = Json::object();
  sum["entropy_bits_mean"] = s.entropy_bits_mean;
  sum["entropy_bits_max"] = s.entropy_bits_max;
  sum["repeat_rate"] = s.repeat_rate;
  sum["repeat_pairs"] = s.repeat_pairs;
  sum["reuse"] = reuse_json(s.reuse);
  j["summary"] = std::move(sum);
  Json layers = Json::array();
  for (const LayerStats& x : s.layers) {
    Json l = Json::object();
    l["layer"] = x.layer;
    l["tokens"] = x.tokens;
    l["distinct_experts"] = x.distinct_experts;
    l["entropy_bits"] = x.entropy_bits;
    Json rf = Json::object();
    rf["experts"] = x.rank_experts;
    Json counts = Json::array();
    for (uint32_t e : x.rank_experts) counts.push_back(x.counts[e]);
    rf["counts"] = std::move(counts);
    rf["inclusion"] = x.rank_frequency;
    l["rank_frequency"] = std::move(rf);
    l["reuse"] = reuse_json(x.reuse);
    Json rep = Json::object();
    rep["pairs"] = x.repeat_pairs;
    rep["rate"] = x.repeat_rate();
    l["repeat"] = std::move(rep);
    Json tp = Json::array();
    for (const PairStat& p : x.top_pairs)
      tp.push_back({{"a", p.a}, {"b", p.b}, {"count", p.count}, {"lift", p.lift}});
    l["top_pairs"] = std::move(tp);
    layers.push_back(std::move(l));
  }
  j["layers"] = std::move(layers);
  return j;
}

std::string stats_to_text(const TraceStats& s) {
  std::string out;
  char buf[512];
  auto add = [&](const char* fmt, auto... args) {
    std::snprintf(buf, sizeof buf, fmt, args...);
    out += buf;
  };
  add("trace: model %s, %u layers x %u experts, top-%u%s\n", s.info.model.c_str(), s.info.layers,
      s.info.experts, s.info.top_k, s.info.synthetic ? " (SYNTHETIC)" : "");
  add("records %llu, sequences %llu, prefill tokens %llu, decode tokens %llu, missing cells %llu\n",
      static_cast<unsigned long long>(s.records), static_cast<unsigned long long>(s.sequences),
      static_cast<unsigned long long>(s.prefill_tokens), static_cast<unsigned long long>(s.decode_tokens),
      static_cast<unsigned long long>(s.info.missing_cells));
  add("entropy: mean %.3f bits of max %.3f; next-token repeat rate %.3f over %llu pairs\n",
      s.entropy_bits_mean, s.entropy_bits_max, s.repeat_rate,
      static_cast<unsigned long long>(s.repeat_pairs));
  add("reuse distance (invocations of the layer, B=1): p50 %s, p90 %s, p99 %s; never reused %.1f%% of %llu "
      "lookups\n",
      opt_text(s.reuse.p50).c_str(), opt_text(s.reuse.p90).c_str(), opt_text(s.reuse.p99).c_str(),
      100.0 * s.reuse.never_reused_fraction(), static_cast<unsigned long long>(s.reuse.lookups));
  add("\n%5s %7s %8s %8s %6s %6s %6s %5s %5s %5s %6s %7s  %s\n", "layer", "tokens", "distinct", "entropy",
      "top1 f", "top8 f", "repeat", "p50", "p90", "p99", "never", "lookups", "top pair (count, lift)");
  for (const LayerStats& x : s.layers) {
    double top8 = 0;
    for (size_t r = 0; r < std::min<size_t>(8, x.rank_frequency.size()); ++r) top8 += x.rank_frequency[r];
    std::string pair = "-";
    if (!x.top_pairs.empty()) {
      std::snprintf(buf, sizeof buf, "%u+%u (%llu, %.2f)", x.top_pairs[0].a, x.top_pairs[0].b,
                    static_cast<unsigned long long>(x.top_pairs[0].count), x.top_pairs[0].lift);
      pair = buf;
    }
    add("%5u %7llu %8u %8.3f %6.3f %6.3f %6.3f %5s %5s %5s %5.1f%% %7llu  %s\n", x.layer,
        static_cast<unsigned long long>(x.tokens), x.distinct_experts, x.entropy_bits,
        x.rank_frequency.empty() ? 0.0 : x.rank_frequency[0], top8, x.repeat_rate(),
        opt_text(x.reuse.p50).c_str(), opt_text(x.reuse.p90).c_str(), opt_text(x.reuse.p99).c_str(),
        100.0 * x.reuse.never_reused_fraction(), static_cast<unsigned long long>(x.reuse.lookups),
        pair.c_str());
  }
  return out;
}

}  // namespace moesim::traces
