// Subcommands register themselves: each cli/<name>.cpp defines a setup function that adds its options
// and callback to the CLI::App it is given, and registers it with MOESIM_CLI_COMMAND(path, description,
// setup). `path` is "trace import" style: parents ("trace") are created on demand. main() builds the
// command tree in sorted order, so adding a subcommand touches its own file only.
//
// The command files are compiled several to a translation unit (cli/CMakeLists.txt: a unity build, since
// CLI11's header alone costs seconds of optimisation in every file that includes it), so each keeps its
// helpers in a namespace named after the file (`namespace replay_cmd` in cli/replay.cpp), not an anonymous
// one, and the registrars are named by __COUNTER__, not __LINE__.
//
// Group nodes ("trace", "store", "weights") get their --help description from MOESIM_CLI_GROUP(path,
// description), registered once in cli/entry.cpp.
//
// Exit status (main): 0 success; 1 moesim::Error (bad input, failed write, including a failed write to
// standard output); 2 a bad command line (CLI11 parse errors and moesim::UsageError), both printed as
// "moesim: error: ..." with a pointer to the command's --help; 70 anything else ("moesim: internal error").
// Before a command's callback runs, main() refuses an output that is (or, for a folder, holds) one of the
// command's inputs (cli/io_guard.h): outputs are recognised by their option names, so a new output option
// is named -o/--output, --csv, --timeline, --plot or --*-out.
// Callbacks call check_output_writable() on every output path before their work, and write outputs through
// AtomicFile/write_file_atomic so a failed command leaves no partial file. The global -q/--quiet (accepted
// before or after the subcommand) turns progress bars off.
#pragma once

#include <CLI/CLI.hpp>
#include <functional>
#include <string>
#include <vector>

namespace moesim::harness {}

namespace moesim::cli {

// cli/ is options, help and printing over harness/ (docs/architecture.md §2): the engines' names are used
// unqualified in the command files.
using namespace ::moesim::harness;

struct Command {
  std::string path;
  std::string description;
  std::function<void(CLI::App&)> setup;
};

std::vector<Command>& commands();

struct CommandRegistrar {
  CommandRegistrar(std::string path, std::string description, std::function<void(CLI::App&)> setup) {
    commands().push_back({std::move(path), std::move(description), std::move(setup)});
  }
};

struct Group {
  std::string path;
  std::string description;
};

std::vector<Group>& groups();

struct GroupRegistrar {
  GroupRegistrar(std::string path, std::string description) {
    groups().push_back({std::move(path), std::move(description)});
  }
};

// Whether standard error is a terminal.
bool stderr_is_terminal();

}  // namespace moesim::cli

#define MOESIM_CLI_CONCAT2(a, b) a##b
#define MOESIM_CLI_CONCAT(a, b) MOESIM_CLI_CONCAT2(a, b)
#define MOESIM_CLI_COMMAND(path, description, setup)                                            \
  static ::moesim::cli::CommandRegistrar MOESIM_CLI_CONCAT(moesim_cli_registrar_, __COUNTER__)( \
      path, description, setup)
#define MOESIM_CLI_GROUP(path, description) \
  static ::moesim::cli::GroupRegistrar MOESIM_CLI_CONCAT(moesim_cli_group_, __COUNTER__)(path, description)
