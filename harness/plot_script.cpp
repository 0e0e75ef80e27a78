#include "harness/plot_script.h"

#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <vector>

#include "base/atomic_file.h"
#include "base/error.h"
#include "core/data_dir.h"

extern char** environ;

namespace moesim::harness {

namespace {

void run_script(const std::string& name, const std::string& table, const std::string& out,
                const std::vector<std::string>& extra) {
  const std::string script = data_dir() + "/../scripts/" + name;
  if (::access(script.c_str(), R_OK) != 0)
    throw Error("--plot: the plotting script " + script + " is missing (it ships with the source tree)");
  const char* py = std::getenv("MOESIM_PYTHON");
  // Debian's interpreter by default (python3-matplotlib is installed for it), as scripts/demo does.
  const std::string python = py && *py                                 ? py
                             : ::access("/usr/bin/python3", X_OK) == 0 ? "/usr/bin/python3"
                                                                       : "python3";
  std::vector<std::string> args = {python, script, table, out};
  args.insert(args.end(), extra.begin(), extra.end());
  std::vector<char*> argv;
  for (auto& x : args) argv.push_back(x.data());
  argv.push_back(nullptr);
  pid_t pid;
  if (::posix_spawnp(&pid, python.c_str(), nullptr, nullptr, argv.data(), environ) != 0)
    throw Error("--plot: cannot start " + python);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
    throw Error("--plot: " + python + " " + script + " failed (exit " +
                std::to_string(WIFEXITED(status) ? WEXITSTATUS(status) : -1) +
                "); is python3-matplotlib installed?");
}

}  // namespace

void plot_table(const std::string& script, const std::string& csv_text, const std::string& csv_path,
                const std::string& out, const std::vector<std::string>& extra) {
  if (!csv_path.empty()) return run_script(script, csv_path, out, extra);
  char tmpl[] = "/tmp/moesim-plot-XXXXXX";
  const int fd = ::mkstemp(tmpl);
  if (fd < 0) throw Error("--plot: cannot create a temporary file for the table");
  ::close(fd);
  try {
    write_file_atomic(tmpl, csv_text);
    run_script(script, tmpl, out, extra);
  } catch (...) {
    ::unlink(tmpl);
    throw;
  }
  ::unlink(tmpl);
}

}  // namespace moesim::harness
