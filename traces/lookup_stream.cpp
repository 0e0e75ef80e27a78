#include "traces/lookup_stream.h"

#include <sys/mman.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <new>
#include <thread>

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

// How far a build has got, for LookupViewBuilder::prefault on another thread: lookups and invocations
// written (each a lower bound of what the arrays will hold), and whether the build has ended.
struct BuildProgress {
  std::atomic<size_t> lookups{0}, invocations{0};
  std::atomic<bool> sized{false};  // the counts are final (the steps are built)
  std::atomic<bool> done{false};   // build() has returned or thrown
};

// Where the builders write the per-lookup and per-invocation arrays, by index (so that a lookup costs a store
// rather than a push_back's capacity check), sized to their upper bounds (a lookup per slot, an invocation
// per record): a LookupStream's vectors (empty_stream), or the view's own storage (build_lookup_view).
struct StreamArrays {
  uint32_t* key = nullptr;
  uint32_t* tokens = nullptr;  // null: token counts not built
  uint32_t* inv_begin = nullptr;
  uint16_t* inv_layer = nullptr;
  uint8_t* inv_phase = nullptr;
  uint32_t* refresh_begin = nullptr;
  // The refreshes, sized to their upper bound (a refresh per lookup at most), or null: appended to the
  // stream's vector (whose size is not known beforehand, and a vector's zero-fill of the bound would cost
  // more than its growth).
  uint32_t* refresh = nullptr;
};

// Accumulates one invocation: unique experts in first-touch order with token counts, and the refreshes
// of its duplicate touches (see the header), into `a` (the refreshes into out.refresh without a.refresh).
class InvocationBuilder {
 public:
  // `ids`: the range of expert ids it indexes by (the trace's experts; any u16 for unchecked records).
  InvocationBuilder(LookupStream& out, const StreamArrays& a, uint32_t ids)
      : out_(out),
        a_(a),
        tokens_(a.tokens != nullptr),
        key_(a.key),
        tok_(a.tokens),
        pos_(ids, kNone),
        seen_(ids, 0) {
    a_.inv_begin[0] = 0;
    a_.refresh_begin[0] = 0;
  }

  size_t invocations() const { return n_inv_; }
  size_t lookups() const { return n_key_; }
  size_t refreshes() const { return a_.refresh ? n_ref_ : out_.refresh.size(); }

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

  // Records [r0, r1), each a whole invocation (the decode tokens of one step at batch 1): a record's ids
  // are distinct (a Trace guarantees it), so there is nothing to merge or refresh, and each array is written
  // a run at a time. The slots are unrolled for the presets' common top-k.
  void singles(const TraceColumns& c, uint32_t k, size_t r0, size_t r1, Phase phase) {
    switch (k) {
      case 6:
        return singles_k<6>(c, k, r0, r1, phase);
      case 8:
        return singles_k<8>(c, k, r0, r1, phase);
      default:
        return singles_k<0>(c, k, r0, r1, phase);
    }
  }

 private:
  template <uint32_t K>
  void singles_k(const TraceColumns& c, uint32_t k_any, size_t r0, size_t r1, Phase phase) {
    const uint32_t k = K != 0 ? K : k_any;
    const size_t n = r1 - r0;
    const uint16_t* ids = c.experts.data() + r0 * k;
    const uint16_t* layer = c.layer.data() + r0;
    uint32_t* key = key_ + n_key_;
    for (size_t i = 0; i < n; ++i) {
      const uint32_t base = uint32_t{layer[i]} * out_.experts;
      for (uint32_t s = 0; s < k; ++s) key[i * k + s] = base + ids[i * k + s];
    }
    if (tokens_) std::fill_n(tok_ + n_key_, n * k, 1u);
    std::copy_n(layer, n, a_.inv_layer + n_inv_);
    std::fill_n(a_.inv_phase + n_inv_, n, static_cast<uint8_t>(phase));
    const auto first = static_cast<uint32_t>(n_key_);
    uint32_t* inv_begin = a_.inv_begin + n_inv_ + 1;
    for (size_t i = 0; i < n; ++i) inv_begin[i] = first + static_cast<uint32_t>((i + 1) * k);
    std::fill_n(a_.refresh_begin + n_inv_ + 1, n, static_cast<uint32_t>(refreshes()));
    n_key_ += n * k;
    n_inv_ += n;
  }

  void push_invocation(uint32_t layer, Phase phase) {
    a_.inv_layer[n_inv_] = static_cast<uint16_t>(layer);
    a_.inv_phase[n_inv_] = static_cast<uint8_t>(phase);
    ++n_inv_;
    a_.inv_begin[n_inv_] = static_cast<uint32_t>(n_key_);
    a_.refresh_begin[n_inv_] = static_cast<uint32_t>(refreshes());
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
    const auto from = last_order_.begin() + static_cast<std::ptrdiff_t>(keep);
    if (a_.refresh) {
      n_ref_ = static_cast<size_t>(std::copy(from, last_order_.end(), a_.refresh + n_ref_) - a_.refresh);
    } else {
      out_.refresh.insert(out_.refresh.end(), from, last_order_.end());
    }
  }

  LookupStream& out_;
  StreamArrays a_;
  bool tokens_;
  uint32_t* key_;  // a_.key, sized to the trace's slots
  uint32_t* tok_;  // a_.tokens, or null
  size_t n_key_ = 0, n_inv_ = 0, n_ref_ = 0;
  std::vector<uint32_t> pos_;   // [ids] lookup index of an expert in the open invocation
  std::vector<uint32_t> seen_;  // [ids] epoch stamps for add_refreshes
  uint32_t epoch_ = 0;
  std::vector<uint16_t> touched_;  // unique experts of the open invocation, first-touch order
  std::vector<uint16_t> touches_;  // every touch of the open invocation
  std::vector<uint32_t> last_order_;
};

struct SeqRange {
  size_t prefill_begin, prefill_end, decode_begin, decode_end;
};

// A stream with its header and its first step offset, without arrays.
LookupStream stream_header(const Trace& trace, uint32_t batch) {
  const auto& info = trace.info();
  LookupStream out;
  out.layers = info.layers;
  out.top_k = info.top_k;
  out.experts = info.experts;
  out.batch = batch;
  out.step_begin.push_back(0);
  return out;
}

// A stream with its header, its arrays sized to their upper bounds (StreamArrays) and trimmed at the end.
LookupStream empty_stream(const Trace& trace, uint32_t batch, const LookupStreamParts& parts) {
  LookupStream out = stream_header(trace, batch);
  out.key.resize(trace.slots());
  if (parts.tokens) out.tokens.resize(trace.slots());
  out.inv_begin.resize(trace.records() + 1);
  out.inv_layer.resize(trace.records());
  out.inv_phase.resize(trace.records());
  out.refresh_begin.resize(trace.records() + 1);
  return out;
}

StreamArrays arrays_of(LookupStream& s) {
  return StreamArrays{.key = s.key.data(),
                      .tokens = s.tokens.empty() ? nullptr : s.tokens.data(),
                      .inv_begin = s.inv_begin.data(),
                      .inv_layer = s.inv_layer.data(),
                      .inv_phase = s.inv_phase.data(),
                      .refresh_begin = s.refresh_begin.data()};
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
  StepBuilder(LookupStream& out, const StreamArrays& a, const Trace& trace, const std::vector<SeqRange>& seqs,
              uint32_t batch, uint32_t ids, BuildProgress* progress)
      : out_(out),
        progress_(progress),
        trace_(trace),
        seqs_(seqs),
        inv_(out, a, ids),
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
        size_t step_end = r + 1;
        while (step_end < end_[0] && c.step[step_end] == step) ++step_end;
        inv_.singles(c, k, r, step_end, Phase::kDecode);
        r = step_end;
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

  size_t invocations() const { return inv_.invocations(); }
  size_t lookups() const { return inv_.lookups(); }

  // Copies each sequence's first and last step to the stream, for those that have any.
  void finish() {
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
    if (progress_) {  // relaxed: the prefaulter only needs the counts to grow, never the arrays' contents
      progress_->lookups.store(inv_.lookups(), std::memory_order_relaxed);
      progress_->invocations.store(inv_.invocations(), std::memory_order_relaxed);
    }
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
  BuildProgress* progress_;  // null: nobody watches
  const Trace& trace_;
  const std::vector<SeqRange>& seqs_;
  InvocationBuilder inv_;
  // The steps of every sequence (kNone: none yet), copied to the stream for those that have any.
  std::vector<uint32_t> first_step_, last_step_;
  std::vector<size_t> cur_, end_, step_end_;  // per sequence of the group: next record, decode end, step end
  std::vector<char> is_active_;
};

// Each lookup's next use: a backward scan over the invocations (`keys`: layers x experts). kBounded: the
// keys may be out of range (unchecked records, build_lookup_view), and such a key is skipped.
template <bool kBounded>
void fill_next_use(const uint32_t* key, const uint32_t* inv_begin, size_t invocations, size_t keys,
                   uint32_t* next_use) {
  std::vector<uint32_t> next(keys, kNoNextUse);
  for (size_t j = invocations; j-- > 0;)
    for (uint32_t i = inv_begin[j]; i < inv_begin[j + 1]; ++i) {
      if (kBounded && key[i] >= keys) continue;
      next_use[i] = next[key[i]];
      next[key[i]] = static_cast<uint32_t>(j);
    }
}

// Builds the steps of every group of `batch` sequences into `out` and the arrays `a`, and says how many
// invocations and lookups the arrays hold. `ids`: as InvocationBuilder's. `progress` (or null) is told the
// counts after every step.
void build_steps(LookupStream& out, const StreamArrays& a, const Trace& trace, uint32_t batch, uint32_t ids,
                 size_t& invocations, size_t& lookups, BuildProgress* progress = nullptr) {
  const std::vector<SeqRange> seqs = sequence_ranges(trace);
  StepBuilder steps(out, a, trace, seqs, batch, ids, progress);
  for (size_t g = 0; g < seqs.size(); g += batch) {
    const size_t g_end = std::min(seqs.size(), g + batch);
    for (size_t i = g; i < g_end; ++i) steps.prefill(i);
    steps.decode(g, g_end - g);
  }
  steps.finish();
  invocations = steps.invocations();
  lookups = steps.lookups();
}

// Anonymous memory for build_lookup_view's arrays. Unlike a vector's it is not zero-filled here: the builder
// writes every element the view reads before it is read, and a page never written is never touched. Not
// advised as transparent huge pages: a fresh 2 MiB page can cost more to fault in than the 4 KiB pages the
// kernel reuses, and made the load's time vary (bench/results/replay.md).
class ViewMemory {
 public:
  explicit ViewMemory(size_t bytes) : len_(bytes + 1) {
    void* p = ::mmap(nullptr, len_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) throw std::bad_alloc();
    data_ = static_cast<char*>(p);
  }
  ViewMemory(const ViewMemory&) = delete;
  ViewMemory& operator=(const ViewMemory&) = delete;
  ~ViewMemory() { ::munmap(data_, len_); }
  char* data() const { return data_; }

 private:
  size_t len_;
  char* data_ = nullptr;
};

// Byte offsets of the view's arrays in ViewMemory, each 64-byte aligned, at their upper bounds.
struct ViewLayout {
  size_t key, next_use, inv_begin, refresh_begin, refresh, inv_layer, inv_phase, bytes;
  ViewLayout(uint64_t slots, uint64_t records, bool with_next_use) {
    size_t at = 0;
    auto take = [&at](uint64_t n) {
      const size_t o = at;
      at = (at + static_cast<size_t>(n) + 63) / 64 * 64;
      return o;
    };
    key = take(4 * slots);
    next_use = take(with_next_use ? 4 * slots : 0);
    inv_begin = take(4 * (records + 1));
    refresh_begin = take(4 * (records + 1));
    refresh = take(4 * slots);
    inv_layer = take(2 * records);
    inv_phase = take(records);
    bytes = at;
  }
};

// What a view's build keeps: the header and the steps (no per-lookup vectors), and the arrays' memory.
struct ViewHeld {
  LookupStream stream;
  ViewMemory memory;
  explicit ViewHeld(size_t bytes) : memory(bytes) {}
};

}  // namespace

LookupStream build_lookup_stream(const Trace& trace, uint32_t batch, const LookupStreamParts& parts) {
  if (batch == 0) throw Error("batch size must be at least 1");
  LookupStream out = empty_stream(trace, batch, parts);
  size_t invocations = 0, lookups = 0;
  build_steps(out, arrays_of(out), trace, batch, trace.info().experts, invocations, lookups);
  out.key.resize(lookups);
  if (parts.tokens) out.tokens.resize(lookups);
  out.inv_begin.resize(invocations + 1);
  out.inv_layer.resize(invocations);
  out.inv_phase.resize(invocations);
  out.refresh_begin.resize(invocations + 1);
  if (parts.next_use) {
    out.next_use.resize(lookups);
    fill_next_use<false>(out.key.data(), out.inv_begin.data(), invocations, size_t{out.layers} * out.experts,
                         out.next_use.data());
  }
  return out;
}

struct LookupViewBuilder::State {
  const Trace& trace;
  bool with_next_use;
  ViewLayout at;
  std::shared_ptr<ViewHeld> held;
  BuildProgress progress;
  State(const Trace& t, bool nu)
      : trace(t),
        with_next_use(nu),
        at(t.slots(), t.records(), nu),
        held(std::make_shared<ViewHeld>(at.bytes)) {}
};

LookupViewBuilder::LookupViewBuilder(const Trace& trace, bool with_next_use)
    : s_(std::make_unique<State>(trace, with_next_use)) {}

LookupViewBuilder::~LookupViewBuilder() = default;

BuiltLookupView LookupViewBuilder::build() {
  State& st = *s_;
  struct Done {  // the prefaulter stops however the build ends
    BuildProgress& p;
    ~Done() { p.done.store(true, std::memory_order_release); }
  } done{st.progress};
  const ViewLayout& at = st.at;
  const Trace& trace = st.trace;
  st.held->stream = stream_header(trace, 1);
  char* m = st.held->memory.data();
  const StreamArrays a{.key = reinterpret_cast<uint32_t*>(m + at.key),
                       .inv_begin = reinterpret_cast<uint32_t*>(m + at.inv_begin),
                       .inv_layer = reinterpret_cast<uint16_t*>(m + at.inv_layer),
                       .inv_phase = reinterpret_cast<uint8_t*>(m + at.inv_phase),
                       .refresh_begin = reinterpret_cast<uint32_t*>(m + at.refresh_begin),
                       .refresh = reinterpret_cast<uint32_t*>(m + at.refresh)};
  size_t invocations = 0, lookups = 0;
  // Every u16 id indexes the builder's tables, so that records not yet checked are safe to build from
  // (build_lookup_view's contract in the header).
  build_steps(st.held->stream, a, trace, 1, uint32_t{UINT16_MAX} + 1, invocations, lookups, &st.progress);
  st.progress.lookups.store(lookups, std::memory_order_relaxed);
  st.progress.invocations.store(invocations, std::memory_order_relaxed);
  st.progress.sized.store(true, std::memory_order_release);
  BuiltLookupView b;
  LookupView& v = b.view;
  v.inv_begin = {a.inv_begin, invocations + 1};
  v.inv_layer = {a.inv_layer, invocations};
  v.inv_phase = {a.inv_phase, invocations};
  v.key = {a.key, lookups};
  v.refresh_begin = {a.refresh_begin, invocations + 1};
  v.refresh = {a.refresh, a.refresh_begin[invocations]};
  if (st.with_next_use) {
    auto* next_use = reinterpret_cast<uint32_t*>(m + at.next_use);
    fill_next_use<true>(a.key, a.inv_begin, invocations, size_t{trace.info().layers} * trace.info().experts,
                        next_use);
    v.next_use = {next_use, lookups};
  }
  for (size_t i = 0; i < invocations; ++i)  // as LookupStream::decode_lookups
    b.decode_lookups += uint64_t{a.inv_phase[i] == static_cast<uint8_t>(Phase::kDecode)} *
                        (a.inv_begin[i + 1] - a.inv_begin[i]);
  b.storage = st.held;
  return b;
}

void LookupViewBuilder::prefault() {
#ifdef MADV_POPULATE_WRITE
  State& st = *s_;
  const ViewLayout& at = st.at;
  char* m = st.held->memory.data();
  const size_t page = 4096;
  // How far ahead of the builder's writes pages are faulted in (in lookups; invocations in proportion): a
  // few hundred pages, so that the builder never catches up, and few pages are faulted in past the arrays'
  // final ends (the bounds are a lookup per slot and an invocation per record).
  const size_t lead_lookups = size_t{1} << 17;
  const size_t lead_invocations =
      lead_lookups * st.trace.records() / std::max<size_t>(1, st.trace.slots()) + 1;
  struct Region {
    size_t offset, elem, bound;
    bool per_lookup;
    bool behind;         // written by the steps, up to the progress (else after them: next uses, backwards)
    size_t faulted = 0;  // bytes from offset faulted in
  };
  Region regions[] = {{at.key, 4, st.trace.slots(), true, true},
                      {at.inv_begin, 4, st.trace.records() + 1, false, true},
                      {at.refresh_begin, 4, st.trace.records() + 1, false, true},
                      {at.inv_layer, 2, st.trace.records(), false, true},
                      {at.inv_phase, 1, st.trace.records(), false, true},
                      {at.next_use, 4, st.with_next_use ? st.trace.slots() : 0, true, false}};
  const size_t max_chunk = size_t{64} * page;  // per call, so that the progress is read often
  while (!st.progress.done.load(std::memory_order_acquire)) {
    const bool sized = st.progress.sized.load(std::memory_order_acquire);
    const size_t lookups = st.progress.lookups.load(std::memory_order_relaxed);
    const size_t invocations = st.progress.invocations.load(std::memory_order_relaxed);
    bool any = false;
    for (Region& r : regions) {
      const size_t at_now = r.per_lookup ? lookups : invocations;
      const size_t lead = sized ? 0 : (r.per_lookup ? lead_lookups : lead_invocations);
      const size_t want = std::min(r.bound, at_now + lead + (sized ? 1 : 0)) * r.elem;
      // Start at the page the builder is writing (the builder has faulted in those below), or past what was
      // faulted in already.
      const size_t from = r.behind ? std::max(r.faulted, at_now * r.elem / page * page) : r.faulted;
      if (want <= from) continue;
      const size_t len = std::min(want - from, max_chunk);
      const auto addr = reinterpret_cast<uintptr_t>(m + r.offset + from) / page * page;
      const size_t span = reinterpret_cast<uintptr_t>(m + r.offset + from + len) - addr;
      if (::madvise(reinterpret_cast<void*>(addr), span, MADV_POPULATE_WRITE) != 0)
        return;  // not supported here, or no memory: the builder faults its pages itself
      r.faulted = from + len;
      any = true;
    }
    if (!any) std::this_thread::sleep_for(std::chrono::microseconds(20));
  }
#endif
}

BuiltLookupView build_lookup_view(const Trace& trace, bool with_next_use) {
  return LookupViewBuilder(trace, with_next_use).build();
}

}  // namespace moesim::traces
