// Output files that never exist half-written. AtomicFile writes to "<path>.tmp.<pid>.<n>" in the same
// folder; commit() fsyncs and renames it over <path>; if commit() is never called (an error was thrown),
// the destructor removes the temporary file. A failed command therefore leaves no partial output.
#pragma once

#include <cstdio>
#include <string>
#include <string_view>

namespace moesim {

class AtomicFile {
 public:
  explicit AtomicFile(std::string path);  // throws moesim::Error when the temp file cannot be created
  ~AtomicFile();
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;

  void write(const void* data, size_t size);  // throws on a short write (disk full)
  void write(std::string_view s) { write(s.data(), s.size()); }
  // Pads with zero bytes up to a multiple of `alignment`; returns the new offset.
  uint64_t pad_to(uint64_t alignment);
  uint64_t offset() const { return offset_; }
  std::FILE* handle() { return f_; }
  const std::string& path() const { return path_; }
  void commit();  // flush, fsync, rename; the file is complete on return

 private:
  std::string path_;
  std::string tmp_;
  std::FILE* f_ = nullptr;
  uint64_t offset_ = 0;
  bool committed_ = false;
};

// Writes `content` to `path` atomically. "-" writes to standard output.
void write_file_atomic(const std::string& path, std::string_view content);

// Reads a whole file; throws moesim::Error naming the file on failure.
std::string read_file(const std::string& path);

}  // namespace moesim
