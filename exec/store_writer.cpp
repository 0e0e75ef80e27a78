#include "exec/store_writer.h"

#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <exception>
#include <mutex>
#include <optional>
#include <set>
#include <thread>

#include "base/atomic_file.h"
#include "base/error.h"
#include "base/hash64.h"
#include "base/parallel.h"
#include "exec/expert_store.h"
#include "kernels/bf16.h"
#include "kernels/codec.h"

namespace moesim::exec {
namespace {

struct Packed {
  std::vector<uint8_t> sm;
  std::vector<std::vector<uint8_t>> shards;
  bool stored_raw = false;  // compression did not pay off: exponents stored raw (codec id raw)
};

// `inner_threads` > 1 compresses the K shards in parallel (used when there are fewer tensors than threads,
// e.g. one raw tensor); shards are independent frames, so the bytes do not depend on it.
// `compressed(n)` is told, from whichever thread compressed it, that a shard of n elements is done.
Packed pack_tensor(const TensorView& t, const kernels::Codec& codec, uint32_t K, unsigned inner_threads,
                   const std::function<void(uint64_t)>& compressed) {
  const size_t n = static_cast<size_t>(t.elements);
  std::vector<uint16_t> bf16(n);
  tensor_to_bf16(t, bf16.data());
  Packed p;
  std::vector<uint8_t> exps(n);
  p.sm.resize(n);
  kernels::split_bf16(bf16.data(), n, exps.data(), p.sm.data());
  p.shards.resize(K);
  auto compress_shard = [&](uint32_t k) {
    const uint64_t b = shard_begin(n, k, K), e = shard_begin(n, k + 1, K);
    if (e == b) return;  // an empty shard stores nothing
    p.shards[k] = kernels::compress_to_vector(codec, exps.data() + b, static_cast<size_t>(e - b));
    compressed(e - b);
  };
  parallel_for(K, inner_threads, compress_shard);
  // Tiny tensors (biases, norms) can grow under compression (frame headers, entropy tables): store their
  // exponents raw instead, so that no tensor is ever larger than its BF16 form. The codec id is per tensor
  // in the index, so readers need nothing special.
  size_t total = 0;
  for (const auto& s : p.shards) total += s.size();
  if (codec.id() != kernels::CodecId::kRaw && n > 0 && total >= n) {
    p.stored_raw = true;
    for (uint32_t k = 0; k < K; ++k) {
      const uint64_t b = shard_begin(n, k, K), e = shard_begin(n, k + 1, K);
      p.shards[k].assign(exps.begin() + static_cast<long>(b), exps.begin() + static_cast<long>(e));
    }
  }
  return p;
}

void pwrite_all(int fd, const std::vector<uint8_t>& bytes, uint64_t offset, const std::string& path) {
  size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t r =
        ::pwrite(fd, bytes.data() + done, bytes.size() - done, static_cast<off_t>(offset + done));
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) throw Error(path + ": write failed: " + std::strerror(errno));
    done += static_cast<size_t>(r);
  }
}

// The index of the store to write: every selected tensor's entry, its chunks still to be filled in.
StoreIndex plan_index(const ExpertSelection& sel, const PackOptions& opts, const kernels::Codec& codec,
                      uint32_t K) {
  StoreIndex idx;
  idx.meta = opts.meta;
  idx.meta["codec"] = codec.name();
  idx.meta["shards"] = K;
  std::set<std::tuple<uint32_t, uint32_t, std::string>> keys;
  for (const auto& s : sel.tensors) {
    const TensorView& t = *s.source;
    if (!t.dtype)
      throw Error(t.file + ": tensor '" + t.name + "' has dtype " + t.dtype_name + ", not BF16/F16/F32");
    if (s.role.size() > 65535 || t.name.size() > 65535 || t.shape.size() > kStoreMaxDims)
      throw Error(t.file + ": tensor '" + t.name.substr(0, 200) +
                  "': name too long or more than 8 dimensions");
    if (!keys.insert({s.layer, s.expert, s.role}).second)
      throw Error(t.file + ": tensor '" + t.name + "': a second tensor maps to layer " +
                  std::to_string(s.layer) + " expert " + std::to_string(s.expert) + " " + s.role);
    StoreEntry e;
    e.layer = s.layer;
    e.expert = s.expert;
    e.role = s.role;
    e.name = t.name;
    e.source_dtype = *t.dtype;
    e.shape = t.shape;
    e.elements = t.elements;
    e.codec = codec.id();
    e.level = codec.level();
    e.shards.resize(K);
    idx.entries.push_back(std::move(e));
  }
  return idx;
}

// Packs the selected tensors on worker threads in selection order; take(i) hands tensor i to the writer,
// or rethrows the first (lowest) failure. Every worker is joined by stop() or the destructor.
class PackPool {
 public:
  PackPool(const ExpertSelection& sel, const kernels::Codec& codec, uint32_t K, unsigned threads,
           unsigned inner_threads, const std::function<void(uint64_t)>& compressed)
      : sel_(sel),
        codec_(codec),
        K_(K),
        threads_(threads),
        inner_threads_(inner_threads),
        compressed_(compressed),
        total_(sel.tensors.size()),
        slots_(total_),
        errors_(total_) {
    try {
      for (unsigned t = 0; t < threads; ++t) pool_.emplace_back([this] { work(); });
    } catch (...) {
      stop();
      throw;
    }
  }
  PackPool(const PackPool&) = delete;
  PackPool& operator=(const PackPool&) = delete;
  ~PackPool() { stop(); }

  Packed take(size_t i) {
    Packed p;
    {
      std::unique_lock<std::mutex> lock(mu_);
      cv_.wait(lock, [&] { return slots_[i].has_value() || errors_[i] || abort_; });
      if (errors_[i]) std::rethrow_exception(errors_[i]);
      if (!slots_[i]) {
        // Another tensor failed: report the lowest failing one.
        for (auto& e : errors_)
          if (e) std::rethrow_exception(e);
        cv_.wait(lock, [&] { return slots_[i].has_value() || errors_[i]; });
        if (errors_[i]) std::rethrow_exception(errors_[i]);
      }
      p = std::move(*slots_[i]);
      slots_[i].reset();
      written_ = i + 1;
    }
    cv_.notify_all();
    return p;
  }

  void stop() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      abort_ = true;
    }
    cv_.notify_all();
    for (auto& t : pool_)
      if (t.joinable()) t.join();
  }

 private:
  void work() {
    while (true) {
      size_t i;
      {
        std::unique_lock<std::mutex> lock(mu_);
        // Bound memory: never run further ahead of the writer than `threads` tensors.
        cv_.wait(lock, [&] { return abort_ || next_job_ >= total_ || next_job_ < written_ + threads_; });
        if (abort_ || next_job_ >= total_) return;
        i = next_job_++;
      }
      std::optional<Packed> p;
      std::exception_ptr err;
      try {
        p = pack_tensor(*sel_.tensors[i].source, codec_, K_, inner_threads_, compressed_);
      } catch (...) {
        err = std::current_exception();
      }
      {
        std::lock_guard<std::mutex> lock(mu_);
        slots_[i] = std::move(p);
        errors_[i] = err;
        if (err) abort_ = true;
      }
      cv_.notify_all();
    }
  }

  const ExpertSelection& sel_;
  const kernels::Codec& codec_;
  const uint32_t K_;
  const unsigned threads_, inner_threads_;
  const std::function<void(uint64_t)>& compressed_;
  const size_t total_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<std::optional<Packed>> slots_;
  std::vector<std::exception_ptr> errors_;
  size_t next_job_ = 0, written_ = 0;
  bool abort_ = false;
  std::vector<std::thread> pool_;
};

// Streams one packed tensor's chunks out, each 4 KiB-aligned, and records them in its entry.
void write_chunks(AtomicFile& out, StoreEntry& e, const Packed& p, uint32_t K) {
  if (p.stored_raw) {
    e.codec = kernels::CodecId::kRaw;
    e.level = 0;
  }
  auto emit = [&](StoreChunk& c, const std::vector<uint8_t>& bytes, uint64_t raw) {
    c.offset = out.pad_to(kStoreAlign);
    c.size = bytes.size();
    c.raw_size = raw;
    c.checksum = hash64(bytes.data(), bytes.size());
    out.write(bytes.data(), bytes.size());
  };
  emit(e.sm, p.sm, p.sm.size());
  for (uint32_t k = 0; k < K; ++k) emit(e.shards[k], p.shards[k], e.shard_begin(k + 1) - e.shard_begin(k));
}

// Fills in the reserved index and the header, and commits the file; returns the file's size.
uint64_t finish_store(AtomicFile& out, const StoreIndex& idx, uint64_t index_size,
                      const std::string& out_path) {
  const std::vector<uint8_t> index_bytes = encode_index(idx);
  if (index_bytes.size() != index_size) throw Error(out_path + ": internal error: index size changed");
  StoreHeader h;
  h.index_offset = kStoreAlign;
  h.index_size = index_size;
  h.file_size = out.offset();
  h.index_checksum = hash64(index_bytes.data(), index_bytes.size());
  if (std::fflush(out.handle()) != 0) throw Error(out_path + ": write failed: " + std::strerror(errno));
  const int fd = ::fileno(out.handle());
  pwrite_all(fd, index_bytes, kStoreAlign, out_path);
  pwrite_all(fd, encode_header(h), 0, out_path);
  out.commit();
  return h.file_size;
}

}  // namespace

PackResult write_store(const std::string& out_path, const ExpertSelection& sel, const PackOptions& opts,
                       const std::function<void(uint64_t, uint64_t)>& progress) {
  if (opts.shards == 0 || opts.shards > kStoreMaxShards)
    throw Error("--shards must be in 1.." + std::to_string(kStoreMaxShards));
  const auto codec = kernels::make_codec(opts.codec);
  const uint32_t K = opts.shards;

  // The index has a fixed size given names, shapes and K, so it is reserved up front right after the header
  // page and filled in at the end; chunks stream out in between.
  StoreIndex idx = plan_index(sel, opts, *codec, K);
  const uint64_t index_size = encode_index(idx).size();
  const uint64_t data_start = (kStoreAlign + index_size + kStoreAlign - 1) / kStoreAlign * kStoreAlign;

  AtomicFile out(out_path, AtomicFile::Access::kRandom);
  {
    std::vector<uint8_t> zeros(static_cast<size_t>(data_start), 0);
    out.write(zeros.data(), zeros.size());
  }

  const size_t total = sel.tensors.size();
  uint64_t total_elements = 0;
  for (const auto& s : sel.tensors) total_elements += s.source->elements;
  std::atomic<uint64_t> done_elements{0};
  const std::function<void(uint64_t)> compressed = [&](uint64_t n) {
    const uint64_t done = done_elements.fetch_add(n, std::memory_order_relaxed) + n;
    if (progress) progress(done, total_elements);
  };
  const unsigned threads =
      static_cast<unsigned>(std::min<size_t>(std::max(1u, opts.threads), std::max<size_t>(total, 1)));
  const unsigned inner_threads = std::max(1u, opts.threads / threads);
  PackPool pool(sel, *codec, K, threads, inner_threads, compressed);

  PackResult res;
  for (size_t i = 0; i < total; ++i) {
    const Packed p = pool.take(i);
    StoreEntry& e = idx.entries[i];
    write_chunks(out, e, p, K);
    res.tensors++;
    res.bf16_bytes += e.bf16_bytes();
    res.e_bytes += e.e_bytes();
    res.sm_bytes += e.sm.size;
  }
  pool.stop();

  res.file_size = finish_store(out, idx, index_size, out_path);
  return res;
}

}  // namespace moesim::exec
