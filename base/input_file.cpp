#include "base/input_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "base/error.h"
#include "base/output_guard.h"

namespace moesim {

InputFile::InputFile(std::string path) : path_(std::move(path)) {
  fd_ = ::open(path_.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd_ < 0) throw Error(path_ + ": cannot open: " + std::strerror(errno));
  struct stat st {};
  if (::fstat(fd_, &st) != 0) {
    const int e = errno;
    ::close(fd_);
    throw Error(path_ + ": cannot stat: " + std::strerror(e));
  }
  if (S_ISDIR(st.st_mode)) {
    ::close(fd_);
    throw Error(path_ + ": is a directory, not a file");
  }
  regular_ = S_ISREG(st.st_mode);
  if (regular_) {
    // The safety net of base/output_guard.h: an input only the work discovered may not be a declared output.
    try {
      check_not_an_output(fd_, path_, "read by the command");
    } catch (...) {
      ::close(fd_);
      throw;
    }
  }
  kind_ = regular_               ? "a regular file"
          : S_ISFIFO(st.st_mode) ? "a pipe"
          : S_ISCHR(st.st_mode)  ? "a character device"
          : S_ISBLK(st.st_mode)  ? "a block device"
          : S_ISSOCK(st.st_mode) ? "a socket"
                                 : "not a regular file";
  if (regular_ && st.st_size > 0) buf_.reserve(static_cast<size_t>(st.st_size));
}

InputFile::~InputFile() {
  if (fd_ >= 0) ::close(fd_);
}

bool InputFile::fill(size_t n) {
  const size_t old = buf_.size();
  buf_.resize(old + n);
  size_t got = 0;
  while (got < n) {
    const ssize_t k = ::read(fd_, buf_.data() + old + got, n - got);
    if (k == 0) {
      eof_ = true;
      break;
    }
    if (k < 0) {
      if (errno == EINTR) continue;
      const int e = errno;
      buf_.resize(old + got);
      throw Error(path_ + ": read failed: " + std::strerror(e));
    }
    got += static_cast<size_t>(k);
  }
  buf_.resize(old + got);
  return !eof_;
}

std::string_view InputFile::peek(size_t n) {
  if (buf_.size() < n && !eof_) fill(n - buf_.size());
  return std::string_view(buf_).substr(0, n);
}

std::string InputFile::read_all() {
  while (!eof_ && fill(size_t{1} << 16)) {
  }
  return std::move(buf_);
}

void InputFile::require_regular(const std::string& what) const {
  if (!regular_)
    throw Error(path_ + ": is not a regular file (" + kind_ + "); " + what + ": save it to a file first");
}

}  // namespace moesim
