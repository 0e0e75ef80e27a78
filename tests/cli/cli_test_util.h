// Running the built binary from CLI tests (MOESIM_CLI_PATH): exit status, stdout and stderr apart.
#pragma once

#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace moesim::test {

// A test of what only a moesim built with exec does (a real run, the real cluster) skips, saying so, in one
// built without it (-DMOESIM_EXEC=OFF: MOESIM_TEST_HAS_EXEC is 0, tests/CMakeLists.txt).
#define MOESIM_SKIP_WITHOUT_EXEC() \
  if (!MOESIM_TEST_HAS_EXEC) GTEST_SKIP() << "this moesim was built without exec (-DMOESIM_EXEC=OFF)"

struct CliResult {
  int code = -1;  // exit code
  std::string out, err;
};

inline std::string temp_path(const std::string& name) {
  const auto dir = std::filesystem::temp_directory_path() / ("moesim_cli2_" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  return (dir / name).string();
}

// An empty folder of its own for one test: PREFIX_PID_NAME under the temporary directory (emptied first).
inline std::filesystem::path fresh_test_dir(const std::string& prefix, const std::string& test_name) {
  const auto dir =
      std::filesystem::temp_directory_path() / (prefix + "_" + std::to_string(getpid()) + "_" + test_name);
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

inline std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// The cells of a CSV row whose values hold no comma (quotes kept).
inline std::vector<std::string> split_csv_row(const std::string& row) {
  std::vector<std::string> cells;
  std::istringstream in(row);
  for (std::string cell; std::getline(in, cell, ',');) cells.push_back(cell);
  if (!row.empty() && row.back() == ',') cells.emplace_back();
  return cells;
}

// Runs `sh -c COMMAND`: its exit code (-1 when a signal ended it) and what it wrote to stdout.
struct ShellResult {
  int status = -1;
  std::string out;
};
inline ShellResult run_shell(const std::string& command) {
  FILE* p = popen(command.c_str(), "r");
  ShellResult r;
  if (!p) return r;
  char buf[4096];
  size_t k;
  while ((k = fread(buf, 1, sizeof buf, p)) > 0) r.out.append(buf, k);
  const int status = pclose(p);
  r.status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

// `moesim ARGS` with stdout and stderr together in `out`.
inline ShellResult moesim_combined(const std::string& args) {
  return run_shell(std::string(MOESIM_CLI_PATH) + " " + args + " 2>&1");
}

// Runs `moesim ARGS` with stderr captured to a temporary file, apart from stdout.
inline CliResult moesim_cli(const std::string& args) {
  static int n = 0;
  const std::string err = temp_path("stderr" + std::to_string(n++));
  const ShellResult sh = run_shell(std::string(MOESIM_CLI_PATH) + " " + args + " 2>" + err);
  CliResult r;
  r.code = sh.status;
  r.out = sh.out;
  r.err = read_text(err);
  std::filesystem::remove(err);
  return r;
}

}  // namespace moesim::test
