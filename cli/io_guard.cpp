#include "cli/io_guard.h"

#include <sys/stat.h>

#include <array>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "base/error.h"

namespace moesim::cli {
namespace {

// Long names (without "--") of the outputs whose names do not end in "-out" or "-output".
constexpr std::array<std::string_view, 4> kOutputNames = {"output", "csv", "timeline", "plot"};

struct Value {
  std::string path;
  std::string option;  // as the user would write it: "--weights", "-o", or the positional's name
};

std::string option_name(const CLI::Option& opt) {
  if (!opt.get_lnames().empty()) return "--" + opt.get_lnames().front();
  if (!opt.get_snames().empty()) return "-" + opt.get_snames().front();
  return opt.get_single_name();
}

// The values the command will use: those given, else the default (an output's default could be a file).
void collect(CLI::App& app, std::vector<Value>& outputs, std::vector<Value>& inputs) {
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

bool same_node(const struct stat& a, const struct stat& b) {
  return a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

// Whether `path` (which exists) lies inside the folder `dir`: some folder above its real path is `dir`.
bool inside(const std::string& path, const struct stat& dir) {
  std::unique_ptr<char, decltype(&std::free)> real(::realpath(path.c_str(), nullptr), &std::free);
  if (!real) return false;
  std::string p = real.get();
  while (p.size() > 1) {
    const size_t slash = p.find_last_of('/');
    p = slash == 0 ? "/" : p.substr(0, slash);
    struct stat st {};
    if (::stat(p.c_str(), &st) == 0 && same_node(st, dir)) return true;
  }
  return false;
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
  std::vector<Value> outputs, inputs;
  collect(command, outputs, inputs);
  if (outputs.empty()) return;
  struct Input {
    const Value* value;
    struct stat st;
  };
  std::vector<Input> existing;
  for (const Value& in : inputs) {
    Input i{&in, {}};
    if (::stat(in.path.c_str(), &i.st) == 0) existing.push_back(i);
  }
  for (const Value& out : outputs) {
    struct stat os {};
    if (::stat(out.path.c_str(), &os) != 0) continue;  // nothing there yet: nothing to destroy
    const bool folder = S_ISDIR(os.st_mode);
    if (!folder && !S_ISREG(os.st_mode)) continue;  // a device or FIFO is written through, never replaced
    for (const Input& in : existing) {
      const std::string which = "input '" + in.value->path + "' (" + in.value->option + ")";
      if (same_node(os, in.st))
        throw UsageError(out.option + " '" + out.path + "' is the same " + (folder ? "folder" : "file") + " as " +
                         which + "; choose another output path");
      if (folder && inside(in.value->path, os))
        throw UsageError(out.option + " '" + out.path + "' is a folder that holds " + which +
                         ", and the command writes into that folder; choose another output folder or move the "
                         "input out of it");
    }
  }
}

}  // namespace moesim::cli
