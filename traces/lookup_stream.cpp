#include "traces/lookup_stream.h"

#include <algorithm>

#include "core/error.h"

namespace moesim::traces {

uint64_t LookupStream::decode_lookups() const {
  uint64_t n = 0;
  for (size_t i = 0; i < invocations(); ++i)
    if (inv_phase[i] == static_cast<uint8_t>(Phase::kDecode)) n += inv_begin[i + 1] - inv_begin[i];
  return n;
}

namespace {

// Accumulates one invocation: unique experts in first-appearance order with token counts.
class InvocationBuilder {
 public:
  InvocationBuilder(LookupStream& out, uint32_t experts) : out_(out), pos_(experts, kNone) {}

  void add(std::span<const uint16_t> ids, uint32_t layer) {
    for (uint16_t e : ids) {
      if (pos_[e] == kNone) {
        pos_[e] = static_cast<uint32_t>(out_.key.size());
        touched_.push_back(e);
        out_.key.push_back(layer * out_.experts + e);
        out_.tokens.push_back(1);
      } else {
        ++out_.tokens[pos_[e]];
      }
    }
  }

  void close(uint32_t layer, Phase phase) {
    if (touched_.empty()) return;  // a missing cell: no invocation
    for (uint16_t e : touched_) pos_[e] = kNone;
    touched_.clear();
    out_.inv_layer.push_back(static_cast<uint16_t>(layer));
    out_.inv_phase.push_back(static_cast<uint8_t>(phase));
    out_.inv_begin.push_back(static_cast<uint32_t>(out_.key.size()));
  }

 private:
  static constexpr uint32_t kNone = 0xFFFFFFFFu;
  LookupStream& out_;
  std::vector<uint32_t> pos_;
  std::vector<uint16_t> touched_;
};

struct SeqRange {
  size_t prefill_begin, prefill_end, decode_begin, decode_end;
};

}  // namespace

LookupStream build_lookup_stream(const Trace& trace, uint32_t batch) {
  if (batch == 0) throw Error("batch size must be at least 1");
  const auto& info = trace.info();
  LookupStream out;
  out.layers = info.layers;
  out.top_k = info.top_k;
  out.experts = info.experts;
  out.batch = batch;
  out.inv_begin.push_back(0);
  out.step_begin.push_back(0);
  out.key.reserve(trace.slots());
  out.tokens.reserve(trace.slots());

  // Record ranges of each sequence's prefill and decode parts (records are canonical).
  std::vector<SeqRange> seqs;
  for (size_t r = 0; r < trace.records();) {
    const uint32_t s = trace.seq(r);
    SeqRange sr{r, r, r, r};
    while (r < trace.records() && trace.seq(r) == s && trace.phase(r) == Phase::kPrefill) ++r;
    sr.prefill_end = sr.decode_begin = r;
    while (r < trace.records() && trace.seq(r) == s) ++r;
    sr.decode_end = r;
    seqs.push_back(sr);
  }

  InvocationBuilder inv(out, info.experts);
  auto close_step = [&](Phase phase, uint32_t tokens) {
    if (out.inv_layer.size() == out.step_begin.back()) return;  // every cell missing: no step
    out.step_phase.push_back(static_cast<uint8_t>(phase));
    out.step_tokens.push_back(tokens);
    out.step_begin.push_back(static_cast<uint32_t>(out.inv_layer.size()));
  };

  for (size_t g = 0; g < seqs.size(); g += batch) {
    const size_t g_end = std::min(seqs.size(), g + batch);
    // Prefill: one step per sequence; records are ordered (layer, step).
    for (size_t i = g; i < g_end; ++i) {
      uint32_t max_step = 0;
      bool any = false;
      for (size_t r = seqs[i].prefill_begin; r < seqs[i].prefill_end;) {
        const uint32_t l = trace.layer(r);
        for (; r < seqs[i].prefill_end && trace.layer(r) == l; ++r) {
          inv.add(trace.experts(r), l);
          max_step = std::max(max_step, trace.step(r));
          any = true;
        }
        inv.close(l, Phase::kPrefill);
      }
      if (any) close_step(Phase::kPrefill, max_step + 1);
    }
    // Decode: the group's sequences advance together, step by step; records are ordered (step, layer).
    std::vector<size_t> cur(g_end - g);
    for (size_t i = g; i < g_end; ++i) cur[i - g] = seqs[i].decode_begin;
    for (;;) {
      uint32_t step = 0xFFFFFFFFu;
      for (size_t i = g; i < g_end; ++i)
        if (cur[i - g] < seqs[i].decode_end) step = std::min(step, trace.step(cur[i - g]));
      if (step == 0xFFFFFFFFu) break;
      uint32_t active = 0;
      std::vector<size_t> end(cur.size());
      for (size_t i = g; i < g_end; ++i) {
        size_t r = cur[i - g];
        if (r < seqs[i].decode_end && trace.step(r) == step) ++active;
        while (r < seqs[i].decode_end && trace.step(r) == step) ++r;
        end[i - g] = r;
      }
      for (uint32_t l = 0; l < info.layers; ++l) {
        for (size_t i = 0; i < cur.size(); ++i)
          while (cur[i] < end[i] && trace.layer(cur[i]) == l) inv.add(trace.experts(cur[i]++), l);
        inv.close(l, Phase::kDecode);
      }
      close_step(Phase::kDecode, active);
    }
  }

  // next_use by a backward scan over invocations.
  const size_t n = out.key.size();
  out.next_use.assign(n, kNoNextUse);
  std::vector<uint32_t> next(size_t{info.layers} * info.experts, kNoNextUse);
  for (size_t j = out.invocations(); j-- > 0;)
    for (uint32_t i = out.inv_begin[j]; i < out.inv_begin[j + 1]; ++i) {
      out.next_use[i] = next[out.key[i]];
      next[out.key[i]] = static_cast<uint32_t>(j);
    }
  return out;
}

}  // namespace moesim::traces
