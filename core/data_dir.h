// Where bundled data lives: $MOESIM_DATA if set, else the source tree's data/ folder recorded at
// configure time. Presets are named by file stem ("qwen3-30b-a3b") or given as a path to a JSON file.
#pragma once

#include <string>
#include <vector>

namespace moesim {

std::string data_dir();
// Resolves a preset of `kind` ("models" or "hardware"): an existing file path is used as is, otherwise
// data_dir()/kind/NAME.json. Throws moesim::UsageError listing the known presets when neither exists, and
// one saying so when the path is a directory.
std::string resolve_preset(const std::string& kind, const std::string& name_or_path);
std::vector<std::string> list_presets(const std::string& kind);  // sorted stems

}  // namespace moesim
