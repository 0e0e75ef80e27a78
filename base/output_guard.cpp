#include "base/output_guard.h"

#include <sys/stat.h>

#include <cstdlib>
#include <filesystem>
#include <memory>
#include <mutex>

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

// The nearest existing folder that holds `path` (which need not exist): where a new output would be made.
std::string existing_folder_of(const std::string& path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::path p = fs::absolute(path, ec).lexically_normal().parent_path();
  while (!p.empty() && !fs::is_directory(p, ec) && p != p.parent_path()) p = p.parent_path();
  return p.empty() ? "." : p.string();
}

// An output's path for comparing two outputs that do not exist yet: absolute, `..` and links of the
// existing folders above it resolved.
std::string comparable(const std::string& path) {
  std::error_code ec;
  const std::filesystem::path p = std::filesystem::weakly_canonical(std::filesystem::absolute(path, ec), ec);
  return ec ? path : p.string();
}

// Whether `path` exists and is the node `st`.
bool is_node(const std::string& path, const struct stat& st) {
  struct stat ps {};
  return ::stat(path.c_str(), &ps) == 0 && same_node(ps, st);
}

bool names_nothing(const std::string& p) {
  return p.empty() || p == "-";
}

void refuse_shared_paths(const std::vector<NamedPath>& outputs) {
  for (size_t i = 0; i < outputs.size(); ++i) {
    const NamedPath& a = outputs[i];
    if (names_nothing(a.path)) continue;
    struct stat as {};
    const bool a_exists = ::stat(a.path.c_str(), &as) == 0;
    if (a_exists && !S_ISREG(as.st_mode) && !S_ISDIR(as.st_mode)) continue;  // a device: written through
    for (size_t j = i + 1; j < outputs.size(); ++j) {
      const NamedPath& b = outputs[j];
      if (names_nothing(b.path)) continue;
      struct stat bs {};
      const bool b_exists = ::stat(b.path.c_str(), &bs) == 0;
      const bool same = a_exists || b_exists ? a_exists && b_exists && same_node(as, bs)
                                             : comparable(a.path) == comparable(b.path);
      if (same)
        throw UsageError(a.option + " '" + a.path + "' and " + b.option + " '" + b.path +
                         "' are one path: two outputs of one command cannot share it (one would be lost); "
                         "choose another path for one of them");
    }
  }
}

// ---- the registry of declared outputs
// ----------------------------------------------------------------------

struct Declared {
  unsigned long long id;
  NamedPath output;
  dev_t dev;
  ino_t ino;
};

std::mutex& registry_mutex() {
  static std::mutex m;
  return m;
}
std::vector<Declared>& registry() {
  static std::vector<Declared> r;
  return r;
}
unsigned long long g_next_id = 1;  // under registry_mutex()

void check_node(const struct stat& st, const std::string& path, const std::string& how) {
  if (!S_ISREG(st.st_mode)) return;
  std::lock_guard<std::mutex> lock(registry_mutex());
  for (const Declared& d : registry())
    if (d.dev == st.st_dev && d.ino == st.st_ino)
      throw UsageError(d.output.option + " '" + d.output.path + "' is the same file as input '" + path +
                       "' (" + how + "); choose another output path");
}

}  // namespace

void refuse_outputs_over_inputs(const std::vector<NamedPath>& outputs, const std::vector<NamedPath>& inputs) {
  if (outputs.empty()) return;
  refuse_shared_paths(outputs);
  struct Input {
    const NamedPath* value;
    struct stat st;
  };
  std::vector<Input> existing;
  for (const NamedPath& in : inputs) {
    Input i{&in, {}};
    if (!names_nothing(in.path) && ::stat(in.path.c_str(), &i.st) == 0) existing.push_back(i);
  }
  for (const NamedPath& out : outputs) {
    if (names_nothing(out.path)) continue;
    struct stat os {};
    const bool exists = ::stat(out.path.c_str(), &os) == 0;
    if (exists && !S_ISDIR(os.st_mode) && !S_ISREG(os.st_mode))
      continue;  // a device or FIFO is written through, never replaced
    const bool folder = exists && S_ISDIR(os.st_mode);
    // Where the output is (or will be) made: inside an input folder, it replaces or adds one of its files.
    const std::string home = exists ? out.path : existing_folder_of(out.path);
    for (const Input& in : existing) {
      const std::string which = "input '" + in.value->path + "' (" + in.value->option + ")";
      if (exists && same_node(os, in.st))
        throw UsageError(out.option + " '" + out.path + "' is the same " + (folder ? "folder" : "file") +
                         " as " + which + "; choose another output path");
      if (folder && inside(in.value->path, os))
        throw UsageError(
            out.option + " '" + out.path + "' is a folder that holds " + which +
            ", and the command writes into that folder; choose another output folder or move the "
            "input out of it");
      if (S_ISDIR(in.st.st_mode) && (is_node(home, in.st) || inside(home, in.st)))
        throw UsageError(out.option + " '" + out.path + "' lies inside input folder '" + in.value->path +
                         "' (" + in.value->option +
                         "), and writing it would change that input; choose an output path "
                         "outside the folder");
    }
  }
}

DeclaredOutputs::DeclaredOutputs(const std::vector<NamedPath>& outputs) {
  std::lock_guard<std::mutex> lock(registry_mutex());
  id_ = g_next_id++;
  for (const NamedPath& o : outputs) {
    struct stat st {};
    if (names_nothing(o.path) || ::stat(o.path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) continue;
    registry().push_back({id_, o, st.st_dev, st.st_ino});
  }
}

DeclaredOutputs::~DeclaredOutputs() {
  std::lock_guard<std::mutex> lock(registry_mutex());
  std::erase_if(registry(), [this](const Declared& d) { return d.id == id_; });
}

void check_not_an_output(const std::string& path, const std::string& how) {
  struct stat st {};
  if (!names_nothing(path) && ::stat(path.c_str(), &st) == 0) check_node(st, path, how);
}

void check_not_an_output(int fd, const std::string& path, const std::string& how) {
  struct stat st {};
  if (fd >= 0 && ::fstat(fd, &st) == 0) check_node(st, path, how);
}

}  // namespace moesim
