// No command may write over its own input. main() runs check_outputs_against_inputs() on every subcommand
// after its command line is parsed and before its callback runs, so no command can forget it and nothing
// has been read or written yet when it refuses.
//
// Outputs are the options named in is_output_option(); every other option value and positional argument
// that names an existing file or folder is an input. Paths are compared by device and inode (stat(), which
// follows symbolic links), never as strings, so a symlink, a hard link, `dir/../x` or an absolute and a
// relative spelling of one file are all caught. An output that is:
//   * a regular file: refused when it is the same file as an input;
//   * a folder (sweep and merge -o DIR): refused when it is the same folder as an input or when an input lies
//     anywhere inside it -- the command owns what it writes there (points/, results.csv, manifest.json, and
//     its temporary files, which --resume removes), so an input in that folder could be overwritten or
//     removed;
//   * "-", nothing yet, a device or a FIFO: never refused (nothing there is replaced).
// The refusal is a moesim::UsageError (exit 2):
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
