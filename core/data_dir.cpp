#include "core/data_dir.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>

#include "base/error.h"
#include "core/params.h"
#include "moesim_build_info.h"

namespace moesim {
namespace {

const char* preset_noun(const std::string& kind) {
  return kind == "models" ? "model" : "hardware profile";
}

// "hardware" for --hw, "models" for --model (however the option is spelled: "--hw", "hw=", "hw"); "" else.
std::string preset_kind(std::string option) {
  while (!option.empty() && option.front() == '-') option.erase(option.begin());
  while (!option.empty() && option.back() == '=') option.pop_back();
  if (option == "hw") return "hardware";
  if (option == "model") return "models";
  return "";
}

// resolve_preset() without the declared outputs' check: the file, or "" when neither a file nor a preset.
std::string find_preset(const std::string& kind, const std::string& name_or_path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (fs::is_regular_file(name_or_path, ec)) return name_or_path;
  // A folder is a path the user meant as a file: say so rather than look it up as a preset name.
  if (fs::is_directory(name_or_path, ec))
    throw UsageError(name_or_path + " is a directory, not a " + preset_noun(kind) + " JSON file");
  std::string p = data_dir() + "/" + kind + "/" + name_or_path + ".json";
  return fs::is_regular_file(p, ec) ? p : "";
}

}  // namespace

std::string data_dir() {
  if (const char* env = std::getenv("MOESIM_DATA"); env && *env) return env;
  return MOESIM_DATA_DIR_DEFAULT;
}

std::vector<std::string> list_presets(const std::string& kind) {
  std::vector<std::string> out;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(data_dir() + "/" + kind, ec))
    if (e.path().extension() == ".json") out.push_back(e.path().stem().string());
  std::sort(out.begin(), out.end());
  return out;
}

std::string resolve_preset(const std::string& kind, const std::string& name_or_path) {
  const std::string what = preset_noun(kind);
  const std::string p = find_preset(kind, name_or_path);
  if (p == name_or_path) {
    check_not_an_output(p, "the " + what);
    return p;
  }
  if (!p.empty()) {
    check_not_an_output(p, "the " + what + ", preset " + name_or_path);
    return p;
  }
  // A name with a '/' or ending in .json can only be a path (presets are bare names): a missing file is that.
  if (name_or_path.find('/') != std::string::npos || name_or_path.ends_with(".json"))
    throw UsageError(name_or_path + ": no such file (a " + what +
                     " JSON file; or give a preset name, see `moesim presets`)");
  std::string known;
  for (const auto& s : list_presets(kind)) known += (known.empty() ? "" : ", ") + s;
  throw UsageError("unknown " + what + " '" + name_or_path + "' (known: " + known +
                   "; or give a path to a JSON file)");
}

std::vector<NamedPath> files_named_by_value(const std::string& option, const std::string& value,
                                            bool is_default) {
  std::vector<NamedPath> out;
  if (value.empty() || value == "-") return out;
  if (const std::string kind = preset_kind(option); !kind.empty()) {
    const std::string how =
        std::string("the ") + preset_noun(kind) + ", " + option + (is_default ? "'s default " : " ") + value;
    std::string file;
    try {
      file = find_preset(kind, value);
    } catch (const UsageError&) {
      // A folder: the command says so in its own words.
    }
    out.push_back({file.empty() ? value : file, how});
    return out;
  }
  out.push_back({value, option});
  // A policy or system spec with parameters: "name:key=value,key=value".
  if (value.find(':') == std::string::npos || value.find('=') == std::string::npos) return out;
  PolicySpec spec;
  try {
    spec = PolicySpec::parse(value);
  } catch (const Error&) {
    return out;  // not a spec: a path with a colon, say
  }
  std::error_code ec;
  for (const auto& [key, v] : spec.values)
    if (!v.empty() && std::filesystem::exists(v, ec)) out.push_back({v, option + " parameter " + key});
  return out;
}

}  // namespace moesim
