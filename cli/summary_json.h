// The --json flag of the data-writing commands (trace synth, pack, weights synth, ...): what they wrote,
// summarised as JSON on standard output (print_summary_json below). Argument parsing and
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
// {"header": ..., "wrote": SUMMARY} on standard output.
void print_summary_json(const std::string& command, const Json& summary);
// What a data-writing job returned: its summary as JSON with --json, else its text on standard output, or on
// standard error when the data itself went to standard output (-o -) or `to_stderr` (a notice, not a report).
void print_wrote(const std::string& command, const harness::Wrote& w, bool json, const std::string& out,
                 bool to_stderr = false);

}  // namespace moesim::cli
