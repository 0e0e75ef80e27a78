#include "traces/trace.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "base/error.h"
#include "base/warnings.h"

namespace moesim::traces {

std::vector<uint32_t> Trace::sequence_ids() const {
  std::vector<uint32_t> ids;
  for (size_t r = 0; r < records(); ++r)
    if (ids.empty() || ids.back() != cols_.seq[r]) ids.push_back(cols_.seq[r]);
  return ids;
}

uint64_t Trace::tokens(Phase p) const {
  // Distinct steps per (seq, phase) group. Prefill groups are ordered by (layer, step), so sort a copy of
  // the group's steps (memory proportional to the records, never to the largest step number).
  uint64_t n = 0;
  std::vector<uint32_t> steps;
  size_t r = 0;
  while (r < records()) {
    const uint32_t s = cols_.seq[r];
    const uint8_t ph = cols_.phase[r];
    size_t e = r;
    while (e < records() && cols_.seq[e] == s && cols_.phase[e] == ph) ++e;
    if (ph == static_cast<uint8_t>(p)) {
      steps.assign(cols_.step.begin() + r, cols_.step.begin() + e);
      std::sort(steps.begin(), steps.end());
      n += static_cast<uint64_t>(std::unique(steps.begin(), steps.end()) - steps.begin());
    }
    r = e;
  }
  return n;
}

TraceBuilder::TraceBuilder(TraceInfo info, bool with_weights, bool with_logits, std::string origin)
    : info_(std::move(info)), with_weights_(with_weights), with_logits_(with_logits), origin_(std::move(origin)) {}

void TraceBuilder::add(uint32_t seq, Phase phase, uint32_t step, uint32_t layer,
                       std::span<const uint32_t> experts, std::span<const float> weights,
                       std::span<const float> logits, uint64_t line) {
  if (info_.top_k == 0) {
    if (experts.empty()) throw input_error(origin_, line, "experts", "a record needs at least one expert id");
    info_.top_k = static_cast<uint32_t>(experts.size());
  }
  if (experts.size() != info_.top_k)
    throw input_error(origin_, line, "experts",
                      "top-k mismatch: " + std::to_string(experts.size()) + " expert ids, expected " +
                          std::to_string(info_.top_k));
  if (info_.layers && layer >= info_.layers)
    throw input_error(origin_, line, "layer",
                      "layer " + std::to_string(layer) + " outside the model's " + std::to_string(info_.layers) +
                          " MoE layers");
  if (layer > 65535) throw input_error(origin_, line, "layer", "layer index above 65535");
  if (with_logits_) {
    if (logits.empty()) throw input_error(origin_, line, "logits", "missing (other records have logits)");
    if (info_.experts == 0) info_.experts = static_cast<uint32_t>(logits.size());
    if (logits.size() != info_.experts)
      throw input_error(origin_, line, "logits",
                        std::to_string(logits.size()) + " logits, expected one per expert (" +
                            std::to_string(info_.experts) + ")");
    for (float x : logits)
      if (!std::isfinite(x)) throw input_error(origin_, line, "logits", "NaN or infinite logit");
  } else if (!logits.empty()) {
    throw input_error(origin_, line, "logits", "present on this record but not on the first one");
  }
  if (with_weights_) {
    if (weights.size() != info_.top_k)
      throw input_error(origin_, line, "weights",
                        std::to_string(weights.size()) + " weights, expected " + std::to_string(info_.top_k));
    for (float w : weights)
      if (!std::isfinite(w)) throw input_error(origin_, line, "weights", "NaN or infinite weight");
  } else if (!weights.empty()) {
    throw input_error(origin_, line, "weights", "present on this record but not on the first one");
  }
  for (size_t i = 0; i < experts.size(); ++i) {
    const uint32_t e = experts[i];
    if ((info_.experts && e >= info_.experts) || e > 65535)
      throw input_error(origin_, line, "experts",
                        "expert id " + std::to_string(e) + " outside [0, " +
                            std::to_string(info_.experts ? info_.experts : 65536) + ")");
    for (size_t j = 0; j < i; ++j)
      if (experts[j] == e)
        throw input_error(origin_, line, "experts", "expert id " + std::to_string(e) + " appears twice in one top-k");
    max_expert_ = std::max(max_expert_, e);
  }
  max_layer_ = std::max(max_layer_, layer);
  seq_.push_back(seq);
  phase_.push_back(static_cast<uint8_t>(phase));
  step_.push_back(step);
  layer_.push_back(static_cast<uint16_t>(layer));
  for (uint32_t e : experts) experts_.push_back(static_cast<uint16_t>(e));
  weights_.insert(weights_.end(), weights.begin(), weights.end());
  logits_.insert(logits_.end(), logits.begin(), logits.end());
  line_.push_back(line);
}

namespace {

struct Storage {
  std::vector<uint32_t> seq, step, next_use;
  std::vector<uint8_t> phase;
  std::vector<uint16_t> layer, experts;
  std::vector<float> weights, logits;
};

// The canonical sort key: seq, phase, then (layer, step) for prefill or (step, layer) for decode.
struct SortKey {
  uint64_t hi;  // seq << 8 | phase
  uint64_t lo;
  bool operator<(const SortKey& o) const { return hi != o.hi ? hi < o.hi : lo < o.lo; }
  bool operator==(const SortKey& o) const { return hi == o.hi && lo == o.lo; }
};

SortKey key_of(uint32_t seq, uint8_t phase, uint32_t step, uint16_t layer) {
  SortKey k;
  k.hi = (uint64_t{seq} << 8) | phase;
  k.lo = phase == static_cast<uint8_t>(Phase::kPrefill) ? (uint64_t{layer} << 32) | step
                                                         : (uint64_t{step} << 16) | layer;
  return k;
}

void compute_next_use(const TraceInfo& info, Storage& s) {
  const uint64_t slots = s.experts.size();
  if (slots >= kNoNextUse) throw Error("trace too large: more than 4,294,967,294 expert slots");
  s.next_use.assign(slots, kNoNextUse);
  std::vector<uint32_t> last(size_t{info.layers} * info.experts, kNoNextUse);
  const uint32_t k = info.top_k;
  for (uint64_t pos = slots; pos-- > 0;) {
    const size_t r = pos / k;
    const uint32_t key = uint32_t{s.layer[r]} * info.experts + s.experts[pos];
    s.next_use[pos] = last[key];
    last[key] = static_cast<uint32_t>(pos);
  }
}

Trace build(TraceInfo info, Storage&& s) {
  if (uint64_t{info.layers} * info.experts > kMaxLayerExperts)
    throw Error("trace shape " + std::to_string(info.layers) + " layers x " + std::to_string(info.experts) +
                " experts is above the supported " + std::to_string(kMaxLayerExperts) + " (layer, expert) pairs");
  compute_next_use(info, s);
  auto owner = std::make_shared<Storage>(std::move(s));
  TraceColumns c;
  c.seq = owner->seq;
  c.phase = owner->phase;
  c.step = owner->step;
  c.layer = owner->layer;
  c.experts = owner->experts;
  c.weights = owner->weights;
  c.logits = owner->logits;
  c.next_use = owner->next_use;
  info.missing_cells = count_missing_cells(c, info.layers);
  return Trace(std::move(info), c, owner);
}

}  // namespace

int canonical_compare(uint32_t seq_a, uint8_t phase_a, uint32_t step_a, uint16_t layer_a, uint32_t seq_b,
                      uint8_t phase_b, uint32_t step_b, uint16_t layer_b) {
  const SortKey a = key_of(seq_a, phase_a, step_a, layer_a), b = key_of(seq_b, phase_b, step_b, layer_b);
  return a < b ? -1 : b < a ? 1 : 0;
}

uint64_t count_missing_cells(const TraceColumns& c, uint32_t layers) {
  uint64_t missing = 0;
  size_t r = 0;
  const size_t n = c.seq.size();
  while (r < n) {
    size_t e = r;
    uint32_t max_step = 0;
    while (e < n && c.seq[e] == c.seq[r] && c.phase[e] == c.phase[r]) max_step = std::max(max_step, c.step[e++]);
    missing += (uint64_t{max_step} + 1) * layers - (e - r);
    r = e;
  }
  return missing;
}

Trace TraceBuilder::finish() && {
  size_t n = seq_.size();
  if (n == 0) throw input_error(origin_, 0, "", "no routing records");
  if (info_.layers == 0) info_.layers = max_layer_ + 1;
  if (info_.experts == 0) info_.experts = max_expert_ + 1;
  if (!info_.expert_bytes.empty() && info_.expert_bytes.size() != info_.layers)
    throw input_error(origin_, 0, "expert_bytes",
                      std::to_string(info_.expert_bytes.size()) + " per-layer sizes for " +
                          std::to_string(info_.layers) + " layers");

  std::vector<SortKey> keys(n);
  for (size_t i = 0; i < n; ++i) keys[i] = key_of(seq_[i], phase_[i], step_[i], layer_[i]);
  std::vector<uint32_t> order(n);
  std::iota(order.begin(), order.end(), 0u);
  std::stable_sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) { return keys[a] < keys[b]; });
  // The sort is stable, so the first of equal keys is the record added first.
  size_t kept = n > 0 ? 1 : 0;
  for (size_t i = 1; i < n; ++i) {
    const uint32_t a = order[kept - 1], b = order[i];
    if (keys[b] == keys[a]) {
      if (drop_duplicates_) continue;
      throw input_error(origin_, line_[b], "",
                        "duplicate record for sequence " + std::to_string(seq_[b]) + ", " +
                            phase_name(static_cast<Phase>(phase_[b])) + " step " + std::to_string(step_[b]) +
                            ", layer " + std::to_string(layer_[b]) + " (first seen at line " +
                            std::to_string(line_[a]) + "; --drop-duplicates keeps the first)");
    }
    order[kept++] = b;
  }
  if (drop_duplicates_) {
    const size_t dropped = n - kept;
    info_.provenance["duplicates_dropped"] = dropped;
    if (dropped)
      warn(origin_ + ": --drop-duplicates dropped " + std::to_string(dropped) +
           " duplicate records (kept the first record of each cell)");
    order.resize(kept);
  }

  const uint32_t k = info_.top_k, E = info_.experts;
  n = order.size();
  Storage s;
  s.seq.resize(n);
  s.phase.resize(n);
  s.step.resize(n);
  s.layer.resize(n);
  s.experts.resize(n * k);
  if (with_weights_) s.weights.resize(n * k);
  if (with_logits_) s.logits.resize(n * size_t{E});
  for (size_t i = 0; i < n; ++i) {
    const uint32_t o = order[i];
    s.seq[i] = seq_[o];
    s.phase[i] = phase_[o];
    s.step[i] = step_[o];
    s.layer[i] = layer_[o];
    std::copy_n(experts_.begin() + size_t{o} * k, k, s.experts.begin() + i * k);
    if (with_weights_) std::copy_n(weights_.begin() + size_t{o} * k, k, s.weights.begin() + i * k);
    if (with_logits_) std::copy_n(logits_.begin() + size_t{o} * E, E, s.logits.begin() + i * E);
  }
  return build(std::move(info_), std::move(s));
}

Trace with_info(const Trace& t, TraceInfo info) {
  if (info.top_k != t.info().top_k) throw Error("cannot change a trace's top_k");
  const auto& c = t.columns();
  for (size_t r = 0; r < t.records(); ++r)
    if (c.layer[r] >= info.layers)
      throw Error("trace has layer " + std::to_string(c.layer[r]) + " but the model has " +
                  std::to_string(info.layers) + " MoE layers");
  for (uint16_t e : c.experts)
    if (e >= info.experts)
      throw Error("trace has expert id " + std::to_string(e) + " but the model has " +
                  std::to_string(info.experts) + " routed experts per layer");
  if (t.has_logits() && info.experts != t.info().experts)
    throw Error("trace has " + std::to_string(t.info().experts) + " logits per record but the model has " +
                std::to_string(info.experts) + " experts");
  Storage s;
  s.seq.assign(c.seq.begin(), c.seq.end());
  s.phase.assign(c.phase.begin(), c.phase.end());
  s.step.assign(c.step.begin(), c.step.end());
  s.layer.assign(c.layer.begin(), c.layer.end());
  s.experts.assign(c.experts.begin(), c.experts.end());
  s.weights.assign(c.weights.begin(), c.weights.end());
  s.logits.assign(c.logits.begin(), c.logits.end());
  return build(std::move(info), std::move(s));
}

}  // namespace moesim::traces
