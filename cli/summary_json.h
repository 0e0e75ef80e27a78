// The --json flag of the data-writing commands (trace synth, pack, weights synth, ...): what they wrote,
// summarised as JSON on standard output (harness/arguments.h print_summary_json). Argument parsing and
// plausibility checks are harness/arguments.h.
#pragma once

#include <CLI/CLI.hpp>
#include <string>

#include "base/json_io.h"
#include "harness/arguments.h"

namespace moesim::cli {

// `--json` on a command whose -o is its data file (a trace, a store, weights): what it wrote is summarised on
// standard output as JSON ({"header": ..., "wrote": SUMMARY}) instead of the text line. With `-o -` the data
// itself goes to standard output, so --json is then refused (UsageError) by check_summary_json.
void add_summary_json_flag(CLI::App& app, bool& json);
void check_summary_json(bool json, const std::string& out);

}  // namespace moesim::cli
