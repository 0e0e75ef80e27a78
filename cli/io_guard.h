// No command may write over its own input. main() runs check_outputs_against_inputs() on every subcommand
// after its command line is parsed and before its callback runs, so no command can forget it and nothing
// has been read or written yet when it refuses.
//
// Outputs are the options named in is_output_option(); every other option value and positional argument
// that names an existing file or folder is an input. The rule (same file, or an input inside an output
// folder: sweep and merge own what they write there, their temporaries included) is base/output_guard.h's,
// which the Python module applies to its calls' paths too. The refusal is a moesim::UsageError (exit 2):
//   "--output 'x' is the same file as input 'y' (--weights); choose another output path".
// Inputs named only inside an input file (a sweep spec's traces) are not seen here.
#pragma once

#include <CLI/CLI.hpp>

namespace moesim::cli {

// Whether an option names something the command writes: -o/--output, --csv, --timeline, --plot, and every
// option whose long name ends in "-out" or "-output" (--profile-out, --json-out). A new output option gets
// one of these names, or joins the list in io_guard.cpp.
bool is_output_option(const CLI::Option& opt);

// Throws moesim::UsageError when an output of `command` (as parsed) is, or holds, one of its inputs.
void check_outputs_against_inputs(CLI::App& command);

}  // namespace moesim::cli
