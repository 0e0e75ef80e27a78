// The command registry (cli/command.h). Apart from main.cpp, so that the Python module, which links the
// commands without the executable's main(), has the registry too (a sweep's points run through it).
#include "cli/command.h"

#include <unistd.h>

namespace moesim::cli {

std::vector<Command>& commands() {
  static std::vector<Command> c;
  return c;
}

std::vector<Group>& groups() {
  static std::vector<Group> g;
  return g;
}

bool stderr_is_terminal() {
  return ::isatty(STDERR_FILENO) != 0;
}

}  // namespace moesim::cli
