#include "traces/token_routing.h"

#include <algorithm>

#include "base/error.h"

namespace moesim::traces {

TokenRouting build_token_routing(const Trace& trace, const LookupStream& stream) {
  const uint32_t batch = stream.batch;
  TokenRouting tr;
  tr.inv_begin.push_back(0);
  tr.rows.reserve(trace.records());
  std::vector<uint16_t> inv_layer;
  auto close = [&](uint32_t layer) {
    if (tr.rows.size() == tr.inv_begin.back()) return;  // a missing cell: no invocation
    tr.inv_begin.push_back(static_cast<uint32_t>(tr.rows.size()));
    inv_layer.push_back(static_cast<uint16_t>(layer));
  };
  // Sequences: [prefill begin, decode begin, end) in canonical record order.
  struct Seq {
    size_t p, d, e;
  };
  std::vector<Seq> seqs;
  for (size_t r = 0; r < trace.records();) {
    const uint32_t s = trace.seq(r);
    Seq q{r, r, r};
    while (r < trace.records() && trace.seq(r) == s && trace.phase(r) == Phase::kPrefill) ++r;
    q.d = r;
    while (r < trace.records() && trace.seq(r) == s) ++r;
    q.e = r;
    seqs.push_back(q);
  }
  for (size_t g = 0; g < seqs.size(); g += batch) {
    const size_t g_end = std::min(seqs.size(), g + batch);
    for (size_t i = g; i < g_end; ++i)
      for (size_t r = seqs[i].p; r < seqs[i].d;) {
        const uint16_t l = trace.layer(r);
        for (; r < seqs[i].d && trace.layer(r) == l; ++r) tr.rows.push_back(static_cast<uint32_t>(r));
        close(l);
      }
    std::vector<size_t> cur;
    for (size_t i = g; i < g_end; ++i) cur.push_back(seqs[i].d);
    for (;;) {
      uint32_t step = UINT32_MAX;
      for (size_t i = g; i < g_end; ++i)
        if (cur[i - g] < seqs[i].e) step = std::min(step, trace.step(cur[i - g]));
      if (step == UINT32_MAX) break;
      std::vector<size_t> end(cur.size());
      for (size_t i = g; i < g_end; ++i) {
        size_t r = cur[i - g];
        while (r < seqs[i].e && trace.step(r) == step) ++r;
        end[i - g] = r;
      }
      for (uint32_t l = 0; l < trace.info().layers; ++l) {
        for (size_t i = 0; i < cur.size(); ++i)
          while (cur[i] < end[i] && trace.layer(cur[i]) == l) tr.rows.push_back(static_cast<uint32_t>(cur[i]++));
        close(l);
      }
    }
  }
  // The stream must be the one these rows make (the same walk, traces/lookup_stream.cpp).
  if (tr.invocations() != stream.invocations())
    throw Error("token routing: " + std::to_string(tr.invocations()) + " invocations, the lookup stream has " +
                std::to_string(stream.invocations()) + " (was it built from another trace or batch size?)");
  const uint32_t E = trace.info().experts;
  std::vector<uint8_t> seen(E, 0);
  for (size_t i = 0; i < tr.invocations(); ++i) {
    if (inv_layer[i] != stream.inv_layer[i])
      throw Error("token routing: invocation " + std::to_string(i) + " is of layer " + std::to_string(inv_layer[i]) +
                  ", the lookup stream's of layer " + std::to_string(stream.inv_layer[i]));
    size_t unique = 0;
    for (uint32_t j = tr.inv_begin[i]; j < tr.inv_begin[i + 1]; ++j)
      for (uint16_t e : trace.experts(tr.rows[j])) unique += seen[e] ? 0 : (seen[e] = 1);
    bool same = unique == stream.inv_begin[i + 1] - stream.inv_begin[i];
    for (uint32_t j = stream.inv_begin[i]; j < stream.inv_begin[i + 1]; ++j)
      same = same && seen[stream.key[j] - inv_layer[i] * E];
    for (uint32_t j = tr.inv_begin[i]; j < tr.inv_begin[i + 1]; ++j)
      for (uint16_t e : trace.experts(tr.rows[j])) seen[e] = 0;
    if (!same)
      throw Error("token routing: invocation " + std::to_string(i) +
                  " uses other experts than the lookup stream's (was it built from another trace?)");
  }
  return tr;
}

TokenRoutingView token_routing_view(const TokenRouting& tr, const Trace& trace) {
  TokenRoutingView v;
  v.top_k = trace.info().top_k;
  v.experts = trace.info().experts;
  v.inv_begin = tr.inv_begin;
  v.rows = tr.rows;
  v.ids = trace.columns().experts;
  v.weights = trace.columns().weights;
  v.logits = trace.columns().logits;
  return v;
}

RoutingSetup routing_setup(const TraceInfo& info, const Trace& trace) {
  return RoutingSetup{info.layers, info.experts, info.top_k, trace.has_weights(), trace.has_logits()};
}

}  // namespace moesim::traces
