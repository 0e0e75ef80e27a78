// No command may write over its own input, nor put two of its outputs on one path. main() runs
// check_outputs_against_inputs() on every subcommand after its command line is parsed and before its callback
// runs, so no command can forget it and nothing has been read or written yet when it refuses.
//
// Outputs are the options named in is_output_option(); every other option value and positional argument is
// an input, through core/data_dir.h's files_named_by_value(): the file or folder it names, the preset a --hw
// or
// --model value resolves to through the data folder (the option's default too, when the command uses it), and
// the files named inside a policy or system spec's parameters (`--prefetch transition:train=F`). The rule is
// base/output_guard.h's, which the spec-reading jobs (harness: each spec kind's files_named) and the Python
// module apply too. The refusal is a moesim::UsageError (exit 2):
//   "--output 'x' is the same file as input 'x' (the hardware profile, --hw's default jetson-agx-orin-64gb);
//    choose another output path".
// The outputs are then declared for the rest of the process (base/output_guard.h's DeclaredOutputs), so an
// input that only the command's work finds (the model preset a trace names) is refused when it is opened.
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "base/output_guard.h"

namespace moesim::cli {

// Whether an option names something the command writes: -o/--output, --csv, --timeline, --plot, and every
// option whose long name ends in "-out" or "-output" (--profile-out, --json-out). A new output option gets
// one of these names, or joins the list in io_guard.cpp.
bool is_output_option(const CLI::Option& opt);

// Throws moesim::UsageError when an output of `command` (as parsed) is, or holds, one of its inputs, or two
// of its outputs are one path; otherwise declares its outputs for the rest of the process.
void check_outputs_against_inputs(CLI::App& command);

// The inputs (as above) of a parsed command; `outputs` receives its outputs when not null.
std::vector<NamedPath> command_inputs(CLI::App& command, std::vector<NamedPath>* outputs = nullptr);

}  // namespace moesim::cli
