// Where bundled data lives: $MOESIM_DATA if set, else the source tree's data/ folder recorded at
// configure time. Presets are named by file stem ("qwen3-30b-a3b") or given as a path to a JSON file.
#pragma once

#include <string>
#include <vector>

#include "base/output_guard.h"

namespace moesim {

std::string data_dir();
// Resolves a preset of `kind` ("models" or "hardware"): an existing file path is used as is, otherwise
// data_dir()/kind/NAME.json. Throws moesim::UsageError listing the known presets when neither exists, and
// one saying so when the path is a directory. The resolved file is an input: when it is a declared output of
// the running command (base/output_guard.h) the UsageError says so, naming the preset.
std::string resolve_preset(const std::string& kind, const std::string& name_or_path);
std::vector<std::string> list_presets(const std::string& kind);  // sorted stems

// The files a command reads because of one option's value, for the output guard (base/output_guard.h), each
// named as a message should name it. `option` is how the value was given ("--hw", "hw=", "--prefetch");
// `is_default` when the command uses the value because none was given. The value names:
//   * for --hw and --model: the preset it resolves to (through the data folder), as "the hardware profile,
//     --hw NAME" ("the hardware profile, --hw's default NAME"); a value that resolves to nothing names
//     nothing (the command reports it);
//   * itself, as a path ("--trace");
//   * in a policy or system spec ("transition:train=F", "buddy:profile=F"), each parameter value that is an
//     existing file or folder: "--prefetch parameter train". Every registered parameter that names a file
//     is found this way, Python-registered ones included.
std::vector<NamedPath> files_named_by_value(const std::string& option, const std::string& value,
                                            bool is_default);

}  // namespace moesim
