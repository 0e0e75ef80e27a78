// Helpers shared by the exec/ tests: temporary folders and hand-made safetensors files.
#pragma once

#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace moesim::exec::testing {

// A fresh folder under the system temp dir, removed with its contents at scope exit.
class TempDir {
 public:
  explicit TempDir(const std::string& tag) {
    static int counter = 0;
    path_ = std::filesystem::temp_directory_path() /
            ("moesim_" + tag + "_" + std::to_string(::getpid()) + "_" + std::to_string(counter++));
    std::filesystem::remove_all(path_);
    std::filesystem::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  std::string file(const std::string& name) const { return (path_ / name).string(); }

 private:
  std::filesystem::path path_;
};

inline void write_bytes(const std::string& path, const std::vector<uint8_t>& b) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(b.data()), static_cast<std::streamsize>(b.size()));
}

inline std::vector<uint8_t> read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::vector<uint8_t>((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

// 8-byte LE length + header text + data bytes.
inline std::vector<uint8_t> safetensors_bytes(const std::string& header, const std::vector<uint8_t>& data) {
  std::vector<uint8_t> out(8 + header.size() + data.size());
  const uint64_t n = header.size();
  std::memcpy(out.data(), &n, 8);
  if (!header.empty()) std::memcpy(out.data() + 8, header.data(), header.size());
  if (!data.empty()) std::memcpy(out.data() + 8 + header.size(), data.data(), data.size());
  return out;
}

}  // namespace moesim::exec::testing
