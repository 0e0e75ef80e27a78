#include "harness/cluster/cluster_rendezvous.h"

#include <fcntl.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "base/atomic_file.h"
#include "base/error.h"

namespace moesim::harness {
namespace {

std::string path_of(const std::string& dir, const std::string& server, const std::string& what) {
  return (std::filesystem::path(dir) / (server + "." + what)).string();
}

}  // namespace

void publish_address(const std::string& dir, const std::string& server, const std::string& what,
                     const std::string& address) {
  write_file_atomic(path_of(dir, server, what), address + "\n");
}

std::vector<std::string> await_addresses(const std::string& dir, const std::vector<std::string>& servers,
                                         const std::string& what, double timeout_s,
                                         const std::function<void()>& check) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
  std::vector<std::string> out(servers.size());
  for (;;) {
    std::string missing;
    for (size_t i = 0; i < servers.size(); ++i) {
      if (!out[i].empty()) continue;
      std::ifstream f(path_of(dir, servers[i], what));
      std::string line;
      if (f && std::getline(f, line) && !line.empty()) {
        out[i] = line;
      } else {
        missing += (missing.empty() ? "" : ", ") + servers[i];
      }
    }
    if (missing.empty()) return out;
    if (check) check();
    if (std::chrono::steady_clock::now() > deadline)
      throw Error("cluster: no " + what + " address from server(s) " + missing + " in " + dir + " after " +
                  std::to_string(static_cast<int>(timeout_s)) + " s");
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

std::string new_secret() {
  unsigned char raw[32];
  size_t got = 0;
  while (got < sizeof raw) {
    const ssize_t n = ::getrandom(raw + got, sizeof raw - got, 0);
    if (n <= 0) throw Error("cluster: cannot draw a secret from the kernel (getrandom)");
    got += static_cast<size_t>(n);
  }
  std::string hex;
  for (unsigned char c : raw) {
    char b[3];
    std::snprintf(b, sizeof b, "%02x", c);
    hex += b;
  }
  return hex;
}

std::string make_secret_file(const std::string& dir) {
  const std::string hex = new_secret();
  const std::string path = (std::filesystem::path(dir) / "secret").string();
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL, 0600);
  if (fd < 0) throw Error("cluster: cannot create the secret file " + path + " (it must not exist)");
  const bool ok = ::write(fd, hex.data(), hex.size()) == static_cast<ssize_t>(hex.size());
  ::close(fd);
  if (!ok) throw Error("cluster: cannot write the secret file " + path);
  return path;
}

std::string read_secret_file(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) throw Error(path + ": no such secret file");
  if (st.st_mode & 077) {
    char mode[8];
    std::snprintf(mode, sizeof mode, "%03o", st.st_mode & 0777);
    throw Error(path + ": the secret file is readable by others (mode " + mode + "); chmod 600 it");
  }
  if (st.st_size == 0 || st.st_size > 4096) throw Error(path + ": a secret file holds 1 to 4096 bytes");
  std::ifstream f(path, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  std::string s = ss.str();
  while (!s.empty() && (s.back() == '\n' || s.back() == '\r')) s.pop_back();
  if (s.empty()) throw Error(path + ": the secret file is empty");
  return s;
}

}  // namespace moesim::harness
