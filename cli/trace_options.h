// The trace input options every trace-reading command shares: the format (auto-detected by default) and
// the JSONL/CSV field mapping, stored straight into the command's traces::LoadOptions. --model is declared
// by each command itself, since what a model means differs between them (check, sizes, FLOPs).
#pragma once

#include <CLI/CLI.hpp>

#include "traces/trace_io.h"

namespace moesim::cli {

inline void add_trace_format_options(CLI::App& app, traces::LoadOptions& load) {
  app.add_option("--format", load.format, "trace format: auto, mtr, bigmoe, jsonl, csv")->capture_default_str();
  app.add_option("--fields", load.fields,
                 "JSONL/CSV field mapping: seq=KEY,token=KEY,layer=KEY,experts=KEY,weights=KEY,phase=KEY,logits=KEY");
}

}  // namespace moesim::cli
