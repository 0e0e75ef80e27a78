// Adapts a traces::LookupStream to the core-level WorkloadView the pipeline walks (core/ may not include
// traces/, docs/architecture.md §2). The view borrows the stream's arrays; the stream must outlive it.
#pragma once

#include "core/workload.h"
#include "traces/lookup_stream.h"

namespace moesim::serving {

inline WorkloadView workload_view(const traces::LookupStream& s) {
  WorkloadView w;
  w.layers = s.layers;
  w.experts = s.experts;
  w.batch = s.batch;
  w.top_k = s.top_k;
  w.step_begin = s.step_begin;
  w.step_phase = s.step_phase;
  w.step_tokens = s.step_tokens;
  w.seq_first_step = s.seq_first_step;
  w.seq_last_step = s.seq_last_step;
  w.lookups = traces::lookup_view(s);
  w.tokens = s.tokens;
  return w;
}

}  // namespace moesim::serving
