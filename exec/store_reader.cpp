#include "exec/store_reader.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "base/error.h"
#include "base/hash64.h"
#include "base/output_guard.h"
#include "base/parallel.h"
#include "kernels/recover.h"

namespace moesim::exec {

void AlignedBuffer::Free::operator()(uint8_t* p) const {
  std::free(p);
}

AlignedBuffer::AlignedBuffer(size_t size) : size_(size) {
  cap_ = (size + kStoreAlign - 1) / kStoreAlign * kStoreAlign;
  if (cap_ == 0) cap_ = kStoreAlign;
  void* p = std::aligned_alloc(kStoreAlign, cap_);
  if (!p) throw Error("out of memory allocating a " + std::to_string(cap_) + "-byte read buffer");
  p_.reset(static_cast<uint8_t*>(p));
}

StoreReader::StoreReader(std::string path, Options opts) : path_(std::move(path)) {
  fd_ = ::open(path_.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd_ < 0) throw Error(path_ + ": cannot open: " + std::strerror(errno));
  try {
    struct stat st {};
    if (::fstat(fd_, &st) != 0) throw Error(path_ + ": cannot stat: " + std::strerror(errno));
    if (!S_ISREG(st.st_mode)) throw Error(path_ + ": not a regular file");
    check_not_an_output(fd_, path_, "the expert store");
    file_size_ = static_cast<uint64_t>(st.st_size);
    uint8_t hdr[kStoreHeaderSize] = {};
    const size_t hn = static_cast<size_t>(std::min<uint64_t>(file_size_, kStoreHeaderSize));
    pread_all(0, hdr, hn, hn, "header");
    header_ = decode_header(hdr, hn, file_size_, path_);
    std::vector<uint8_t> idx(header_.index_size);
    pread_all(header_.index_offset, idx.data(), idx.size(), idx.size(), "index");
    index_ = decode_index(idx.data(), idx.size(), header_, file_size_, path_);
    for (size_t i = 0; i < index_.entries.size(); ++i) {
      const auto& e = index_.entries[i];
      by_key_[{e.layer, e.expert, e.role}] = i;
      auto& c = codecs_[{static_cast<int>(e.codec), e.level}];
      if (!c) c = kernels::make_codec(e.codec, e.level);
    }
    if (opts.direct_io) {
#ifdef O_DIRECT
      direct_fd_ = ::open(path_.c_str(), O_RDONLY | O_CLOEXEC | O_DIRECT);
#endif
    }
    if (opts.io == IoBackend::kUring) {
      const std::string why = uring_probe();
      if (why.empty()) {
        uring_ok_.store(true);
      } else {
        uring_failed(why);
      }
    }
  } catch (...) {
    ::close(fd_);
    if (direct_fd_ >= 0) ::close(direct_fd_);
    throw;
  }
}

StoreReader::~StoreReader() {
  if (fd_ >= 0) ::close(fd_);
  if (direct_fd_ >= 0) ::close(direct_fd_);
}

const StoreEntry* StoreReader::find(uint32_t layer, uint32_t expert, const std::string& role) const {
  auto it = by_key_.find({layer, expert, role});
  return it == by_key_.end() ? nullptr : &index_.entries[it->second];
}

const StoreEntry* StoreReader::find_swiglu(uint32_t layer, uint32_t expert, SwigluRole role) const {
  static const char* const kNames[3][2] = {{"gate_proj", "w1"}, {"up_proj", "w3"}, {"down_proj", "w2"}};
  const auto& [hf, mixtral] = kNames[static_cast<int>(role)];
  const StoreEntry* e = find(layer, expert, hf);
  return e ? e : find(layer, expert, mixtral);
}

const kernels::Codec& StoreReader::codec_of(const StoreEntry& e) const {
  return *codecs_.at({static_cast<int>(e.codec), e.level});
}

void StoreReader::pread_all(uint64_t offset, uint8_t* dst, size_t size, size_t aligned_size,
                            const std::string& what) const {
  // O_DIRECT needs offset, length and buffer aligned: callers pass aligned buffers and offsets for chunks.
  if (direct_fd_ >= 0 && direct_ok_.load() && offset % kStoreAlign == 0 && aligned_size % kStoreAlign == 0 &&
      reinterpret_cast<uintptr_t>(dst) % kStoreAlign == 0) {
    size_t done = 0;
    bool failed = false;
    while (done < size) {
      const ssize_t r =
          ::pread(direct_fd_, dst + done, aligned_size - done, static_cast<off_t>(offset + done));
      if (r < 0 && errno == EINTR) continue;
      if (r < 0 && errno == EINVAL) {  // the filesystem accepted the open but refuses direct reads
        direct_ok_.store(false);
        failed = true;
        break;
      }
      if (r < 0)
        throw binary_input_error(path_, offset, what, std::string("read failed: ") + std::strerror(errno));
      if (r == 0) throw binary_input_error(path_, offset + done, what, "unexpected end of file");
      done += static_cast<size_t>(r);
      if (done % kStoreAlign != 0 && done < size) {  // a short unaligned read: finish buffered
        failed = true;
        break;
      }
    }
    if (!failed) return;
  }
  pread_buffered(offset, dst, size, what);
}

void StoreReader::pread_buffered(uint64_t offset, uint8_t* dst, size_t size, const std::string& what) const {
  size_t done = 0;
  while (done < size) {
    const ssize_t r = ::pread(fd_, dst + done, size - done, static_cast<off_t>(offset + done));
    if (r < 0 && errno == EINTR) continue;
    if (r < 0)
      throw binary_input_error(path_, offset, what, std::string("read failed: ") + std::strerror(errno));
    if (r == 0) throw binary_input_error(path_, offset + done, what, "unexpected end of file (truncated)");
    done += static_cast<size_t>(r);
  }
}

void StoreReader::uring_failed(const std::string& why) const {
  uring_ok_.store(false);
  std::lock_guard<std::mutex> lk(fallback_mu_);
  if (io_fallback_.empty()) io_fallback_ = why;
}

std::string StoreReader::io_fallback() const {
  std::lock_guard<std::mutex> lk(fallback_mu_);
  return io_fallback_;
}

bool StoreReader::uring_read(const std::vector<const StoreChunk*>& chunks, std::vector<AlignedBuffer>& bufs,
                             const std::vector<std::string>& labels) const {
  constexpr unsigned kRingDepth = 64;
  thread_local std::unique_ptr<UringQueue> ring;  // one per thread: a ring's queues are not thread-safe
  if (!ring) {
    try {
      ring = std::make_unique<UringQueue>(kRingDepth);
    } catch (const Error& e) {
      uring_failed(e.what());
      return false;
    }
  }
  const bool direct = direct_io_active();
  const int fd = direct ? direct_fd_ : fd_;
  const size_t n = chunks.size();
  std::vector<int> result(n, 0);
  size_t next = 0, in_flight = 0;
  // Every read is reaped before anything is checked or thrown: no buffer is freed under the kernel.
  while (next < n || in_flight > 0) {
    bool queued = false;
    while (next < n && in_flight < ring->depth()) {
      const StoreChunk& c = *chunks[next];
      if (c.size > 0) {
        const size_t len = direct ? bufs[next].capacity() : static_cast<size_t>(c.size);
        if (!ring->prepare_read(fd, bufs[next].data(), len, c.offset, next)) break;
        ++in_flight;
        queued = true;
      }
      ++next;
    }
    if (queued) ring->submit();
    if (in_flight == 0) continue;
    uint64_t id = 0;
    int res = 0;
    ring->wait(&id, &res);
    --in_flight;
    if (id < n) result[id] = res;
  }
  for (size_t i = 0; i < n; ++i) {
    const StoreChunk& c = *chunks[i];
    if (c.size == 0) continue;
    const auto size = static_cast<size_t>(c.size);
    const int res = result[i];
    if (res == -EINVAL && direct) {  // the filesystem refuses direct reads: buffered from now on
      direct_ok_.store(false);
      pread_all(c.offset, bufs[i].data(), size, bufs[i].capacity(), labels[i]);
      continue;
    }
    if (res < 0)
      throw binary_input_error(path_, c.offset, labels[i],
                               std::string("read failed: ") + std::strerror(-res));
    if (res == 0) throw binary_input_error(path_, c.offset, labels[i], "unexpected end of file (truncated)");
    const size_t got = std::min(static_cast<size_t>(res), size);
    if (got < size)  // a short read: the rest with pread (buffered where no longer aligned)
      pread_all(c.offset + got, bufs[i].data() + got, size - got, bufs[i].capacity() - got, labels[i]);
  }
  return true;
}

std::vector<AlignedBuffer> StoreReader::read_chunks(const StoreEntry& e,
                                                    const std::vector<int>& shards) const {
  std::vector<const StoreChunk*> chunks;
  std::vector<AlignedBuffer> bufs;
  std::vector<std::string> labels;
  chunks.reserve(shards.size());
  bufs.reserve(shards.size());
  labels.reserve(shards.size());
  for (int shard : shards) {
    const StoreChunk& c = shard < 0 ? e.sm : e.shards.at(static_cast<size_t>(shard));
    chunks.push_back(&c);
    bufs.emplace_back(static_cast<size_t>(c.size));
    labels.push_back(e.chunk_label(shard));
  }
  if (!(uring_ok_.load() && uring_read(chunks, bufs, labels)))
    for (size_t i = 0; i < chunks.size(); ++i)
      if (chunks[i]->size > 0)
        pread_all(chunks[i]->offset, bufs[i].data(), bufs[i].size(), bufs[i].capacity(), labels[i]);
  for (size_t i = 0; i < chunks.size(); ++i)
    if (hash64(bufs[i].data(), bufs[i].size()) != chunks[i]->checksum)
      throw binary_input_error(path_, chunks[i]->offset, labels[i],
                               "checksum mismatch: the chunk is corrupt");
  return bufs;
}

AlignedBuffer StoreReader::read_chunk(const StoreEntry& e, int shard) const {
  return std::move(read_chunks(e, {shard}).front());
}

AlignedBuffer StoreReader::read_chunk_buffered(const StoreEntry& e, int shard) const {
  const StoreChunk& c = shard < 0 ? e.sm : e.shards.at(static_cast<size_t>(shard));
  AlignedBuffer b(static_cast<size_t>(c.size));
  const std::string label = e.chunk_label(shard);
  if (c.size > 0) pread_buffered(c.offset, b.data(), b.size(), label);
  if (hash64(b.data(), b.size()) != c.checksum)
    throw binary_input_error(path_, c.offset, label, "checksum mismatch: the chunk is corrupt");
  return b;
}

void StoreReader::recover(const StoreEntry& e, uint16_t* out, unsigned threads) const {
  const AlignedBuffer sm = read_chunk(e, -1);
  const uint32_t K = static_cast<uint32_t>(e.shards.size());
  const kernels::Codec& codec = codec_of(e);
  // Each call merges one shard, but the tensor as a whole decides whether its lines stay in cache.
  const auto stores = e.bf16_bytes() >= kernels::kMergeStreamOutBytes ? kernels::MergeStores::kStream
                                                                      : kernels::MergeStores::kCache;
  // Each task reads, verifies, decompresses and merges one shard: the merge of shard k needs only its
  // own exponent bytes and the matching SM range, so no barrier between decompression and merge.
  // read_chunk has checked the chunk's XXH64 over the stored bytes, so the codec's own content
  // checksum would only check the same bytes again (FrameCheck::kTrusted; docs/store-format.md).
  auto task = [&](uint32_t k) {
    const AlignedBuffer stored = read_chunk(e, static_cast<int>(k));
    const StoreChunk& c = e.shards[k];
    if (c.raw_size == 0) return;
    const uint64_t begin = e.shard_begin(k);
    const std::string label = e.chunk_label(static_cast<int>(k));
    const std::string what = path_ + ": " + label;
    try {
      kernels::recover_shard(codec, stored.data(), c.size, sm.data() + begin, static_cast<size_t>(c.raw_size),
                             out + begin, what.c_str(), kernels::FrameCheck::kTrusted, stores);
    } catch (const Error& err) {
      // Keep one uniform message shape (file, offset, chunk) whatever the codec adapter said.
      const std::string m = err.what();
      if (m.find(label) != std::string::npos) throw;
      throw binary_input_error(path_, c.offset, label, m);
    }
  };
  // The error reported is the lowest failing shard, whatever the thread timing (base/parallel.h).
  parallel_for(K, threads, task);
}

}  // namespace moesim::exec
