// Reads an expert store (exec/expert_store.h, docs/store-format.md). The constructor reads and validates
// the header and the whole index before any offset is trusted; afterwards every chunk read is checked
// against its checksum before it is decompressed, so a corrupt file gives a moesim::Error naming the
// chunk (layer, expert, tensor, shard) instead of wrong weights.
//
// I/O uses pread. With Options::direct_io the file is also opened with O_DIRECT and chunks are read into
// 4 KiB-aligned buffers (bypassing the page cache, as ZipMoE's SSD reads do, §2.3/§4); when the
// filesystem refuses O_DIRECT (tmpfs, some overlay filesystems) the reader falls back to buffered reads,
// and direct_io_active() says which path is in use.
//
// With Options::io = kUring the chunks are read through io_uring (exec/uring_io.h): one ring per calling
// thread, and read_chunks() submits all the chunks it is given at once (queue depth > 1 from one thread: a
// whole tensor's SM-chunk and E-chunks). Where the kernel refuses io_uring the reader falls back to pread
// and io_fallback() says why. Both paths verify every chunk's checksum and return the same bytes.
//
// Thread safety: all const methods may be called concurrently (pread has no shared file position; rings
// are per thread).
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <tuple>
#include <vector>

#include "exec/expert_store.h"
#include "exec/uring_io.h"

namespace moesim::exec {

// A heap buffer aligned to kStoreAlign with capacity rounded up to kStoreAlign (for O_DIRECT reads).
class AlignedBuffer {
 public:
  AlignedBuffer() = default;
  explicit AlignedBuffer(size_t size);
  uint8_t* data() { return p_.get(); }
  const uint8_t* data() const { return p_.get(); }
  size_t size() const { return size_; }
  size_t capacity() const { return cap_; }

 private:
  struct Free {
    void operator()(uint8_t* p) const;
  };
  std::unique_ptr<uint8_t, Free> p_;
  size_t size_ = 0, cap_ = 0;
};

struct StoreReadOptions {
  bool direct_io = false;  // try O_DIRECT reads (falls back to buffered reads when refused)
  IoBackend io = IoBackend::kPread;
};

class StoreReader {
 public:
  using Options = StoreReadOptions;
  explicit StoreReader(std::string path, Options opts = {});
  ~StoreReader();
  StoreReader(const StoreReader&) = delete;
  StoreReader& operator=(const StoreReader&) = delete;

  const std::string& path() const { return path_; }
  const StoreHeader& header() const { return header_; }
  const Json& meta() const { return index_.meta; }
  const std::vector<StoreEntry>& entries() const { return index_.entries; }
  uint64_t file_size() const { return file_size_; }
  const StoreEntry* find(uint32_t layer, uint32_t expert, const std::string& role) const;
  // A SwiGLU expert's tensor under either naming a store may hold (Hugging Face's or Mixtral's):
  // gate_proj/w1, up_proj/w3, down_proj/w2. nullptr where neither is there.
  enum class SwigluRole { kGate, kUp, kDown };
  const StoreEntry* find_swiglu(uint32_t layer, uint32_t expert, SwigluRole role) const;
  bool direct_io_active() const { return direct_fd_ >= 0 && direct_ok_.load(); }
  // The backend really in use: kUring only when it was asked for and every ring set up so far worked.
  IoBackend io_backend() const { return uring_ok_.load() ? IoBackend::kUring : IoBackend::kPread; }
  // Why io_uring was asked for and not used ("" otherwise).
  std::string io_fallback() const;
  // The descriptor reads go to (the O_DIRECT one while direct reads work), for raw benchmarks.
  int read_fd() const { return direct_io_active() ? direct_fd_ : fd_; }

  // Reads one chunk (shard -1 = the SM-chunk) and verifies its checksum.
  AlignedBuffer read_chunk(const StoreEntry& e, int shard) const;
  // The same through the page cache (a plain pread, never O_DIRECT nor io_uring), whatever the options: a
  // CPU worker's fused read of an E-chunk in a buffered run (ZipMoE §4's prototype reads "to better leverage
  // the page cache").
  AlignedBuffer read_chunk_buffered(const StoreEntry& e, int shard) const;
  // Reads several chunks of one tensor (shard -1 = the SM-chunk), each verified; with io_uring all in
  // flight at once. The result is in the order of `shards`.
  std::vector<AlignedBuffer> read_chunks(const StoreEntry& e, const std::vector<int>& shards) const;
  // Reads `size` bytes at `offset` into dst (capacity `aligned_size`, a multiple of 4 KiB for O_DIRECT):
  // pread, falling back to buffered reads like the chunk reads. No checksum (raw device benchmarks).
  void read_raw(uint64_t offset, uint8_t* dst, size_t size, size_t aligned_size,
                const std::string& what) const {
    pread_all(offset, dst, size, aligned_size, what);
  }
  // Recovers the whole tensor as BF16 into out (e.elements values): reads the SM-chunk, then reads,
  // verifies, decompresses and merges the K E-shards on up to `threads` threads (the caller's included).
  void recover(const StoreEntry& e, uint16_t* out, unsigned threads = 1) const;

 private:
  void pread_all(uint64_t offset, uint8_t* dst, size_t size, size_t aligned_size,
                 const std::string& what) const;
  void pread_buffered(uint64_t offset, uint8_t* dst, size_t size, const std::string& what) const;
  std::string path_;
  int fd_ = -1;
  int direct_fd_ = -1;
  mutable std::atomic<bool> direct_ok_{true};
  mutable std::atomic<bool> uring_ok_{false};
  mutable std::mutex fallback_mu_;
  mutable std::string io_fallback_;
  void uring_failed(const std::string& why) const;
  // Reads the chunks through this thread's ring; false (nothing read) when no ring can be set up here.
  bool uring_read(const std::vector<const StoreChunk*>& chunks, std::vector<AlignedBuffer>& bufs,
                  const std::vector<std::string>& labels) const;
  uint64_t file_size_ = 0;
  StoreHeader header_;
  StoreIndex index_;
  std::map<std::tuple<uint32_t, uint32_t, std::string>, size_t> by_key_;
  std::map<std::pair<int, int32_t>, std::unique_ptr<kernels::Codec>> codecs_;  // by (id, level)
  const kernels::Codec& codec_of(const StoreEntry& e) const;
};

}  // namespace moesim::exec
