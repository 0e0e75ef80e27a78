#include "harness/trace_job.h"

#include "base/atomic_file.h"
#include "base/error.h"
#include "base/warnings.h"
#include "core/run_info.h"
#include "harness/arguments.h"
#include "traces/export_oracle_general.h"
#include "traces/lookup_stream.h"
#include "traces/mtr_format.h"
#include "traces/trace_summary.h"

namespace moesim::harness {

TraceInfoResult describe_trace(const traces::Trace& t, const std::string& path,
                               const traces::LoadOptions& load) {
  TraceInfoResult r;
  const traces::LookupStream ls = traces::build_lookup_stream(t, 1);
  r.info = t.info();
  r.records = t.records();
  r.invocations = ls.invocations();
  r.lookups = ls.lookups();
  r.decode_lookups = ls.decode_lookups();
  r.summary = traces::trace_summary_json(t, path, ls);
  const Json config = {
      {"trace", path}, {"format", load.format}, {"fields", load.fields}, {"model", load.model}};
  r.doc = Json::object();
  r.doc["header"] = run_header("trace info", config);
  r.doc["warnings"] = warnings_json();
  r.doc.update(r.summary);
  return r;
}

TraceInfoResult trace_info(const TraceInfoArgs& a) {
  require_trace_input(a.path);
  check_output_writable(a.out);
  const traces::Trace t = traces::load_trace(a.path, a.load);
  warn_trace_plausibility(a.path, t, 1);
  return describe_trace(t, a.path, a.load);
}

TraceStatsResult trace_stats(const TraceStatsArgs& a) {
  require_trace_input(a.trace);
  require_at_least("--top-pairs", a.top_pairs, 1);
  check_output_writable(a.out);
  const traces::Trace t = traces::load_trace(a.trace, a.load);
  warn_trace_plausibility(a.trace, t, 1);
  traces::StatsOptions so;
  so.top_pairs = a.top_pairs;
  TraceStatsResult r;
  r.stats = traces::compute_stats(t, so);
  if (a.json) {
    const Json config = {{"trace", a.trace},
                         {"format", a.load.format},
                         {"fields", a.load.fields},
                         {"model", a.load.model},
                         {"top_pairs", a.top_pairs}};
    r.doc = traces::stats_to_json(r.stats, run_header("trace stats", config),
                                  traces::trace_summary_json(t, a.trace, traces::build_lookup_stream(t, 1)));
    r.doc["warnings"] = warnings_json();
  }
  return r;
}

TraceExportResult trace_export(const TraceExportArgs& a) {
  require_trace_input(a.in);
  if (a.to != "jsonl" && a.to != "oraclegeneral")
    throw UsageError("--to: unknown output format '" + a.to + "' (known: jsonl, oraclegeneral)");
  require_at_least("--batch", a.batch, 1);
  if (a.to != "oraclegeneral" && a.batch != 1) throw UsageError("--batch applies to --to oraclegeneral only");
  if (a.to == "oraclegeneral" && !a.fields.empty()) throw UsageError("--fields applies to --to jsonl only");
  const traces::FieldMap fm = traces::parse_field_map(a.fields);
  check_output_writable(a.out);
  const traces::Trace t = traces::load_trace(a.in, a.load);
  TraceExportResult r;
  r.format = a.to;
  if (a.to == "oraclegeneral") {
    const traces::LookupStream s = traces::build_lookup_stream(
        t, a.batch, traces::LookupStreamParts{.tokens = false, .next_use = false});
    traces::write_oracle_general(s, t.info().expert_bytes, a.out);
    r.count = s.lookups();
    r.wrote = {{"path", a.out},
               {"format", "oraclegeneral"},
               {"requests", r.count},
               {"record_bytes", traces::kOracleGeneralRecordBytes}};
    return r;
  }
  traces::export_jsonl_file(t, a.out, fm);
  r.count = t.records();
  r.wrote = {{"path", a.out}, {"format", "jsonl"}, {"records", r.count}};
  return r;
}

TraceImportResult trace_import(const TraceImportArgs& a) {
  require_trace_input(a.inputs.empty() ? std::string() : a.inputs.front());
  check_output_writable(a.out);
  const traces::Trace t = traces::load_traces(a.inputs, a.load);
  traces::write_mtr(t, a.out, traces::MtrWriteOptions{.lookup_index = a.lookup_index});
  TraceImportResult r;
  r.info = t.info();
  r.records = t.records();
  r.sequences = t.sequence_ids().size();
  r.wrote = {{"path", a.out},
             {"records", r.records},
             {"sequences", r.sequences},
             {"layers", r.info.layers},
             {"experts", r.info.experts},
             {"top_k", r.info.top_k},
             {"missing_cells", r.info.missing_cells},
             {"lookup_index", a.lookup_index}};
  for (const char* key : {"where_skipped", "warmup_dropped", "duplicates_dropped"})
    r.wrote[key] = r.info.provenance.contains(key) ? r.info.provenance[key] : Json(0);
  return r;
}

}  // namespace moesim::harness
