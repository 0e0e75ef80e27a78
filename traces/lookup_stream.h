// The lookup stream: a trace turned into the cache lookups it causes, under the lookup semantics of
// ARCHITECTURE.md §4 (shared by `replay`, `run` and `exec`, so that every tool counts the same lookups):
//
//   * The unit of lookup is one layer invocation. A prefill pass is one invocation per layer over all
//     prompt tokens of a sequence; decode is one invocation per token step per layer, layers in order.
//   * Inside an invocation each unique expert is looked up once (in order of first appearance, rank
//     order within a token); duplicates only add to its token count.
//   * Batch size B > 1: sequences are grouped B at a time in trace order. Each sequence's prompt is a
//     prefill step of its own; then the group decodes together: decode step s of the group invokes each
//     layer once over the union of the experts of the group's sequences that have step s.
//   * A layer with no record in a step (a missing cell) has no invocation: nothing is invented.
//
// next_use[i] is the index of the next invocation that looks up the same (layer, expert) as lookup i, or
// kNoNextUse; Belady and other oracle policies read it.
#pragma once

#include <cstdint>
#include <vector>

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

  // Invocations.
  std::vector<uint32_t> inv_begin;  // [invocations + 1] offsets into the lookup arrays
  std::vector<uint16_t> inv_layer;
  std::vector<uint8_t> inv_phase;

  // Lookups.
  std::vector<uint32_t> key;       // layer * experts + expert
  std::vector<uint32_t> tokens;    // tokens of the invocation routed to this expert (>= 1)
  std::vector<uint32_t> next_use;  // next invocation with the same key, or kNoNextUse

  size_t steps() const { return step_phase.size(); }
  size_t invocations() const { return inv_layer.size(); }
  size_t lookups() const { return key.size(); }
  uint64_t decode_lookups() const;
};

LookupStream build_lookup_stream(const Trace& trace, uint32_t batch = 1);

}  // namespace moesim::traces
