// io_uring reads (Linux, through Debian's liburing), for the expert store's I/O path and the queue-depth
// microbenchmark of `moesim calibrate --micro`. Compiled only when CMake found liburing
// (MOESIM_HAVE_IO_URING, option MOESIM_IO_URING); without it every entry point reports "unavailable" and the
// callers use pread. Where the kernel refuses io_uring (an old kernel, a seccomp filter in a container,
// io_uring_disabled), setting a ring up fails and callers fall back to pread with a warning.
//
// A ring is owned by one thread (io_uring's submission queue is not thread-safe): the store reader keeps
// one per thread (thread_local) and each I/O thread submits and reaps its own reads.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace moesim::exec {

enum class IoBackend : uint8_t { kPread, kUring };

const char* io_backend_name(IoBackend b);  // "pread", "uring"
// Parses "pread" / "uring"; throws moesim::Error naming the option otherwise.
IoBackend parse_io_backend(const std::string& option, const std::string& text);

// Whether this build has liburing at all.
bool uring_compiled();
// Sets a ring up and tears it down: "" when io_uring works here, else why not ("built without liburing",
// "io_uring_queue_init: Operation not permitted").
std::string uring_probe();

// One ring of `depth` entries. The constructor throws moesim::Error (with the reason) when setup fails.
class UringQueue {
 public:
  explicit UringQueue(unsigned depth);
  ~UringQueue();
  UringQueue(const UringQueue&) = delete;
  UringQueue& operator=(const UringQueue&) = delete;

  unsigned depth() const { return depth_; }
  // Queues a read of `len` bytes at `offset` into `buf` (not yet submitted). False when the submission
  // queue is full: submit() and reap some first.
  bool prepare_read(int fd, void* buf, size_t len, uint64_t offset, uint64_t user_data);
  // Hands the prepared reads to the kernel; throws moesim::Error on failure.
  void submit();
  // Waits for one completion: its user_data and result (bytes read, or -errno).
  void wait(uint64_t* user_data, int* result);

 private:
  struct Ring;
  Ring* ring_ = nullptr;
  unsigned depth_ = 0;
};

}  // namespace moesim::exec
