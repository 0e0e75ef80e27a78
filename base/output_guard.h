// No output may replace one of its command's inputs. Paths are compared by device and inode (stat(), which
// follows symbolic links), never as strings, so a symlink, a hard link, `dir/../x` or an absolute and a relative
// spelling of one file are all caught. An output that is:
//   * a regular file: refused when it is the same file as an input;
//   * a folder (sweep and merge -o DIR): refused when it is the same folder as an input or when an input lies
//     anywhere inside it (the command owns what it writes there, so an input there could be overwritten);
//   * "-", "", nothing yet, a device or a FIFO: never refused (nothing there is replaced).
// The command line applies it to every subcommand (cli/io_guard.h); the Python module to its calls' paths.
#pragma once

#include <string>
#include <vector>

namespace moesim {

struct NamedPath {
  std::string path;
  std::string option;  // how the caller named it in messages: "--weights", "-o", "timeline="
};

// Throws moesim::UsageError: "--output 'x' is the same file as input 'y' (--weights); choose another output path".
void refuse_outputs_over_inputs(const std::vector<NamedPath>& outputs, const std::vector<NamedPath>& inputs);

}  // namespace moesim
