#include "cli/io_guard.h"

#include <array>
#include <optional>
#include <string>
#include <vector>

#include "base/output_guard.h"
#include "core/data_dir.h"

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
    const bool is_default = values.empty();
    if (is_default && !opt->get_default_str().empty()) values.push_back(opt->get_default_str());
    const std::string name = option_name(*opt);
    for (std::string& v : values) {
      if (v.empty() || v == "-") continue;
      if (is_output_option(*opt)) {
        outputs.push_back({std::move(v), name});
      } else {
        for (NamedPath& in : files_named_by_value(name, v, is_default)) inputs.push_back(std::move(in));
      }
    }
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

std::vector<NamedPath> command_inputs(CLI::App& command, std::vector<NamedPath>* outputs) {
  std::vector<NamedPath> outs, inputs;
  collect(command, outs, inputs);
  if (outputs) *outputs = std::move(outs);
  return inputs;
}

void check_outputs_against_inputs(CLI::App& command) {
  std::vector<NamedPath> outputs;
  const std::vector<NamedPath> inputs = command_inputs(command, &outputs);
  refuse_outputs_over_inputs(outputs, inputs);
  // One command per process: its outputs stay declared until it exits.
  static std::optional<DeclaredOutputs> declared;
  declared.emplace(outputs);
}

}  // namespace moesim::cli
