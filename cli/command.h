// Subcommands register themselves: each cli/<name>.cpp defines a setup function that adds its options
// and callback to the CLI::App it is given, and registers it with MOESIM_CLI_COMMAND(path, description,
// setup). `path` is "trace import" style: parents ("trace") are created on demand. main() builds the
// command tree in sorted order, so adding a subcommand touches its own file only.
//
// Callbacks report user errors by throwing moesim::Error; main prints "moesim: error: ..." and exits 1.
// Outputs go through AtomicFile/write_file_atomic so a failed command leaves no partial file.
#pragma once

#include <CLI/CLI.hpp>
#include <functional>
#include <string>
#include <vector>

namespace moesim::cli {

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

// Whether standard output/error is a terminal (progress bars only then).
bool stderr_is_terminal();

}  // namespace moesim::cli

#define MOESIM_CLI_CONCAT2(a, b) a##b
#define MOESIM_CLI_CONCAT(a, b) MOESIM_CLI_CONCAT2(a, b)
#define MOESIM_CLI_COMMAND(path, description, setup) \
  static ::moesim::cli::CommandRegistrar MOESIM_CLI_CONCAT(moesim_cli_registrar_, __LINE__)(path, description, setup)
