#include "exec/uring_io.h"

#include <cerrno>
#include <cstring>

#include "base/error.h"

#ifdef MOESIM_HAVE_IO_URING
#include <liburing.h>
#endif

namespace moesim::exec {

const char* io_backend_name(IoBackend b) { return b == IoBackend::kUring ? "uring" : "pread"; }

IoBackend parse_io_backend(const std::string& option, const std::string& text) {
  if (text == "pread") return IoBackend::kPread;
  if (text == "uring") return IoBackend::kUring;
  throw Error(option + ": '" + text + "' is not an I/O backend (pread or uring)");
}

#ifdef MOESIM_HAVE_IO_URING

struct UringQueue::Ring {
  io_uring ring{};
};

bool uring_compiled() { return true; }

UringQueue::UringQueue(unsigned depth) : depth_(depth == 0 ? 1 : depth) {
  auto* r = new Ring;
  const int rc = io_uring_queue_init(depth_, &r->ring, 0);
  if (rc < 0) {
    delete r;
    throw Error(std::string("io_uring_queue_init: ") + std::strerror(-rc));
  }
  ring_ = r;
}

UringQueue::~UringQueue() {
  if (!ring_) return;
  io_uring_queue_exit(&ring_->ring);
  delete ring_;
}

bool UringQueue::prepare_read(int fd, void* buf, size_t len, uint64_t offset, uint64_t user_data) {
  io_uring_sqe* sqe = io_uring_get_sqe(&ring_->ring);
  if (!sqe) return false;
  io_uring_prep_read(sqe, fd, buf, static_cast<unsigned>(len), offset);
  io_uring_sqe_set_data64(sqe, user_data);
  return true;
}

void UringQueue::submit() {
  for (;;) {
    const int rc = io_uring_submit(&ring_->ring);
    if (rc >= 0) return;
    if (rc == -EINTR || rc == -EAGAIN) continue;
    throw Error(std::string("io_uring_submit: ") + std::strerror(-rc));
  }
}

void UringQueue::wait(uint64_t* user_data, int* result) {
  io_uring_cqe* cqe = nullptr;
  for (;;) {
    const int rc = io_uring_wait_cqe(&ring_->ring, &cqe);
    if (rc == 0) break;
    if (rc == -EINTR || rc == -EAGAIN) continue;
    throw Error(std::string("io_uring_wait_cqe: ") + std::strerror(-rc));
  }
  *user_data = io_uring_cqe_get_data64(cqe);
  *result = cqe->res;
  io_uring_cqe_seen(&ring_->ring, cqe);
}

std::string uring_probe() {
  try {
    UringQueue q(1);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

#else  // no liburing in this build

struct UringQueue::Ring {};

bool uring_compiled() { return false; }

std::string uring_probe() { return "this build has no io_uring (liburing-dev was not found when it was configured)"; }

UringQueue::UringQueue(unsigned depth) : depth_(depth) { throw Error(uring_probe()); }
UringQueue::~UringQueue() = default;
bool UringQueue::prepare_read(int, void*, size_t, uint64_t, uint64_t) { return false; }
void UringQueue::submit() { throw Error(uring_probe()); }
void UringQueue::wait(uint64_t*, int*) { throw Error(uring_probe()); }

#endif

}  // namespace moesim::exec
