#include "traces/lookup_stream.h"

#include <algorithm>

#include "base/error.h"

namespace moesim::traces {

uint64_t LookupStream::decode_lookups() const {
  // Branch-free, so that the compiler vectorizes it (a pass over the invocations).
  uint64_t n = 0;
  for (size_t i = 0; i < invocations(); ++i)
    n += uint64_t{inv_phase[i] == static_cast<uint8_t>(Phase::kDecode)} * (inv_begin[i + 1] - inv_begin[i]);
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
// of its duplicate touches (see the header). The lookup and invocation arrays are sized to their upper
// bounds (a lookup per slot, an invocation per record; empty_stream) and written by index, so that a
// lookup costs a store rather than a push_back's capacity check; finish() trims them to what was written.
class InvocationBuilder {
 public:
  InvocationBuilder(LookupStream& out, uint32_t experts, bool tokens)
      : out_(out),
        tokens_(tokens),
        key_(out.key.data()),
        tok_(tokens ? out.tokens.data() : nullptr),
        pos_(experts, kNone),
        seen_(experts, 0) {}

  size_t invocations() const { return n_inv_; }

  void add(std::span<const uint16_t> ids, uint32_t layer) {
    for (uint16_t e : ids) {
      touches_.push_back(e);
      if (pos_[e] == kNone) {
        pos_[e] = static_cast<uint32_t>(n_key_);
        touched_.push_back(e);
        if (tokens_) tok_[n_key_] = 1;
        key_[n_key_++] = layer * out_.experts + e;
      } else if (tokens_) {
        ++tok_[pos_[e]];
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
  void single(const uint16_t* ids, uint32_t k, uint32_t layer, Phase phase) {
    const uint32_t base = layer * out_.experts;
    uint32_t* key = key_ + n_key_;
    for (uint32_t s = 0; s < k; ++s) key[s] = base + ids[s];
    if (tokens_) std::fill_n(tok_ + n_key_, k, 1u);
    n_key_ += k;
    push_invocation(layer, phase);
  }

  // Trims the arrays to what was written.
  void finish() {
    out_.key.resize(n_key_);
    if (tokens_) out_.tokens.resize(n_key_);
    out_.inv_begin.resize(n_inv_ + 1);
    out_.inv_layer.resize(n_inv_);
    out_.inv_phase.resize(n_inv_);
    out_.refresh_begin.resize(n_inv_ + 1);
  }

 private:
  void push_invocation(uint32_t layer, Phase phase) {
    out_.inv_layer[n_inv_] = static_cast<uint16_t>(layer);
    out_.inv_phase[n_inv_] = static_cast<uint8_t>(phase);
    ++n_inv_;
    out_.inv_begin[n_inv_] = static_cast<uint32_t>(n_key_);
    out_.refresh_begin[n_inv_] = static_cast<uint32_t>(out_.refresh.size());
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
  uint32_t* key_;  // out_.key's storage, sized to the trace's slots
  uint32_t* tok_;  // out_.tokens' storage, or null
  size_t n_key_ = 0, n_inv_ = 0;
  std::vector<uint32_t> pos_;   // [experts] lookup index of an expert in the open invocation
  std::vector<uint32_t> seen_;  // [experts] epoch stamps for add_refreshes
  uint32_t epoch_ = 0;
  std::vector<uint16_t> touched_;  // unique experts of the open invocation, first-touch order
  std::vector<uint16_t> touches_;  // every touch of the open invocation
  std::vector<uint32_t> last_order_;
};

struct SeqRange {
  size_t prefill_begin, prefill_end, decode_begin, decode_end;
};

// A stream with its header and leading offsets, its arrays reserved for the trace.
LookupStream empty_stream(const Trace& trace, uint32_t batch, const LookupStreamParts& parts) {
  const auto& info = trace.info();
  LookupStream out;
  out.layers = info.layers;
  out.top_k = info.top_k;
  out.experts = info.experts;
  out.batch = batch;
  out.step_begin.push_back(0);
  // Upper bounds (a lookup per slot, an invocation per record), written by index (InvocationBuilder) and
  // trimmed at the end.
  out.key.resize(trace.slots());
  if (parts.tokens) out.tokens.resize(trace.slots());
  out.inv_begin.resize(trace.records() + 1);  // inv_begin[0] = 0
  out.inv_layer.resize(trace.records());
  out.inv_phase.resize(trace.records());
  out.refresh_begin.resize(trace.records() + 1);  // refresh_begin[0] = 0
  return out;
}

// Record ranges of each sequence's prefill and decode parts (records are canonical).
std::vector<SeqRange> sequence_ranges(const Trace& trace) {
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
  return seqs;
}

// Appends the steps of groups of `batch` sequences to the stream, and which steps each sequence took part in.
class StepBuilder {
 public:
  StepBuilder(LookupStream& out, const Trace& trace, const std::vector<SeqRange>& seqs, uint32_t batch,
              bool tokens)
      : out_(out),
        trace_(trace),
        seqs_(seqs),
        inv_(out, trace.info().experts, tokens),
        first_step_(seqs.size(), kNone),
        last_step_(seqs.size(), kNone) {
    const size_t group = std::min<size_t>(batch, seqs.size());
    cur_.resize(group);
    end_.resize(group);
    step_end_.resize(group);
    is_active_.resize(group);
  }

  // Prefill: one step per sequence; records are ordered (layer, step).
  void prefill(size_t i) {
    uint32_t max_step = 0;
    bool any = false;
    for (size_t r = seqs_[i].prefill_begin; r < seqs_[i].prefill_end;) {
      const uint32_t l = trace_.layer(r);
      for (; r < seqs_[i].prefill_end && trace_.layer(r) == l; ++r) {
        inv_.add(trace_.experts(r), l);
        max_step = std::max(max_step, trace_.step(r));
        any = true;
      }
      inv_.close(l, Phase::kPrefill);
    }
    if (any && close_step(Phase::kPrefill, max_step + 1)) took_part(i);
  }

  // Decode: the group's sequences [g, g + n) advance together, step by step; records are ordered
  // (step, layer).
  void decode(size_t g, size_t n) {
    for (size_t i = 0; i < n; ++i) {
      cur_[i] = seqs_[g + i].decode_begin;
      end_[i] = seqs_[g + i].decode_end;
    }
    if (n == 1) {  // batch 1: every record is an invocation of its own
      const auto& c = trace_.columns();
      const uint32_t k = trace_.info().top_k;
      for (size_t r = cur_[0]; r < end_[0];) {
        const uint32_t step = c.step[r];
        for (; r < end_[0] && c.step[r] == step; ++r)
          inv_.single(c.experts.data() + r * k, k, c.layer[r], Phase::kDecode);
        if (close_step(Phase::kDecode, 1)) took_part(g);
      }
      return;
    }
    for (;;) {
      uint32_t step = 0xFFFFFFFFu;
      for (size_t i = 0; i < n; ++i)
        if (cur_[i] < end_[i]) step = std::min(step, trace_.step(cur_[i]));
      if (step == 0xFFFFFFFFu) break;
      const uint32_t active = mark_active(n, step);
      for (uint32_t l = 0; l < trace_.info().layers; ++l) {
        for (size_t i = 0; i < n; ++i)
          while (cur_[i] < step_end_[i] && trace_.layer(cur_[i]) == l) inv_.add(trace_.experts(cur_[i]++), l);
        inv_.close(l, Phase::kDecode);
      }
      if (close_step(Phase::kDecode, active))
        for (size_t i = 0; i < n; ++i)
          if (is_active_[i]) took_part(g + i);
    }
  }

  // Trims the stream's arrays and copies each sequence's first and last step to it, for those that have
  // any.
  void finish() {
    inv_.finish();
    for (size_t i = 0; i < seqs_.size(); ++i)
      if (first_step_[i] != kNone) {
        out_.seq_first_step.push_back(first_step_[i]);
        out_.seq_last_step.push_back(last_step_[i]);
      }
  }

 private:
  // Which of the group's n sequences have records at `step`, and where each one's records of it end;
  // returns how many do.
  uint32_t mark_active(size_t n, uint32_t step) {
    uint32_t active = 0;
    for (size_t i = 0; i < n; ++i) {
      size_t r = cur_[i];
      is_active_[i] = r < end_[i] && trace_.step(r) == step;
      if (is_active_[i]) ++active;
      while (r < end_[i] && trace_.step(r) == step) ++r;
      step_end_[i] = r;
    }
    return active;
  }

  // Returns whether a step was closed (false when every cell of it was missing).
  bool close_step(Phase phase, uint32_t tokens) {
    if (inv_.invocations() == out_.step_begin.back()) return false;  // every cell missing: no step
    out_.step_phase.push_back(static_cast<uint8_t>(phase));
    out_.step_tokens.push_back(tokens);
    out_.step_begin.push_back(static_cast<uint32_t>(inv_.invocations()));
    return true;
  }

  void took_part(size_t seq) {
    const auto s = static_cast<uint32_t>(out_.step_phase.size() - 1);
    if (first_step_[seq] == kNone) first_step_[seq] = s;
    last_step_[seq] = s;
  }

  LookupStream& out_;
  const Trace& trace_;
  const std::vector<SeqRange>& seqs_;
  InvocationBuilder inv_;
  // The steps of every sequence (kNone: none yet), copied to the stream for those that have any.
  std::vector<uint32_t> first_step_, last_step_;
  std::vector<size_t> cur_, end_, step_end_;  // per sequence of the group: next record, decode end, step end
  std::vector<char> is_active_;
};

// Each lookup's next use: a backward scan over invocations.
void add_next_use(LookupStream& out) {
  out.next_use.resize(out.key.size());
  std::vector<uint32_t> next(size_t{out.layers} * out.experts, kNoNextUse);
  const uint32_t* key = out.key.data();
  uint32_t* next_use = out.next_use.data();
  for (size_t j = out.invocations(); j-- > 0;)
    for (uint32_t i = out.inv_begin[j]; i < out.inv_begin[j + 1]; ++i) {
      next_use[i] = next[key[i]];
      next[key[i]] = static_cast<uint32_t>(j);
    }
}

}  // namespace

LookupStream build_lookup_stream(const Trace& trace, uint32_t batch, const LookupStreamParts& parts) {
  if (batch == 0) throw Error("batch size must be at least 1");
  LookupStream out = empty_stream(trace, batch, parts);
  const std::vector<SeqRange> seqs = sequence_ranges(trace);
  StepBuilder steps(out, trace, seqs, batch, parts.tokens);
  for (size_t g = 0; g < seqs.size(); g += batch) {
    const size_t g_end = std::min(seqs.size(), g + batch);
    for (size_t i = g; i < g_end; ++i) steps.prefill(i);
    steps.decode(g, g_end - g);
  }
  steps.finish();
  if (parts.next_use) add_next_use(out);
  return out;
}

}  // namespace moesim::traces
