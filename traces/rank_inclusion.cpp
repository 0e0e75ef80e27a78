#include "traces/rank_inclusion.h"

#include <algorithm>
#include <cmath>

#include "base/error.h"
#include "base/json_io.h"
#include "base/json_schema.h"
#include "traces/ipf.h"

namespace moesim::traces {

const char* inclusion_phase_name(InclusionPhase p) {
  switch (p) {
    case InclusionPhase::kDecode:
      return "decode";
    case InclusionPhase::kPrefill:
      return "prefill";
    case InclusionPhase::kAll:
      return "all";
  }
  return "?";
}

InclusionPhase parse_inclusion_phase(const std::string& text) {
  for (InclusionPhase p : {InclusionPhase::kDecode, InclusionPhase::kPrefill, InclusionPhase::kAll})
    if (text == inclusion_phase_name(p)) return p;
  throw UsageError("unknown invocation phase '" + text + "' (known: decode, prefill, all)");
}

RankInclusion rank_inclusion(const LookupStream& s, InclusionPhase phase) {
  const uint32_t n = s.experts;
  std::vector<uint64_t> count(static_cast<size_t>(s.layers) * n, 0);
  std::vector<uint64_t> layer_invocations(s.layers, 0);
  RankInclusion r;
  r.phase = phase;
  uint64_t unique = 0;
  for (size_t i = 0; i < s.invocations(); ++i) {
    const bool decode = s.inv_phase[i] == static_cast<uint8_t>(Phase::kDecode);
    if ((phase == InclusionPhase::kDecode && !decode) || (phase == InclusionPhase::kPrefill && decode))
      continue;
    ++layer_invocations[s.inv_layer[i]];
    ++r.invocations;
    // Keys are unique within an invocation (lookup_stream.h), so each counts once.
    for (uint32_t j = s.inv_begin[i]; j < s.inv_begin[i + 1]; ++j) ++count[s.key[j]];
    unique += s.inv_begin[i + 1] - s.inv_begin[i];
  }
  if (r.invocations == 0)
    throw Error(std::string("rank inclusion: the trace has no ") + inclusion_phase_name(phase) +
                " invocations to count (--phase prefill or all counts the others)");
  r.measured.assign(n, 0.0);
  std::vector<double> layer_f(n);
  for (uint32_t l = 0; l < s.layers; ++l) {
    if (layer_invocations[l] == 0) continue;
    ++r.layers;
    for (uint32_t e = 0; e < n; ++e)
      layer_f[e] = static_cast<double>(count[static_cast<size_t>(l) * n + e]) / layer_invocations[l];
    std::sort(layer_f.begin(), layer_f.end(), std::greater<>());
    for (uint32_t e = 0; e < n; ++e) r.measured[e] += layer_f[e];
  }
  for (double& x : r.measured) x /= r.layers;
  r.mean_unique = static_cast<double>(unique) / static_cast<double>(r.invocations);
  // One token picks top_k distinct experts; a batch group picks the union of its tokens' experts, whose
  // size varies: the planner's fixed-size model takes its mean, rounded.
  r.k = s.batch == 1 && phase == InclusionPhase::kDecode && s.top_k > 0
            ? s.top_k
            : std::max<uint32_t>(1, static_cast<uint32_t>(std::lround(r.mean_unique)));
  const std::string origin = std::string("trace (") + inclusion_phase_name(phase) + " invocations, batch " +
                             std::to_string(s.batch) + ")";
  // Popularity by rank needs more distinct experts than one invocation picks: a trace of a token or two
  // routes to exactly its top-k, and the ranks beyond stay unmeasured.
  const auto seen = static_cast<uint32_t>(std::count_if(r.measured.begin(), r.measured.end(), [](double x) { return x > 0; }));
  if (seen <= r.k)
    throw Error("the trace has too few tokens to profile expert popularity for the zipmoe planner: its " +
                std::to_string(r.invocations) + " " +
                (phase == InclusionPhase::kAll ? std::string() : std::string(inclusion_phase_name(phase)) + " ") +
                "invocations route to at most " + std::to_string(seen) + " distinct experts per layer, and " +
                std::to_string(r.k) + " experts per invocation need at least " + std::to_string(r.k + 1) +
                " to rank; pass a longer trace (more decode tokens), or to `moesim plan` the popularity itself (--inclusion)");
  RankInclusion scaled = rank_inclusion_from_values(r.measured, r.k, n, origin);
  r.f = std::move(scaled.f);
  r.source = origin;
  return r;
}

RankInclusion rank_inclusion_from_values(std::span<const double> values, uint32_t k, uint32_t experts,
                                         const std::string& origin) {
  if (values.size() > experts)
    throw Error(origin + ": " + std::to_string(values.size()) + " inclusion probabilities for " +
                std::to_string(experts) + " experts per layer");
  std::vector<double> v(values.begin(), values.end());
  for (size_t i = 0; i < v.size(); ++i)
    if (!(v[i] >= 0) || !std::isfinite(v[i]))
      throw Error(origin + ": inclusion probability " + std::to_string(i + 1) + " is negative or not finite");
  v.resize(experts, 0.0);
  std::sort(v.begin(), v.end(), std::greater<>());
  size_t positive = 0;
  for (double x : v) positive += x > 0;
  if (positive <= k)
    throw Error(origin + ": only " + std::to_string(positive) +
                " ranks have a positive inclusion probability; " + std::to_string(k) +
                " experts per invocation need at least " + std::to_string(k + 1));
  RankInclusion r;
  r.measured = v;
  r.k = k;
  r.mean_unique = 0;
  for (double x : v) r.mean_unique += x;
  r.f = inclusion_from_weights(v, k);
  r.source = origin;
  return r;
}

std::vector<double> parse_inclusion_list(const std::string& text_or_path) {
  const bool inline_list = !text_or_path.empty() && text_or_path.front() == '[';
  const std::string origin = inline_list ? "inline inclusion list" : text_or_path;
  const Json j = inline_list ? parse_json_text(text_or_path, origin) : load_json_file(text_or_path);
  const JsonAt list(j, origin);
  if (!j.is_array() || j.empty()) list.expected("a non-empty JSON list of inclusion probabilities by rank");
  std::vector<double> f;
  for (size_t i = 0; i < list.size(); ++i) f.push_back(list[i].number());
  return f;
}

}  // namespace moesim::traces
