// The description of a trace that every command's JSON output carries, with the same keys and units
// everywhere (docs/cli-json.md): `trace info --json` at its top level, `replay` and `trace stats` under
// "trace". Keys: path, model, synthetic, layers, experts, top_k, sequences, prefill_tokens, decode_tokens,
// records, missing_cells, invocations / lookups / decode_lookups (of the batch-1 lookup stream,
// traces/lookup_stream.h), optional_columns, expert_bytes (per layer; null when unknown), provenance.
#pragma once

#include <string>

#include "base/json_io.h"
#include "traces/lookup_stream.h"
#include "traces/trace.h"

namespace moesim::traces {

// `batch1` must be build_lookup_stream(t, 1).
Json trace_summary_json(const Trace& t, const std::string& path, const LookupStream& batch1);

// The same from counts known without the records (the lookup index of an .mtr file).
struct TraceCounts {
  uint64_t sequences = 0, prefill_tokens = 0, decode_tokens = 0, records = 0;
  uint64_t invocations = 0, lookups = 0, decode_lookups = 0;  // of the batch-1 lookup stream
  bool has_weights = false, has_logits = false;
};
Json trace_summary_json(const TraceInfo& info, const std::string& path, const TraceCounts& n);

}  // namespace moesim::traces
