// Loading and saving traces in every supported format (docs/trace-format.md).
//
// load_trace() detects the format from the file's content (LoadOptions::format "auto"):
//   * the .mtr magic "MOESIMTR" at byte 0     -> the canonical binary format (mmap'd, fully validated)
//   * first line "# route_trace v1"           -> BigMoeOnEdge route CSV (traces/import_bigmoe.cpp)
//   * first non-blank byte '{'                -> JSONL, one routing record per line (traces/import_jsonl.cpp)
//   * anything else                           -> CSV with a header row (traces/import_csv.cpp)
// A UTF-8 byte order mark before the text is skipped. Before that, and for every text format, the first
// 4 KiB are checked: a NUL byte or invalid UTF-8 is "FILE: not a text trace (binary data at byte N)"; a
// file named *.mtr without the magic is "FILE: not an .mtr file (no MOESIMTR magic at byte 0)" (unless
// --format names a text format); a directory is "FILE: is a directory, not a file". LoadOptions::format
// ("mtr", "bigmoe", "jsonl", "csv") overrides the detection.
//
// The file is opened once (base/input_file.h): the format is detected from a buffered prefix of the same
// stream the importer then reads, so a FIFO, a pipe as /dev/stdin or a shell's <(cmd) works for every text
// format. The .mtr reader maps the file, so .mtr input must be a regular file; anything else is "FILE: is
// not a regular file (a pipe); the .mtr reader maps the file: save it to a file first".
//
// `fields` maps record fields to the user's key/column names for JSONL and CSV:
// "seq=KEY,token=KEY,layer=KEY,experts=KEY,weights=KEY,phase=KEY,logits=KEY" (any subset; defaults are the
// field names themselves). An unknown field is an error listing the known ones. --fields and every other
// JSONL/CSV-only option (token_from, layer_base, where, skip_warmup, drop_duplicates, delimiter) with .mtr
// or route_trace input is an error too (those formats have fixed columns).
//
// `model` (a preset name or a model JSON path, core/model_spec.h): layers and experts then come from the
// model and a trace that does not fit it (a layer >= moe_layers, an expert id >= routed_experts, a
// different layer/expert count declared by the trace) is an error; one layer too many suggests
// --layer-base 1. expert_bytes come from the model when the trace has none. Without a model, JSONL/CSV
// infer layers/experts as the largest id seen + 1.
//
// Every failure is a moesim::Error naming the file, the line (text) or byte offset (binary) and the field;
// an option value out of range is a moesim::UsageError. Nothing is ever returned half-loaded.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "traces/csv_util.h"
#include "traces/trace.h"

namespace moesim::traces {

struct LoadOptions {
  std::string format = "auto";        // auto | mtr | bigmoe | jsonl | csv
  std::string fields;                 // JSONL/CSV field mapping, see above
  std::string model;                  // preset name or model JSON path; empty = none
  std::string token_from = "column";  // column | order (TextImportOptions::token_from_order)
  uint32_t layer_base = 0;            // layer id of the file's first layer (0 or 1 in practice)
  std::vector<std::string> where;     // KEY=VALUE record filters, all must match
  bool skip_warmup = false;           // drop the leading warm-up run (RecordCollector::finish)
  bool drop_duplicates = false;       // keep the first record of a cell, drop and count the rest
  std::string delimiter;              // CSV separator: "" = auto (',' or tab), one character, or "tab"
};

// The JSONL/CSV options of `opts` (fields, filters...), validated: a bad --fields is an Error, a bad
// --token-from, --where or --delimiter a UsageError.
TextImportOptions text_import_options(const LoadOptions& opts);

Trace load_trace(const std::string& path, const LoadOptions& = {});

// Several files as several sequences of one trace (`trace import a.jsonl b.jsonl`): each file is loaded
// with `opts`, and file i's sequence ids are shifted by the sum over the earlier files of (largest sequence
// id + 1). Files without sequence ids (all seq 0) thus become sequences 0, 1, 2...; files with their own
// ids keep them apart. All files must agree on top-k, weights/logits presence and (for .mtr/route_trace
// input) expert sizes; layers/experts are the largest of the files' (or the model's). One path is the same
// as load_trace(path). The provenance lists each file's provenance under "sources" and sums the
// where_skipped, warmup_dropped and duplicates_dropped counts.
Trace load_traces(const std::vector<std::string>& paths, const LoadOptions& opts = {});

// Writes the canonical .mtr file atomically (base/atomic_file.h).
void save_mtr(const Trace& trace, const std::string& path);

// The format load_trace would pick for these first bytes of a file: "mtr", "bigmoe", "jsonl" or "csv".
std::string detect_format(std::string_view head);

// Offset of the first NUL byte or invalid UTF-8 sequence in `head`, or npos. `complete` = false when head
// is only the start of the file: a multi-byte sequence cut by its end is then not counted as invalid.
size_t binary_data_offset(std::string_view head, bool complete);

// ---- format-specific entry points: parse from memory (tests, fuzz targets), `origin` names the input ----

// BigMoeOnEdge "route_trace v1" CSV (traces/import_bigmoe.cpp).
Trace import_bigmoe(std::string_view text, const std::string& origin, const ImportShape& shape = {});
// JSONL, one (token, layer) routing record per line (traces/import_jsonl.cpp). A FieldMap converts to
// TextImportOptions.
Trace import_jsonl(std::string_view text, const std::string& origin, const TextImportOptions& opts = {},
                   const ImportShape& shape = {});
// CSV with a header row; list fields in any csv_util.h split_list form (traces/import_csv.cpp).
Trace import_csv(std::string_view text, const std::string& origin, const TextImportOptions& opts = {},
                 const ImportShape& shape = {});

// JSONL export (traces/export_jsonl.cpp): records in canonical order, one object per line with keys
// seq, phase ("prefill"/"decode"), token, layer, experts[, weights][, logits] (named by `fields`); floats
// in the shortest form that reads back to the same float32, so JSONL -> .mtr -> JSONL is byte-identical.
std::string export_jsonl(const Trace& trace, const FieldMap& fields = {});
void export_jsonl_file(const Trace& trace, const std::string& path, const FieldMap& fields = {});

}  // namespace moesim::traces
