// `moesim ARGS...` in process: the runner of a sweep's points (harness/sweep_job.h's PointRunner), shared by
// the CLI's `moesim sweep` and the Python module's moesim.sweep so that a point is parsed and run the same
// way.
#pragma once

#include <string>
#include <vector>

#include "base/output_guard.h"

namespace moesim::cli {

// Runs the command args[0] with the options args[1..] on this thread: the command's own options, checks and
// callback, as main() would. A bad command line is a moesim::UsageError "bad options for `moesim CMD`: ...".
void run_command(std::vector<std::string> args);
// The same parse, options and checks without the command's callback: whether the command line fits the
// command (a sweep checks its spec's options with it before any point runs).
void check_command(std::vector<std::string> args);

// The files `moesim ARGS...` would read (cli/io_guard.h's inputs: paths, presets resolved through the data
// folder with the command's defaults, files inside policy parameters), from its command line alone: nothing
// runs. Relative paths stay relative to the current folder. Options the command would refuse do not throw:
// every value is then taken as a possible input.
std::vector<NamedPath> command_line_inputs(std::vector<std::string> args);

}  // namespace moesim::cli
