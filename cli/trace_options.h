// The trace input options every trace-reading command shares, so that they are spelled the same
// everywhere (one CLI vocabulary):
//   * the trace itself: `--trace T`, or T as the first positional argument (both accepted, one required);
//   * the format (auto-detected by default) and the JSONL/CSV field mapping, stored straight into the
//     command's traces::LoadOptions.
// --model is declared by each command itself, since what a model means differs between them (check, sizes,
// FLOPs).
#pragma once

#include <CLI/CLI.hpp>
#include <string>

#include "core/error.h"
#include "traces/trace_io.h"

namespace moesim::cli {

// Declares `--trace T` and the positional `trace` (either may be given, not both). The command's callback
// calls require_trace_input(path) first, so a missing trace is a usage error before any work.
inline void add_trace_input(CLI::App& app, std::string& path,
                            const std::string& help = "trace file (.mtr, route_trace CSV, JSONL, CSV)") {
  auto* named = app.add_option("--trace", path, help);
  auto* positional = app.add_option("trace", path, help + " (same as --trace)");
  named->excludes(positional);
}

inline void require_trace_input(const std::string& path) {
  if (path.empty()) throw UsageError("a trace is required: --trace T (or T as the first argument)");
}

inline void add_trace_format_options(CLI::App& app, traces::LoadOptions& load) {
  app.add_option("--format", load.format, "trace format: auto, mtr, bigmoe, jsonl, csv")->capture_default_str();
  app.add_option("--fields", load.fields,
                 "JSONL/CSV field mapping: seq=KEY,token=KEY,layer=KEY,experts=KEY,weights=KEY,phase=KEY,logits=KEY");
}

}  // namespace moesim::cli
