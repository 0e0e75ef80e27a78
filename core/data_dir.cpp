#include "core/data_dir.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>

#include "base/error.h"
#include "moesim_build_info.h"

namespace moesim {

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
  namespace fs = std::filesystem;
  const std::string what = kind == "models" ? "model" : "hardware profile";
  std::error_code ec;
  if (fs::is_regular_file(name_or_path, ec)) return name_or_path;
  // A folder is a path the user meant as a file: say so rather than look it up as a preset name.
  if (fs::is_directory(name_or_path, ec))
    throw UsageError(name_or_path + " is a directory, not a " + what + " JSON file");
  // A name with a '/' or ending in .json can only be a path (presets are bare names): a missing file is that.
  if (name_or_path.find('/') != std::string::npos || name_or_path.ends_with(".json"))
    throw UsageError(name_or_path + ": no such file (a " + what +
                     " JSON file; or give a preset name, see "
                     "`moesim presets`)");
  std::string p = data_dir() + "/" + kind + "/" + name_or_path + ".json";
  if (fs::is_regular_file(p, ec)) return p;
  std::string known;
  for (const auto& s : list_presets(kind)) known += (known.empty() ? "" : ", ") + s;
  throw UsageError("unknown " + what + " '" + name_or_path + "' (known: " + known +
                   "; or give a path to a JSON file)");
}

}  // namespace moesim
