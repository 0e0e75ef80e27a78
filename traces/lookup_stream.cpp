#include "traces/lookup_stream.h"

#include <algorithm>

#include "base/error.h"

namespace moesim::traces {

uint64_t LookupStream::decode_lookups() const {
  uint64_t n = 0;
  for (size_t i = 0; i < invocations(); ++i)
    if (inv_phase[i] == static_cast<uint8_t>(Phase::kDecode)) n += inv_begin[i + 1] - inv_begin[i];
  return n;
}

LookupView lookup_view(const LookupStream& s) {
  LookupView v;
  v.inv_begin = s.inv_begin;
  v.inv_layer = s.inv_layer;
  v.inv_phase = s.inv_phase;
  v.key = s.key;
  v.next_use = s.next_use;
  v.refresh_begin = s.refresh_begin;
  v.refresh = s.refresh;
  return v;
}

namespace {

constexpr uint32_t kNone = 0xFFFFFFFFu;

// Accumulates one invocation: unique experts in first-touch order with token counts, and the refreshes
// of its duplicate touches (see the header).
class InvocationBuilder {
 public:
  InvocationBuilder(LookupStream& out, uint32_t experts, bool tokens)
      : out_(out), tokens_(tokens), pos_(experts, kNone), seen_(experts, 0) {}

  void add(std::span<const uint16_t> ids, uint32_t layer) {
    for (uint16_t e : ids) {
      touches_.push_back(e);
      if (pos_[e] == kNone) {
        pos_[e] = static_cast<uint32_t>(out_.key.size());
        touched_.push_back(e);
        out_.key.push_back(layer * out_.experts + e);
        if (tokens_) out_.tokens.push_back(1);
      } else if (tokens_) {
        ++out_.tokens[pos_[e]];
      }
    }
  }

  void close(uint32_t layer, Phase phase) {
    if (touched_.empty()) return;  // a missing cell: no invocation
    if (touches_.size() != touched_.size()) add_refreshes();
    for (uint16_t e : touched_) pos_[e] = kNone;
    touched_.clear();
    touches_.clear();
    push_invocation(layer, phase);
  }

  // One record that is a whole invocation (a decode token at batch 1): its ids are distinct (a Trace
  // guarantees it), so there is nothing to merge or refresh.
  void single(std::span<const uint16_t> ids, uint32_t layer, Phase phase) {
    const uint32_t base = layer * out_.experts;
    for (uint16_t e : ids) out_.key.push_back(base + e);
    if (tokens_) out_.tokens.insert(out_.tokens.end(), ids.size(), 1);
    push_invocation(layer, phase);
  }

 private:
  void push_invocation(uint32_t layer, Phase phase) {
    out_.inv_layer.push_back(static_cast<uint16_t>(layer));
    out_.inv_phase.push_back(static_cast<uint8_t>(phase));
    out_.inv_begin.push_back(static_cast<uint32_t>(out_.key.size()));
    out_.refresh_begin.push_back(static_cast<uint32_t>(out_.refresh.size()));
  }

  // The last-touch order is the reverse of the first appearances in the reversed touches. Its longest
  // prefix whose lookups ascend needs no refresh; the rest is refreshed in last-touch order.
  void add_refreshes() {
    ++epoch_;
    last_order_.clear();
    for (size_t t = touches_.size(); t-- > 0;) {
      const uint16_t e = touches_[t];
      if (seen_[e] != epoch_) {
        seen_[e] = epoch_;
        last_order_.push_back(pos_[e]);
      }
    }
    std::reverse(last_order_.begin(), last_order_.end());
    size_t keep = 1;
    while (keep < last_order_.size() && last_order_[keep] > last_order_[keep - 1]) ++keep;
    out_.refresh.insert(out_.refresh.end(), last_order_.begin() + static_cast<std::ptrdiff_t>(keep),
                        last_order_.end());
  }

  LookupStream& out_;
  bool tokens_;
  std::vector<uint32_t> pos_;       // [experts] lookup index of an expert in the open invocation
  std::vector<uint32_t> seen_;      // [experts] epoch stamps for add_refreshes
  uint32_t epoch_ = 0;
  std::vector<uint16_t> touched_;   // unique experts of the open invocation, first-touch order
  std::vector<uint16_t> touches_;   // every touch of the open invocation
  std::vector<uint32_t> last_order_;
};

struct SeqRange {
  size_t prefill_begin, prefill_end, decode_begin, decode_end;
};

}  // namespace

LookupStream build_lookup_stream(const Trace& trace, uint32_t batch, const LookupStreamParts& parts) {
  if (batch == 0) throw Error("batch size must be at least 1");
  const auto& info = trace.info();
  LookupStream out;
  out.layers = info.layers;
  out.top_k = info.top_k;
  out.experts = info.experts;
  out.batch = batch;
  out.inv_begin.push_back(0);
  out.refresh_begin.push_back(0);
  out.step_begin.push_back(0);
  // Upper bounds (a lookup per slot, an invocation per record): no reallocation while building.
  out.key.reserve(trace.slots());
  if (parts.tokens) out.tokens.reserve(trace.slots());
  out.inv_begin.reserve(trace.records() + 1);
  out.inv_layer.reserve(trace.records());
  out.inv_phase.reserve(trace.records());
  out.refresh_begin.reserve(trace.records() + 1);

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

  InvocationBuilder inv(out, info.experts, parts.tokens);
  // Returns whether a step was closed (false when every cell of it was missing).
  auto close_step = [&](Phase phase, uint32_t tokens) {
    if (out.inv_layer.size() == out.step_begin.back()) return false;  // every cell missing: no step
    out.step_phase.push_back(static_cast<uint8_t>(phase));
    out.step_tokens.push_back(tokens);
    out.step_begin.push_back(static_cast<uint32_t>(out.inv_layer.size()));
    return true;
  };
  // The steps of every sequence (kNone: none yet), copied to the stream for those that have any.
  std::vector<uint32_t> first_step(seqs.size(), kNone), last_step(seqs.size(), kNone);
  auto took_part = [&](size_t seq) {
    const auto s = static_cast<uint32_t>(out.step_phase.size() - 1);
    if (first_step[seq] == kNone) first_step[seq] = s;
    last_step[seq] = s;
  };

  const size_t group = std::min<size_t>(batch, seqs.size());
  std::vector<size_t> cur(group), end(group), step_end(group);
  std::vector<char> is_active(group);
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
      if (any && close_step(Phase::kPrefill, max_step + 1)) took_part(i);
    }
    // Decode: the group's sequences advance together, step by step; records are ordered (step, layer).
    const size_t n = g_end - g;
    for (size_t i = 0; i < n; ++i) {
      cur[i] = seqs[g + i].decode_begin;
      end[i] = seqs[g + i].decode_end;
    }
    if (n == 1) {  // batch 1: every record is an invocation of its own
      for (size_t r = cur[0]; r < end[0];) {
        const uint32_t step = trace.step(r);
        for (; r < end[0] && trace.step(r) == step; ++r) inv.single(trace.experts(r), trace.layer(r), Phase::kDecode);
        if (close_step(Phase::kDecode, 1)) took_part(g);
      }
      continue;
    }
    for (;;) {
      uint32_t step = 0xFFFFFFFFu;
      for (size_t i = 0; i < n; ++i)
        if (cur[i] < end[i]) step = std::min(step, trace.step(cur[i]));
      if (step == 0xFFFFFFFFu) break;
      uint32_t active = 0;
      for (size_t i = 0; i < n; ++i) {
        size_t r = cur[i];
        is_active[i] = r < end[i] && trace.step(r) == step;
        if (is_active[i]) ++active;
        while (r < end[i] && trace.step(r) == step) ++r;
        step_end[i] = r;
      }
      for (uint32_t l = 0; l < info.layers; ++l) {
        for (size_t i = 0; i < n; ++i)
          while (cur[i] < step_end[i] && trace.layer(cur[i]) == l) inv.add(trace.experts(cur[i]++), l);
        inv.close(l, Phase::kDecode);
      }
      if (close_step(Phase::kDecode, active))
        for (size_t i = 0; i < n; ++i)
          if (is_active[i]) took_part(g + i);
    }
  }
  for (size_t i = 0; i < seqs.size(); ++i)
    if (first_step[i] != kNone) {
      out.seq_first_step.push_back(first_step[i]);
      out.seq_last_step.push_back(last_step[i]);
    }

  if (parts.next_use) {  // a backward scan over invocations
    out.next_use.resize(out.key.size());
    std::vector<uint32_t> next(size_t{info.layers} * info.experts, kNoNextUse);
    const uint32_t* key = out.key.data();
    uint32_t* next_use = out.next_use.data();
    for (size_t j = out.invocations(); j-- > 0;)
      for (uint32_t i = out.inv_begin[j]; i < out.inv_begin[j + 1]; ++i) {
        next_use[i] = next[key[i]];
        next[key[i]] = static_cast<uint32_t>(j);
      }
  }
  return out;
}

}  // namespace moesim::traces
