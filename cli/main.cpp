// The moesim executable: its version line, then cli/entry.h does the rest.
#include <string>

#include "cli/entry.h"
#include "moesim_build_info.h"

int main(int argc, char** argv) {
  return moesim::cli::run_main(argc, argv,
                               std::string("moesim ") + MOESIM_VERSION + " (" + MOESIM_GIT_DESCRIBE + ")");
}
