// The moesim executable's whole life after main(): cli/main.cpp only passes its version line (from the
// generated build information, which changes with every commit, so that only main.cpp recompiles then).
#pragma once

#include <string>

namespace moesim::cli {

// Parses the command line, runs the command and returns the process's exit status (cli/command.h lists them).
int run_main(int argc, char** argv, const std::string& version);

}  // namespace moesim::cli
