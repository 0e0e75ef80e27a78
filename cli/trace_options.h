// The trace input options every trace-reading command shares, so that they are spelled the same
// everywhere (one CLI vocabulary):
//   * the trace itself: `--trace T`, or T as the first positional argument (both accepted, one required);
//   * the format (auto-detected by default), the JSONL/CSV field mapping and the JSONL/CSV import options
//     (--token-from, --layer-base, --where, --skip-warmup, --drop-duplicates, --delimiter; see
//     docs/trace-format.md), stored straight into the command's traces::LoadOptions.
// --model is declared by each command itself, since what a model means differs between them (check, sizes,
// FLOPs).
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "base/error.h"
#include "harness/arguments.h"
#include "traces/trace_io.h"

namespace moesim::cli {

// Declares `--trace T` and the positional `trace` (either may be given, not both). The command's callback
// calls require_trace_input(path) (harness/arguments.h) first, so a missing trace is a usage error before any
// work.
inline void add_trace_input(CLI::App& app, std::string& path,
                            const std::string& help = "trace file (.mtr, route_trace CSV, JSONL, CSV)") {
  auto* named = app.add_option("--trace", path, help);
  auto* positional = app.add_option("trace", path, help + " (same as --trace)");
  named->excludes(positional);
}

// `fields_flag` names the field-mapping option: "--fields", or "--in-fields" where --fields already means
// something else (trace export's output keys).
inline void add_trace_format_options(CLI::App& app, traces::LoadOptions& load,
                                     const std::string& fields_flag = "--fields") {
  app.add_option("--format", load.format, "trace format: auto, mtr, bigmoe, jsonl, csv")
      ->capture_default_str();
  app.add_option(
      fields_flag, load.fields,
      "JSONL/CSV field mapping: seq=KEY,token=KEY,layer=KEY,experts=KEY,weights=KEY,phase=KEY,logits=KEY");
  app.add_option(
         "--token-from", load.token_from,
         "JSONL/CSV: 'column' (a token key/column) or 'order' (the n-th record of a (sequence, phase, "
         "layer) is token n)")
      ->capture_default_str();
  app.add_option("--layer-base", load.layer_base,
                 "JSONL/CSV: layer id of the file's first MoE layer (1 = 1-based)")
      ->capture_default_str();
  app.add_option(
         "--where", load.where,
         "JSONL/CSV: keep only records whose KEY (JSONL key or CSV column) is VALUE; repeatable, all must "
         "match")
      ->type_name("KEY=VALUE")
      ->allow_extra_args(false);
  app.add_flag("--skip-warmup", load.skip_warmup,
               "JSONL/CSV: drop the leading run of identical warm-up records (vLLM's profiling run)");
  app.add_flag(
      "--drop-duplicates", load.drop_duplicates,
      "JSONL/CSV: keep the first record of a cell and drop later duplicates (counted) instead of failing");
  app.add_option("--delimiter", load.delimiter,
                 "CSV separator: one character or 'tab' (default: ',' or tab, detected)");
}

}  // namespace moesim::cli
