// A read-only memory mapping of a whole file (RAII). Checkpoints are mapped rather than read so that
// packing a 90 GB model touches each page once and never holds the whole model in memory.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace moesim::exec {

class MappedFile {
 public:
  explicit MappedFile(std::string path);  // throws moesim::Error naming the file
  ~MappedFile();
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;

  const uint8_t* data() const { return data_; }  // nullptr for an empty file
  size_t size() const { return size_; }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  const uint8_t* data_ = nullptr;
  size_t size_ = 0;
};

}  // namespace moesim::exec
