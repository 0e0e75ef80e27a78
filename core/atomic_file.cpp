#include "core/atomic_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>
#include <vector>

#include "core/error.h"

namespace moesim {
namespace {
std::atomic<unsigned> g_counter{0};
std::string errno_text() { return std::strerror(errno); }
}  // namespace

AtomicFile::AtomicFile(std::string path) : path_(std::move(path)) {
  tmp_ = path_ + ".tmp." + std::to_string(::getpid()) + "." + std::to_string(g_counter++);
  f_ = std::fopen(tmp_.c_str(), "wb");
  if (!f_) throw Error(path_ + ": cannot create output file: " + errno_text());
}

AtomicFile::~AtomicFile() {
  if (f_) std::fclose(f_);
  if (!committed_) std::remove(tmp_.c_str());
}

void AtomicFile::write(const void* data, size_t size) {
  if (size == 0) return;
  if (std::fwrite(data, 1, size, f_) != size) throw Error(path_ + ": write failed: " + errno_text());
  offset_ += size;
}

uint64_t AtomicFile::pad_to(uint64_t alignment) {
  uint64_t rem = offset_ % alignment;
  if (rem) {
    std::vector<char> zeros(alignment - rem, 0);
    write(zeros.data(), zeros.size());
  }
  return offset_;
}

void AtomicFile::commit() {
  if (std::fflush(f_) != 0) throw Error(path_ + ": flush failed: " + errno_text());
  if (::fsync(::fileno(f_)) != 0 && errno != EINVAL)
    throw Error(path_ + ": fsync failed: " + errno_text());
  std::fclose(f_);
  f_ = nullptr;
  if (std::rename(tmp_.c_str(), path_.c_str()) != 0)
    throw Error(path_ + ": cannot rename temporary file into place: " + errno_text());
  committed_ = true;
}

void write_file_atomic(const std::string& path, std::string_view content) {
  if (path == "-") {
    std::fwrite(content.data(), 1, content.size(), stdout);
    std::fflush(stdout);
    return;
  }
  AtomicFile f(path);
  f.write(content);
  f.commit();
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(path + ": cannot open: " + errno_text());
  std::ostringstream ss;
  ss << in.rdbuf();
  if (in.bad()) throw Error(path + ": read failed");
  return ss.str();
}

}  // namespace moesim
