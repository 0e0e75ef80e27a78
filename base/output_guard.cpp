#include "base/output_guard.h"

#include <sys/stat.h>

#include <cstdlib>
#include <memory>

#include "base/error.h"

namespace moesim {
namespace {

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

void refuse_outputs_over_inputs(const std::vector<NamedPath>& outputs, const std::vector<NamedPath>& inputs) {
  if (outputs.empty()) return;
  struct Input {
    const NamedPath* value;
    struct stat st;
  };
  std::vector<Input> existing;
  for (const NamedPath& in : inputs) {
    Input i{&in, {}};
    if (!in.path.empty() && in.path != "-" && ::stat(in.path.c_str(), &i.st) == 0) existing.push_back(i);
  }
  for (const NamedPath& out : outputs) {
    struct stat os {};
    if (out.path.empty() || out.path == "-" || ::stat(out.path.c_str(), &os) != 0)
      continue;  // standard output, or nothing there yet: nothing to destroy
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

}  // namespace moesim
