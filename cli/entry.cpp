// The process frame of the moesim executable (cli/entry.h): builds the subcommand tree from the
// self-registered commands (cli/command.h), and owns what every command shares: exit codes and the
// "moesim: error:" prefix for every kind of failure, the global --quiet, the signal handlers that remove
// temporary output files, the refusal of an output that would overwrite an input (cli/io_guard.h, before any
// command runs), and the final check that standard output really received everything (a full disk or a
// closed pipe must not exit 0).
#include "cli/entry.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <map>
#include <memory>
#include <new>
#include <sstream>

#include "base/atomic_file.h"
#include "base/error.h"
#include "base/progress.h"
#include "cli/command.h"
#include "cli/io_guard.h"
#include "cli/option_checks.h"

MOESIM_CLI_GROUP("trace", "Routing traces: import, export, describe and synthesise them");
MOESIM_CLI_GROUP("store", "Expert stores written by `moesim pack`: describe and verify them");
MOESIM_CLI_GROUP("weights", "Checkpoint weights: exponent statistics, synthetic LLM-like weights");

namespace moesim::cli::entry_cmd {

using moesim::cli::Command;

// A command (a leaf of the tree). CLI11 calls pre_callback() after the whole command line is parsed and
// before the command's own callback: the checks every command needs run there, so none can forget them.
class LeafCommand : public CLI::App {
 public:
  LeafCommand(std::string description, std::string name, CLI::App* parent)
      : CLI::App(std::move(description), std::move(name), parent) {}

 protected:
  void pre_callback() override { moesim::cli::check_outputs_against_inputs(*this); }
};

// "moesim trace import": the deepest subcommand the command line reached, for the --help pointer.
std::string command_path(const CLI::App& app) {
  std::string path = "moesim";
  const CLI::App* cur = &app;
  while (!cur->get_subcommands().empty()) {
    cur = cur->get_subcommands().front();
    path += " " + cur->get_name();
  }
  return path;
}

int usage_failure(const CLI::App& app, const char* message) {
  std::fflush(stdout);
  std::fprintf(stderr, "moesim: error: %s\nrun '%s --help' for the options\n", message,
               command_path(app).c_str());
  return 2;
}

int failure(const char* kind, const char* message, int status) {
  std::fflush(stdout);
  std::fprintf(stderr, "moesim: %s: %s\n", kind, message);
  return status;
}

// Buffered stdout reports a full disk or a closed pipe only at the flush (or as a sticky error flag after an
// earlier failed write); both must turn a finished command into a failure.
int finish_stdout() {
  errno = 0;
  const bool flush_failed = std::fflush(stdout) != 0;
  int err = errno;
  const bool had_error = std::ferror(stdout) != 0;
  errno = 0;
  const bool close_failed = std::fclose(stdout) != 0;
  if (!err) err = errno;
  if (!flush_failed && !had_error && !close_failed) return 0;
  std::fprintf(stderr, "moesim: error: standard output: write failed%s%s\n", err ? ": " : "",
               err ? std::strerror(err) : "");
  return 1;
}

// The command the command line names ("trace import"), or "" when it names none: the words after the global
// flags (which take no values), as far as they name a group or a command.
std::string named_command(int argc, char** argv, const std::vector<Command>& cmds) {
  int i = 1;
  while (i < argc && argv[i][0] == '-') ++i;
  std::string path;
  for (; i < argc; ++i) {
    const std::string next = path.empty() ? std::string(argv[i]) : path + " " + argv[i];
    bool prefix = false;
    for (const auto& c : cmds) {
      if (c.path == next) return next;
      prefix = prefix || c.path.rfind(next + " ", 0) == 0;
    }
    if (!prefix) return "";
    path = next;
  }
  return "";
}

// Every command gets its node (so that --help lists them all), but only the command the line names declares
// its options when it names one: declaring all of them (CLI11 checks each new name against its siblings') was
// most of the start-up of every command. A line that names none (a mistyped command, a bare --help) gets the
// whole tree, as before.
void build_tree(CLI::App& app, int argc, char** argv) {
  std::map<std::string, std::string> group_text;
  for (const auto& g : moesim::cli::groups()) group_text[g.path] = g.description;
  auto cmds = moesim::cli::commands();
  std::sort(cmds.begin(), cmds.end(), [](const Command& a, const Command& b) { return a.path < b.path; });
  const std::string named = named_command(argc, argv, cmds);
  std::map<std::string, CLI::App*> nodes;
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
        const auto g = group_text.find(key);
        const std::string text = leaf ? c.description : g != group_text.end() ? g->second : "";
        CLI::App* sub = leaf ? parent->add_subcommand(std::make_shared<LeafCommand>(text, parts[i], parent))
                             : parent->add_subcommand(parts[i], text);
        if (!leaf) sub->require_subcommand(1);
        it = nodes.emplace(key, sub).first;
      }
      parent = it->second;
      prefix = key;
    }
    if (named.empty() || named == c.path) c.setup(*parent);
  }
}

}  // namespace moesim::cli::entry_cmd

int moesim::cli::run_main(int argc, char** argv, const std::string& version) {
  using namespace entry_cmd;
  moesim::install_output_cleanup_handlers();
  CLI::App app{"moesim: trace-driven simulator of on-device MoE inference with expert offloading", "moesim"};
  app.set_version_flag("--version", version);
  app.require_subcommand(1);
  // Subcommands created below inherit fallthrough, so the global flags work after the subcommand as well.
  app.fallthrough();
  // Option callbacks run before any subcommand's callback, so the bars are off before the work starts.
  app.add_flag_callback(
      "-q,--quiet", [] { moesim::set_progress_enabled(false); },
      "No progress bars (they are drawn only on a terminal anyway); warnings and errors still print");
  build_tree(app, argc, argv);
  // Once every command has declared its options: the checks every option gets (cli/option_checks.h).
  moesim::cli::add_option_checks(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e);  // --help, --version
    // CLI11 checks required options before leftover arguments, so a mistyped option would be reported as
    // the option it failed to provide ("--trace is required"): name the unknown argument first.
    const std::vector<std::string> rest = app.remaining(true);
    if (dynamic_cast<const CLI::RequiredError*>(&e) && !rest.empty())
      return usage_failure(app, ("unknown argument: " + rest.front()).c_str());
    // The option checks (cli/option_checks.h) have already refused malformed numbers; what CLI11 still cannot
    // convert is a well-formed number too large for the option's type ("--batch 5000000000").
    if (dynamic_cast<const CLI::ConversionError*>(&e)) {
      const std::string what = e.what(), prefix = "Could not convert: ", sep = " = ";
      const size_t at = what.find(sep);
      if (what.rfind(prefix, 0) == 0 && at != std::string::npos)
        return usage_failure(app, (what.substr(prefix.size(), at - prefix.size()) + ": " +
                                   what.substr(at + sep.size()) + " is too large for this option")
                                      .c_str());
    }
    return usage_failure(app, e.what());
  } catch (const moesim::UsageError& e) {
    return usage_failure(app, e.what());
  } catch (const moesim::Error& e) {
    return failure("error", e.what(), 1);
  } catch (const std::bad_alloc&) {
    return failure("error", "out of memory", 1);
  } catch (const std::exception& e) {
    return failure("internal error", e.what(), 70);
  }
  return finish_stdout();
}
