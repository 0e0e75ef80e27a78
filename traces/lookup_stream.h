// The lookup stream: a trace turned into the cache lookups it causes, under the lookup semantics of
// docs/architecture.md §4 (shared by `replay`, `run` and `exec`, so that every tool counts the same
// lookups):
//
//   * The unit of lookup is one layer invocation. A prefill pass is one invocation per layer over all
//     prompt tokens of a sequence; decode is one invocation per token step per layer, layers in order.
//   * Inside an invocation each unique expert is looked up once (in order of first appearance, rank
//     order within a token); duplicates add to its token count and refresh it (below).
//   * Batch size B > 1: sequences are grouped B at a time in trace order. Each sequence's prompt is a
//     prefill step of its own; then the group decodes together: decode step s of the group invokes each
//     layer once over the union of the experts of the group's sequences that have step s.
//   * A layer with no record in a step (a missing cell) has no invocation: nothing is invented.
//
// next_use[i] is the index of the next invocation that looks up the same (layer, expert) as lookup i, or
// kNoNextUse; Belady and other oracle policies read it.
//
// Refreshes ("duplicates only refresh it", docs/architecture.md §4). The touches of an invocation are its
// expert ids in execution order: tokens in order (for a batch, the group's sequences in order), each token's
// experts in rank order. A touch of an expert already looked up in the invocation refreshes its recency at
// that position: a prefill pass touching A, then B, then A leaves A more recent than B. Eviction runs only
// after the invocation (core/expert_cache.h), so only the order the invocation leaves behind matters: the
// experts ordered by LAST touch. The stream encodes it as the lookups (first-touch order, the order
// admissions happen in) followed by refresh[refresh_begin[i] .. refresh_begin[i+1]): lookup indices, in
// last-touch order, of the shortest suffix of the last-touch order whose removal leaves experts that
// already stand in last-touch order among the lookups. Looking the keys up and then refreshing these
// (move to most recent) leaves exactly the last-touch order; nothing is refreshed when no expert is touched
// twice (every decode invocation of batch 1). A refresh is not a lookup: no counter sees it. What each
// policy does with it is stated in its file (policies/eviction/) and in core/eviction_policy.h.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "core/cache_config.h"
#include "traces/trace.h"

namespace moesim::traces {

struct LookupStream {
  uint32_t layers = 0;
  uint32_t experts = 0;  // per layer; key = layer * experts + expert
  uint32_t batch = 1;
  uint32_t top_k = 0;  // experts each token picks per layer (the trace's top_k)

  // Steps: one prefill pass of one sequence, or one decode token step of a batch group.
  std::vector<uint32_t> step_begin;   // [steps + 1] offsets into invocations
  std::vector<uint8_t> step_phase;    // a Phase
  std::vector<uint32_t> step_tokens;  // prompt tokens (prefill) or sequences decoding (decode)

  // Sequences, in trace order (one without any invocation has no entry): the steps each one takes part in,
  // so that latencies are per sequence whatever the batch (serving/metrics.h).
  std::vector<uint32_t> seq_first_step;  // its prefill step, or its first decode step without prefill
  std::vector<uint32_t> seq_last_step;   // the last step it takes part in (its prefill when it has no decode)

  // Invocations.
  std::vector<uint32_t> inv_begin;  // [invocations + 1] offsets into the lookup arrays
  std::vector<uint16_t> inv_layer;
  std::vector<uint8_t> inv_phase;

  // Lookups.
  std::vector<uint32_t> key;       // layer * experts + expert
  std::vector<uint32_t> tokens;    // tokens of the invocation routed to this expert (>= 1)
  std::vector<uint32_t> next_use;  // next invocation with the same key, or kNoNextUse; empty if not built

  // Refreshes (see above).
  std::vector<uint32_t> refresh_begin;  // [invocations + 1] offsets into refresh
  std::vector<uint32_t> refresh;        // lookup index (into key) of a refreshed expert

  size_t steps() const { return step_phase.size(); }
  size_t invocations() const { return inv_layer.size(); }
  size_t lookups() const { return key.size(); }
  size_t refreshes() const { return refresh.size(); }
  uint64_t decode_lookups() const;
};

// What to build besides the invocations, keys and refreshes. A consumer that never reads a column can
// skip it (the cache-only replay reads no token counts): each is a 4-byte array per lookup.
struct LookupStreamParts {
  bool tokens = true;
  bool next_use = true;
};

LookupStream build_lookup_stream(const Trace& trace, uint32_t batch = 1, const LookupStreamParts& parts = {});

// The batch-1 stream's core-level view (below) with storage of its own, for a replay that reads nothing else
// (read_mtr_lookup_stream on a file without the index): equal to lookup_view(build_lookup_stream(trace, 1,
// {.tokens = false, .next_use = with_next_use})). Arrays written once, never zero-filled first, in one
// anonymous mapping (a page never written is never touched); `storage` owns them. Memory-safe on
// records that break a Trace's guarantees (any id, layer or order), so that the reader runs it beside its
// record check; only a valid trace's view means anything.
struct BuiltLookupView {
  LookupView view;
  uint64_t decode_lookups = 0;  // as LookupStream::decode_lookups
  std::shared_ptr<const void> storage;
};
BuiltLookupView build_lookup_view(const Trace& trace, bool with_next_use);

// build_lookup_view for two threads: build() writes the view (as build_lookup_view), and prefault(), called
// on another thread while build() runs, faults the view's fresh pages in a little ahead of its writes, so
// that the builder rarely stops at a page fault (the kernel's work for the 10-20 k fresh pages of a large
// trace's view is most of the build's time). prefault() returns once build() has returned (at once when it
// has already), or when the kernel has no MADV_POPULATE_WRITE (nothing is lost then: build() faults its pages
// itself). Either order of the two starts is safe; each is called at most once.
class LookupViewBuilder {
 public:
  LookupViewBuilder(const Trace& trace, bool with_next_use);
  ~LookupViewBuilder();
  LookupViewBuilder(const LookupViewBuilder&) = delete;
  LookupViewBuilder& operator=(const LookupViewBuilder&) = delete;
  BuiltLookupView build();
  void prefault();

 private:
  struct State;
  std::unique_ptr<State> s_;
};

// The stream's invocations, keys, next uses and refreshes as the core-level view the caches replay
// (core/cache_config.h). Borrows the arrays: `s` must outlive the view.
LookupView lookup_view(const LookupStream& s);

}  // namespace moesim::traces
