// The moesim executable: builds the subcommand tree from the self-registered commands (cli/command.h).
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <map>
#include <sstream>

#include "cli/command.h"
#include "core/error.h"
#include "moesim_build_info.h"

namespace moesim::cli {

std::vector<Command>& commands() {
  static std::vector<Command> c;
  return c;
}

bool stderr_is_terminal() { return ::isatty(STDERR_FILENO) != 0; }

}  // namespace moesim::cli

int main(int argc, char** argv) {
  using namespace moesim::cli;
  CLI::App app{"moesim: trace-driven simulator of on-device MoE inference with expert offloading"};
  app.set_version_flag("--version", std::string("moesim ") + MOESIM_VERSION + " (" + MOESIM_GIT_DESCRIBE + ")");
  app.require_subcommand(1);
  auto cmds = commands();
  std::sort(cmds.begin(), cmds.end(), [](const Command& a, const Command& b) { return a.path < b.path; });
  std::map<std::string, CLI::App*> nodes;
  nodes[""] = &app;
  for (const auto& c : cmds) {
    std::istringstream words(c.path);
    std::string word, prefix;
    CLI::App* parent = &app;
    std::vector<std::string> parts;
    while (words >> word) parts.push_back(word);
    for (size_t i = 0; i < parts.size(); ++i) {
      std::string key = prefix.empty() ? parts[i] : prefix + " " + parts[i];
      auto it = nodes.find(key);
      if (it == nodes.end()) {
        const bool leaf = i + 1 == parts.size();
        CLI::App* sub = parent->add_subcommand(parts[i], leaf ? c.description : "");
        if (!leaf) sub->require_subcommand(1);
        it = nodes.emplace(key, sub).first;
      }
      parent = it->second;
      prefix = key;
    }
    c.setup(*parent);
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  } catch (const moesim::Error& e) {
    std::fflush(stdout);
    std::fprintf(stderr, "moesim: error: %s\n", e.what());
    return 1;
  } catch (const std::exception& e) {
    std::fflush(stdout);
    std::fprintf(stderr, "moesim: internal error: %s\n", e.what());
    return 2;
  }
  return 0;
}
