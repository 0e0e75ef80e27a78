// Metrics of a pipeline run (docs/architecture.md, "Outputs"), as JSON. Latencies are per sequence,
// whatever the trace's shape and the batch size, over the steps each sequence takes part in
// (PipelineResult::sequences): its first step is its prefill pass, or its first decode step when the trace
// has no prefill for it; its last step is its last decode step, or its prefill when it has no decode
// record. Steps are service times (serving/pipeline.h): a sequence starts when its first step starts, not when
// it was queued.
//   ttft            per sequence with a prefill pass: its first token's end - its start, which is its prefill
//                   step's duration (the prefill produces the first token). A sequence without a prefill pass
//                   (a decode-only trace) has no TTFT: its prompt was never simulated, and its first decode
//                   step's time is a TPOT, so it is left out (count 0 and null statistics when no sequence
//                   has a prefill)
//   tpot            decode step durations (time per output token of the batch group)
//   end_to_end      per sequence: from its first step's start to its last step's end. Prefill + decode:
//                   prefill start -> last decode step's end; decode-only: first decode step's start -> last
//                   decode step's end; prefill-only: its prefill's duration. With batch B > 1 a sequence's
//                   span includes the steps of the group's other sequences that run between its own (their
//                   prefills, the group's decode steps) up to its own last decode step
//   tokens_per_s    generated tokens / makespan, where a prefill produces a sequence's first token and a
//                   decode step one token per sequence decoding; decode_tokens_per_s over decode time only
//   layer_makespan  per layer invocation, from the layer's start (its dense op) to its last op's end;
//                   all invocations and decode invocations only
//   hit rates       cumulative and decode-only (the lookup semantics of traces/lookup_stream.h)
//   bytes read      from the SSD
//   utilization     of every resource: busy time / (units * makespan)
// Every distribution gives count, mean, p50, p90, p99 and max; percentiles use the nearest-rank method
// (the smallest value with at least p% of the values at or below it), so they are actual samples.
#pragma once

#include <vector>

#include "base/distribution.h"
#include "base/json_io.h"
#include "core/counters.h"
#include "serving/pipeline.h"

namespace moesim {


Json metrics_json(const PipelineResult& r);

}  // namespace moesim
