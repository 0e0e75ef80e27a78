// No output may replace one of its command's inputs, and no two outputs of one command may share a path.
// Paths are compared by device and inode (stat(), which follows symbolic links), never as strings, so a
// symlink, a hard link, `dir/../x` or an absolute and a relative spelling of one file are all caught. An
// output that is:
//   * a regular file: refused when it is the same file as an input;
//   * a folder (sweep and merge -o DIR): refused when it is the same folder as an input or when an input lies
//     anywhere inside it (the command owns what it writes there, so an input there could be overwritten);
//   * inside an input folder (`pack --weights DIR -o DIR/w.safetensors`), whether it exists yet or not:
//     refused (it would replace or add a file of that input);
//   * "-", "", a device or a FIFO: never refused (nothing there is replaced).
// Two outputs on one path (`-o y.json --timeline y.json`) are refused too: one of them would be lost. Two
// outputs that do not exist yet are the same path when their absolute, normalised spellings (symbolic links
// of the existing folders above them resolved) are.
//
// Who applies it, before any work:
//   * the command line, to every subcommand's options and positional arguments (cli/io_guard.h), presets
//     resolved through the data folder (core/data_dir.h) and files named inside policy parameters included;
//   * each job whose spec names more files (harness: sweep, sensitivity, validate --matrix, cluster), with
//     the spec's files_named list;
//   * the Python module, to its calls' paths through the same functions.
// A safety net behind these: the outputs a command declares (DeclaredOutputs) are kept in a process-wide
// registry that every input opener consults (base/input_file.h, core/data_dir.h's presets, exec's mapped
// files), so an input that only a command's work discovers is still refused when it is opened -- before the
// output that would replace it is written (commands write their outputs after reading their inputs).
#pragma once

#include <string>
#include <vector>

namespace moesim {

struct NamedPath {
  std::string path;
  std::string option;  // how the caller named it in messages: "--weights", "-o", "timeline=",
                       // "the hardware profile, --hw jetson-agx-orin-64gb"
};

// Throws moesim::UsageError, e.g. "--output 'x' is the same file as input 'y' (--weights); choose another
// output path", or "-o 'y.json' and --timeline 'y.json' are one path: two outputs of one command cannot share
// it (one would be lost); choose another path for one of them".
void refuse_outputs_over_inputs(const std::vector<NamedPath>& outputs, const std::vector<NamedPath>& inputs);

// The outputs of a command now running, for the input openers' check (check_not_an_output). Registering
// records, for each output that exists as a regular file, its device and inode; the registration lasts as
// long as the object (the command line keeps its command's for the whole process; the Python module one per
// call). Thread-safe: sweeps run points on threads, and Python may run calls on several threads.
class DeclaredOutputs {
 public:
  explicit DeclaredOutputs(const std::vector<NamedPath>& outputs);
  ~DeclaredOutputs();
  DeclaredOutputs(const DeclaredOutputs&) = delete;
  DeclaredOutputs& operator=(const DeclaredOutputs&) = delete;

 private:
  unsigned long long id_ = 0;
};

// Throws moesim::UsageError "-o 'F' is the same file as input 'F' (HOW); choose another output path" when
// `path` (about to be read) is a declared output of a running command. `how` says how the input was named
// ("the hardware profile, preset jetson-agx-orin-64gb", "read by the command"). Paths that do not exist
// pass (the opener reports them).
void check_not_an_output(const std::string& path, const std::string& how);
// The same for an open file, by its descriptor (no race between the check and the open).
void check_not_an_output(int fd, const std::string& path, const std::string& how);

}  // namespace moesim
