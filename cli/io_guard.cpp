#include "cli/io_guard.h"

#include <array>
#include <string>
#include <vector>

#include "base/output_guard.h"

namespace moesim::cli {
namespace {

// Long names (without "--") of the outputs whose names do not end in "-out" or "-output".
constexpr std::array<std::string_view, 4> kOutputNames = {"output", "csv", "timeline", "plot"};

std::string option_name(const CLI::Option& opt) {
  if (!opt.get_lnames().empty()) return "--" + opt.get_lnames().front();
  if (!opt.get_snames().empty()) return "-" + opt.get_snames().front();
  return opt.get_single_name();
}

// The values the command will use: those given, else the default (an output's default could be a file).
void collect(CLI::App& app, std::vector<NamedPath>& outputs, std::vector<NamedPath>& inputs) {
  for (const CLI::Option* opt : app.get_options()) {
    if (opt->get_type_size() == 0) continue;  // flags name no file
    std::vector<std::string> values = opt->results();
    if (values.empty() && !opt->get_default_str().empty()) values.push_back(opt->get_default_str());
    auto& into = is_output_option(*opt) ? outputs : inputs;
    for (std::string& v : values)
      if (!v.empty() && v != "-") into.push_back({std::move(v), option_name(*opt)});
  }
  // Option groups are nameless subcommands holding more of this command's options.
  for (CLI::App* group : app.get_subcommands([](CLI::App* a) { return a->get_name().empty(); }))
    collect(*group, outputs, inputs);
}

}  // namespace

bool is_output_option(const CLI::Option& opt) {
  for (const std::string& l : opt.get_lnames()) {
    for (std::string_view n : kOutputNames)
      if (l == n) return true;
    if (l.ends_with("-out") || l.ends_with("-output")) return true;
  }
  for (const std::string& s : opt.get_snames())
    if (s == "o") return true;
  return false;
}

void check_outputs_against_inputs(CLI::App& command) {
  std::vector<NamedPath> outputs, inputs;
  collect(command, outputs, inputs);
  refuse_outputs_over_inputs(outputs, inputs);
}

}  // namespace moesim::cli
