// An input file opened exactly once. Readers that must look at the first bytes before they know how to
// parse the rest (format detection) peek() at a buffered prefix and then take read_all() from the same
// descriptor: closing and reopening would lose what a pipe, a FIFO, `/dev/stdin` or a shell's `<(cmd)`
// already delivered, or block forever on a FIFO whose writer has gone.
//
// Whether the input is a regular file says whether it may be mapped or read twice (seekable); a reader
// that needs that calls require_regular() for its error, which names the file, what it is and what to do.
#pragma once

#include <string>
#include <string_view>

namespace moesim {

class InputFile {
 public:
  // Throws moesim::Error "PATH: cannot open: REASON" or "PATH: is a directory, not a file". Opening a FIFO
  // waits for its writer, as every reader of a FIFO does. A regular file that is a declared output of the
  // running command (base/output_guard.h) is a moesim::UsageError: reading it means the output would replace
  // it.
  explicit InputFile(std::string path);
  ~InputFile();
  InputFile(const InputFile&) = delete;
  InputFile& operator=(const InputFile&) = delete;

  const std::string& path() const { return path_; }
  int fd() const { return fd_; }
  bool regular() const { return regular_; }
  // "a pipe", "a character device", "a block device", "a socket" (for messages); "a regular file".
  const char* kind() const { return kind_; }

  // The first `n` bytes (fewer at the end of the input), read once and kept for read_all().
  std::string_view peek(size_t n);
  // The whole input: the peeked prefix, then the rest. Call once.
  std::string read_all();

  // Throws moesim::Error "PATH: is not a regular file (KIND); WHAT: save it to a file first" unless the
  // input is a regular file. `what` says why the reader needs one ("the .mtr reader maps the file").
  void require_regular(const std::string& what) const;

 private:
  // Appends up to `n` more bytes to buf_; false at the end of the input.
  bool fill(size_t n);

  std::string path_;
  int fd_ = -1;
  bool regular_ = false;
  const char* kind_ = "a regular file";
  std::string buf_;
  bool eof_ = false;
};

}  // namespace moesim
