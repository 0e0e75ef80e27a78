// Running the built binary from CLI tests (MOESIM_CLI_PATH): exit status, stdout and stderr apart.
#pragma once

#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace moesim::test {

struct CliResult {
  int code = -1;  // exit code
  std::string out, err;
};

inline std::string temp_path(const std::string& name) {
  const auto dir = std::filesystem::temp_directory_path() / ("moesim_cli2_" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  return (dir / name).string();
}

inline std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// Runs `moesim ARGS` with stderr captured to a temporary file.
inline CliResult moesim_cli(const std::string& args) {
  static int n = 0;
  const std::string err = temp_path("stderr" + std::to_string(n++));
  const std::string cmd = std::string(MOESIM_CLI_PATH) + " " + args + " 2>" + err;
  FILE* p = popen(cmd.c_str(), "r");
  CliResult r;
  char buf[4096];
  size_t k;
  while ((k = fread(buf, 1, sizeof buf, p)) > 0) r.out.append(buf, k);
  const int status = pclose(p);
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  r.err = read_text(err);
  std::filesystem::remove(err);
  return r;
}

}  // namespace moesim::test
