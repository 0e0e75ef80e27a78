// Loading and saving traces in every supported format (docs/trace-format.md).
//
// load_trace() auto-detects the format from the file's first bytes:
//   * the .mtr magic "MOESIMTR"             -> the canonical binary format (mmap'd, fully validated)
//   * first line "# route_trace v1"         -> BigMoeOnEdge route CSV (traces/import_bigmoe.cpp)
//   * first non-blank byte '{'              -> JSONL, one routing record per line (traces/import_jsonl.cpp)
//   * anything else                         -> CSV with a header row (traces/import_csv.cpp)
// or obeys LoadOptions::format ("auto", "mtr", "bigmoe", "jsonl", "csv").
//
// `fields` maps record fields to the user's key/column names for JSONL and CSV:
// "seq=KEY,token=KEY,layer=KEY,experts=KEY,weights=KEY,phase=KEY,logits=KEY" (any subset; defaults are the
// field names themselves). An unknown field is an error listing the known ones; --fields with .mtr or
// route_trace input is an error too (those formats have fixed columns).
//
// `model` (a preset name or a model JSON path, core/model_spec.h): layers and experts then come from the
// model and a trace that does not fit it (a layer >= moe_layers, an expert id >= routed_experts, a
// different layer/expert count declared by the trace) is an error; expert_bytes come from the model when
// the trace has none. Without a model, JSONL/CSV infer layers/experts as the largest id seen + 1.
//
// Every failure is a moesim::Error naming the file, the line (text) or byte offset (binary) and the field;
// nothing is ever returned half-loaded.
#pragma once

#include <string>
#include <string_view>

#include "traces/csv_util.h"
#include "traces/trace.h"

namespace moesim::traces {

struct LoadOptions {
  std::string format = "auto";  // auto | mtr | bigmoe | jsonl | csv
  std::string fields;           // JSONL/CSV field mapping, see above
  std::string model;            // preset name or model JSON path; empty = none
};

Trace load_trace(const std::string& path, const LoadOptions& = {});

// Writes the canonical .mtr file atomically (core/atomic_file.h).
void save_mtr(const Trace& trace, const std::string& path);

// The format load_trace would pick for these first bytes of a file: "mtr", "bigmoe", "jsonl" or "csv".
std::string detect_format(std::string_view head);

// ---- format-specific entry points: parse from memory (tests, fuzz targets), `origin` names the input ----

// Shape a text importer enforces while reading, so that errors name the line: 0 = infer from the data
// (largest id + 1) or, for route_trace, from its preamble (which must then agree with a non-zero value).
struct ImportShape {
  uint32_t layers = 0;
  uint32_t experts = 0;
};

// BigMoeOnEdge "route_trace v1" CSV (traces/import_bigmoe.cpp).
Trace import_bigmoe(std::string_view text, const std::string& origin, const ImportShape& shape = {});
// JSONL, one (token, layer) routing record per line (traces/import_jsonl.cpp).
Trace import_jsonl(std::string_view text, const std::string& origin, const FieldMap& fields = {},
                   const ImportShape& shape = {});
// CSV with a header row; list fields ';'-separated (traces/import_csv.cpp).
Trace import_csv(std::string_view text, const std::string& origin, const FieldMap& fields = {},
                 const ImportShape& shape = {});

// JSONL export (traces/export_jsonl.cpp): records in canonical order, one object per line with keys
// seq, phase ("prefill"/"decode"), token, layer, experts[, weights][, logits] (named by `fields`); floats
// in the shortest form that reads back to the same float32, so JSONL -> .mtr -> JSONL is byte-identical.
std::string export_jsonl(const Trace& trace, const FieldMap& fields = {});
void export_jsonl_file(const Trace& trace, const std::string& path, const FieldMap& fields = {});

}  // namespace moesim::traces
