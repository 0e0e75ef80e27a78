// The `moesim trace` subcommands that read a trace: info, stats, export and import (`trace synth` is
// harness/trace_synth_job.h). Each function takes the command's options, does the work, writes the data
// files its options name (export's and import's -o) and returns what it found as data and as the JSON
// document --json prints; cli/trace_*.cpp turn that into their text.
//   trace info T    shape, sequences, prefill/decode tokens, lookups under the lookup semantics of
//                   traces/lookup_stream.h (batch 1), missing cells, optional columns, expert sizes
//   trace stats T   per-layer activation entropy, rank-frequency curve, reuse distances, next-token repeat
//                   rate and co-activated pairs (definitions in traces/stats.h, JSON in docs/trace-stats.md)
//   trace export T  any trace as JSONL, one routing record per line in canonical order
//                   (traces/export_jsonl.cpp; `fields` names the output keys), or with to = oraclegeneral
//                   the trace's lookup stream at `batch` as libCacheSim's oracleGeneral binary trace
//                   (traces/export_oracle_general.h), one request per lookup
//   trace import IN...  any importable trace into the canonical .mtr file (written atomically; nothing on
//                   failure), with its lookup index unless lookup_index is false; several inputs become
//                   several sequences of one trace (traces::load_traces)
// Every function reads every importable format (traces/trace_io.h load_trace) and throws UsageError for a
// bad option and moesim::Error for a bad trace, naming the file.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "base/json_io.h"
#include "traces/stats.h"
#include "traces/trace.h"
#include "traces/trace_io.h"

namespace moesim::harness {

struct TraceInfoArgs {
  std::string path;
  traces::LoadOptions load;  // --format, --fields, --model and the import options
  std::string out = "-";     // only checked to be writable before the trace is read
};

struct TraceInfoResult {
  traces::TraceInfo info;
  size_t records = 0;
  size_t invocations = 0, lookups = 0;  // of the batch-1 lookup stream
  uint64_t decode_lookups = 0;
  Json summary;  // traces/trace_summary.h: the same keys as replay's and trace stats' "trace"
  Json doc;      // the document `trace info --json` prints: header, warnings, then the summary's keys
};

// Loads the trace (with the plausibility warnings of a batch-1 run) and describes it.
TraceInfoResult trace_info(const TraceInfoArgs& a);
// The description of a trace already loaded (the Python module's Trace.summary()): `path` and `load` name it
// and the options it was loaded with.
TraceInfoResult describe_trace(const traces::Trace& t, const std::string& path,
                               const traces::LoadOptions& load);

struct TraceStatsArgs {
  std::string trace;
  traces::LoadOptions load;
  uint32_t top_pairs = 10;  // co-activated pairs per layer, >= 1
  bool json = false;        // also build the --json document (it costs the batch-1 lookup stream)
  std::string out = "-";    // only checked to be writable before the trace is read
};

struct TraceStatsResult {
  traces::TraceStats stats;
  Json doc;  // with a.json: header, the statistics, "trace" (traces/trace_summary.h), warnings
};

TraceStatsResult trace_stats(const TraceStatsArgs& a);

struct TraceExportArgs {
  std::string in, out;       // out: a file, or "-" for standard output
  std::string fields;        // JSONL output keys: seq=KEY,token=KEY,...
  std::string to = "jsonl";  // jsonl or oraclegeneral
  uint32_t batch = 1;        // oraclegeneral only
  traces::LoadOptions load;  // reading `in`
};

struct TraceExportResult {
  std::string format;  // jsonl or oraclegeneral
  size_t count = 0;    // records written (jsonl) or requests (oraclegeneral)
  Json wrote;          // what --json summarises (cli/summary_json.h print_summary_json)
};

TraceExportResult trace_export(const TraceExportArgs& a);

struct TraceImportArgs {
  std::vector<std::string> inputs;
  std::string out;
  traces::LoadOptions load;
  bool lookup_index = true;  // format version 2 with the batch-1 lookup stream; false: version 1
};

struct TraceImportResult {
  traces::TraceInfo info;  // its provenance counts what --where, --skip-warmup and --drop-duplicates removed
  size_t records = 0, sequences = 0;
  Json wrote;  // what --json summarises (cli/summary_json.h print_summary_json)
};

TraceImportResult trace_import(const TraceImportArgs& a);

}  // namespace moesim::harness
