#include "exec/microbench.h"

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <exception>
#include <memory>
#include <mutex>
#include <thread>

#include "base/error.h"
#include "base/hash64.h"
#include "base/rng.h"
#include "base/sample_stats.h"
#include "exec/thread_cpu.h"
#include "kernels/bf16.h"
#include "kernels/codec.h"
#include "kernels/expert_ffn.h"

namespace moesim::exec {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

// The mean of the values >= 0 (a clock that failed gives -1), -1 when there are none.
double mean_of_known(const std::vector<double>& v) {
  double sum = 0;
  size_t n = 0;
  for (double x : v)
    if (x >= 0) {
      sum += x;
      ++n;
    }
  return n ? sum / static_cast<double>(n) : -1.0;
}

// A point's operation count, mean and median time (MicroOpPoint, MicroComputePoint).
template <class Point>
void set_times(Point& p, const std::vector<double>& times) {
  p.ops = times.size();
  p.time_s = mean_of(times);
  p.time_p50_s = median_of(times);
}

// Runs several kinds of work at once: group g has threads[g] threads, each calling work[g](thread index in
// the group) in a loop until `seconds` have passed and it has done at least `min_ops` calls. Returns the
// duration of every call per group, and the wall time from the common start to the last thread's end.
// Every thread is joined before it returns or rethrows the first failure.
struct GroupTimes {
  std::vector<std::vector<double>> times;  // per group
  std::vector<std::vector<double>> cpu;    // per group: each call's thread CPU time (< 0: no clock)
  double wall_s = 0;
};

GroupTimes run_groups(const std::vector<uint32_t>& threads,
                      const std::vector<std::function<void(uint32_t)>>& work, double seconds,
                      uint64_t min_ops) {
  std::atomic<bool> go{false}, stop{false}, failed{false};
  std::mutex mu;
  std::exception_ptr error;
  std::vector<std::vector<std::vector<double>>> per_thread(threads.size()), cpu_thread(threads.size());
  std::vector<double> ends;
  Clock::time_point t0;
  std::vector<std::thread> pool;
  auto body = [&](size_t g, uint32_t i, std::vector<double>* out, std::vector<double>* cpu) {
    while (!go.load(std::memory_order_acquire)) std::this_thread::yield();
    try {
      uint64_t n = 0;
      while (n < min_ops || !stop.load(std::memory_order_relaxed)) {
        const double c0 = thread_cpu_seconds();
        const auto s = Clock::now();
        work[g](i);
        out->push_back(seconds_since(s));
        const double c1 = thread_cpu_seconds();
        cpu->push_back(c0 >= 0 && c1 >= c0 ? c1 - c0 : -1.0);
        ++n;
        if (failed.load(std::memory_order_relaxed)) break;
      }
    } catch (...) {
      std::lock_guard<std::mutex> lk(mu);
      if (!error) error = std::current_exception();
      failed.store(true);
      stop.store(true);
    }
    const double e = seconds_since(t0);
    std::lock_guard<std::mutex> lk(mu);
    ends.push_back(e);
  };
  for (size_t g = 0; g < threads.size(); ++g) {
    per_thread[g].resize(threads[g]);
    cpu_thread[g].resize(threads[g]);
  }
  try {
    for (size_t g = 0; g < threads.size(); ++g)
      for (uint32_t i = 0; i < threads[g]; ++i)
        pool.emplace_back(body, g, i, &per_thread[g][i], &cpu_thread[g][i]);
  } catch (...) {
    stop.store(true);
    t0 = Clock::now();
    go.store(true, std::memory_order_release);
    for (auto& t : pool) t.join();
    throw;
  }
  t0 = Clock::now();
  go.store(true, std::memory_order_release);
  const auto until = t0 + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
  while (Clock::now() < until && !stop.load()) std::this_thread::sleep_for(std::chrono::milliseconds(2));
  stop.store(true);
  for (auto& t : pool) t.join();
  if (error) std::rethrow_exception(error);
  GroupTimes r;
  r.times.resize(threads.size());
  r.cpu.resize(threads.size());
  for (size_t g = 0; g < threads.size(); ++g) {
    for (const auto& v : per_thread[g]) r.times[g].insert(r.times[g].end(), v.begin(), v.end());
    for (const auto& v : cpu_thread[g]) r.cpu[g].insert(r.cpu[g].end(), v.begin(), v.end());
  }
  r.wall_s = ends.empty() ? 0.0 : *std::max_element(ends.begin(), ends.end());
  return r;
}

struct Stores {
  std::vector<uint8_t> exp, sm;  // real exponent and SM bytes of the store's first tensors
};

constexpr uint64_t kMaxFrame = 256 << 10;  // the largest decompression frame benchmarked

// Layer 0 expert 0's SwiGLU tensors and their BF16 weights: what the compute and interference phases run.
struct Expert {
  const StoreEntry* gate = nullptr;
  const StoreEntry* up = nullptr;
  const StoreEntry* down = nullptr;
  std::vector<uint16_t> wg, wu, wd;

  uint64_t bytes() const { return 2 * (gate->elements + up->elements + down->elements); }
};

// Finds the expert's tensors and records the shape it computes; throws for a store without a SwiGLU expert.
Expert find_expert(const StoreReader& store, MicroResults& res) {
  Expert x;
  using Role = StoreReader::SwigluRole;
  x.gate = store.find_swiglu(0, 0, Role::kGate);
  x.up = store.find_swiglu(0, 0, Role::kUp);
  x.down = store.find_swiglu(0, 0, Role::kDown);
  if (!x.gate || !x.up || !x.down || x.gate->shape.size() != 2)
    throw Error(store.path() +
                ": calibrate --micro computes a SwiGLU expert and needs layer 0 expert 0's gate/up/down "
                "tensors (gate_proj/up_proj/down_proj or w1/w3/w2)");
  res.inter = static_cast<uint32_t>(x.gate->shape[0]);
  res.hidden = static_cast<uint32_t>(x.gate->shape[1]);
  if (x.up->elements != x.gate->elements || x.down->elements != x.gate->elements)
    throw Error(store.path() +
                ": layer 0 expert 0's gate, up and down tensors differ in size: not a SwiGLU expert");
  return x;
}

void recover_weights(const StoreReader& store, Expert& x) {
  x.wg.resize(x.gate->elements);
  x.wu.resize(x.up->elements);
  x.wd.resize(x.down->elements);
  store.recover(*x.gate, x.wg.data(), 1);
  store.recover(*x.up, x.wu.data(), 1);
  store.recover(*x.down, x.wd.data(), 1);
}

// Where the store's chunks begin and the sizes of its data, which the plan follows.
struct Survey {
  uint64_t data_begin = 0;
  uint64_t median_shard = 0;
  uint64_t median_tensor = 0;
  const StoreEntry* coded = nullptr;  // the first compressed tensor; nullptr for a raw store
};

Survey survey_store(const StoreReader& store, MicroResults& res) {
  const auto& entries = store.entries();
  Survey s;
  s.data_begin = store.file_size();
  std::vector<uint64_t> shard_raw, tensor_elems;
  for (const StoreEntry& e : entries) {
    s.data_begin = std::min(s.data_begin, e.sm.offset);
    tensor_elems.push_back(e.elements);
    for (const StoreChunk& c : e.shards) {
      s.data_begin = std::min(s.data_begin, c.offset);
      shard_raw.push_back(c.raw_size);
    }
  }
  std::sort(shard_raw.begin(), shard_raw.end());
  std::sort(tensor_elems.begin(), tensor_elems.end());
  s.median_shard = shard_raw.empty() ? 0 : shard_raw[shard_raw.size() / 2];
  s.median_tensor = tensor_elems[tensor_elems.size() / 2];
  res.median_tensor_bytes = 2 * s.median_tensor;
  res.median_shard_bytes = s.median_shard;
  // The store's codec: its compressed tensors' (a tensor whose exponents did not compress is stored raw).
  for (const StoreEntry& e : entries)
    if (e.codec != kernels::CodecId::kRaw) {
      s.coded = &e;
      break;
    }
  res.store_codec = s.coded ? kernels::make_codec(s.coded->codec, s.coded->level)->name() : "raw";
  return s;
}

// Real exponents and SM bytes: enough tensors for the largest decompression frame.
Stores sample_data(const StoreReader& store, uint64_t median_shard) {
  const uint64_t want = std::max<uint64_t>(kMaxFrame, median_shard);
  Stores data;
  for (const StoreEntry& e : store.entries()) {
    if (data.exp.size() >= want) break;
    std::vector<uint16_t> bf(e.elements);
    store.recover(e, bf.data(), 1);
    const size_t old = data.exp.size();
    data.exp.resize(old + e.elements);
    data.sm.resize(old + e.elements);
    kernels::split_bf16(bf.data(), e.elements, data.exp.data() + old, data.sm.data() + old);
  }
  return data;
}

// The plan: every point, so that progress and the budget know the total.
struct Plan {
  uint64_t region = 0;  // bytes of chunks from Survey::data_begin to the end of the file
  std::vector<uint64_t> read_sizes;
  std::vector<uint32_t> depths;
  std::vector<std::string> codecs;
  std::vector<uint64_t> frame_sizes, merge_elems;
  std::vector<uint32_t> token_ladder;
  std::vector<uint64_t> dense_bytes;
  uint64_t points = 0;
};

Plan make_plan(const StoreReader& store, const MicroOptions& opt, const Survey& s, const Stores& data,
               const MicroResults& res) {
  Plan p;
  p.region = store.file_size() > s.data_begin ? store.file_size() - s.data_begin : 0;
  for (uint64_t z = kStoreAlign; z <= (uint64_t{4} << 20) && z * 2 <= p.region; z *= 4)
    p.read_sizes.push_back(z);
  if (p.read_sizes.empty())
    throw Error(store.path() + ": the store is too small to benchmark reads (" + std::to_string(p.region) +
                " bytes of chunks)");
  for (uint32_t d = 1; d <= std::max(1u, opt.max_depth); d *= 2) p.depths.push_back(d);
  if (s.coded) p.codecs.push_back(res.store_codec);
  for (const std::string& c : opt.codecs) {
    const std::string name = kernels::make_codec(c)->name();
    if (name != "raw" && std::find(p.codecs.begin(), p.codecs.end(), name) == p.codecs.end())
      p.codecs.push_back(name);
  }
  for (uint64_t z = 4 << 10; z <= kMaxFrame && z <= data.exp.size(); z *= 4) p.frame_sizes.push_back(z);
  const uint64_t median_shard = s.median_shard;
  if (median_shard > 0 && median_shard <= data.exp.size() &&
      std::none_of(p.frame_sizes.begin(), p.frame_sizes.end(),
                   [&](uint64_t z) { return z * 10 > median_shard * 9 && z * 10 < median_shard * 11; }))
    p.frame_sizes.push_back(median_shard);
  std::sort(p.frame_sizes.begin(), p.frame_sizes.end());
  p.merge_elems = {16 << 10, 64 << 10, 256 << 10, 1 << 20, 4 << 20};
  if (std::find(p.merge_elems.begin(), p.merge_elems.end(), s.median_tensor) == p.merge_elems.end())
    p.merge_elems.push_back(s.median_tensor);
  std::sort(p.merge_elems.begin(), p.merge_elems.end());
  p.token_ladder = {1, 2, 4, 8, 16, 32, 64};
  for (uint64_t b = 256 << 10; b <= (16u << 20); b *= 4) p.dense_bytes.push_back(b);
  p.points = p.read_sizes.size() * p.depths.size() + p.codecs.size() * p.frame_sizes.size() * opt.threads +
             p.merge_elems.size() * opt.threads + p.token_ladder.size() + p.dense_bytes.size() + 4;
  return p;
}

// What every phase shares: the store, the options, each point's share of the budget and the progress count.
struct Bench {
  const StoreReader& store;
  const MicroOptions& opt;
  double per_point = 0;
  uint64_t points = 0;
  uint64_t done = 0;

  void tick() {
    ++done;
    if (opt.progress) opt.progress(done, points);
  }
};

// Settles the read path before the read points and records it: direct or buffered, io_uring or pread.
IoBackend prepare_reads(const StoreReader& store, const MicroOptions& opt, uint64_t data_begin,
                        MicroResults& res) {
  {
    // One buffered-or-direct read first: a filesystem that refuses O_DIRECT switches the reader to buffered
    // reads here, so read_fd() below is the descriptor that works.
    AlignedBuffer probe(kStoreAlign);
    store.read_raw(data_begin, probe.data(), kStoreAlign, probe.capacity(),
                   "the first chunk (read benchmark)");
  }
  res.direct_io = store.direct_io_active();
  IoBackend io = opt.io;
  if (io == IoBackend::kUring) {
    const std::string why = uring_probe();
    if (!why.empty()) {
      res.io_fallback = why;
      io = IoBackend::kPread;
    }
  }
  res.io = io_backend_name(io);
  return io;
}

// One read point's measurements: every request's latency, the point's wall time, the CPU time per request.
struct ReadSamples {
  std::vector<double> lat;
  double wall = 0, cpu = -1;
};

// The requests of one read point: `size` bytes at seeded random aligned offsets among `positions`.
struct ReadPoint {
  uint64_t data_begin = 0, positions = 0, size = 0;
  uint32_t depth = 0;
};

// Depth d as d threads, each with one blocking pread at a time.
ReadSamples read_point_pread(const Bench& b, const ReadPoint& rp, std::atomic<uint64_t>& sink) {
  const uint64_t size = rp.size;
  std::vector<AlignedBuffer> bufs;
  std::vector<Rng> rngs;
  for (uint32_t i = 0; i < rp.depth; ++i) {
    bufs.emplace_back(size);
    rngs.emplace_back(b.opt.seed ^ (size << 8) ^ (uint64_t{rp.depth} << 40) ^ i);
  }
  const GroupTimes t = run_groups(
      {rp.depth}, {[&](uint32_t i) {
        const uint64_t off = rp.data_begin + rngs[i].below(rp.positions) * kStoreAlign;
        b.store.read_raw(off, bufs[i].data(), size, bufs[i].capacity(), "a read benchmark request");
        sink.fetch_xor(hash64(bufs[i].data(), size), std::memory_order_relaxed);  // as exec verifies a chunk
      }},
      b.per_point, 4);
  ReadSamples r;
  r.lat = t.times[0];
  r.wall = t.wall_s;
  r.cpu = mean_of_known(t.cpu[0]);
  return r;
}

// Depth d as one thread keeping d reads in flight in one io_uring ring.
ReadSamples read_point_uring(const Bench& b, const ReadPoint& rp, std::atomic<uint64_t>& sink) {
  const uint64_t size = rp.size;
  const uint32_t depth = rp.depth;
  ReadSamples res;
  std::vector<double>& lat = res.lat;
  UringQueue q(depth);
  std::vector<AlignedBuffer> bufs;
  for (uint32_t i = 0; i < depth; ++i) bufs.emplace_back(size);
  std::vector<Clock::time_point> sent(depth);
  Rng rng(b.opt.seed ^ (size << 8) ^ (uint64_t{depth} << 40));
  const int fd = b.store.read_fd();
  const bool direct = b.store.direct_io_active();
  const double c0 = thread_cpu_seconds();
  const auto t0 = Clock::now();
  uint32_t in_flight = 0;
  uint64_t issued = 0;
  std::string failure;
  auto issue = [&](uint32_t slot) {
    const uint64_t off = rp.data_begin + rng.below(rp.positions) * kStoreAlign;
    if (!q.prepare_read(fd, bufs[slot].data(), direct ? bufs[slot].capacity() : size, off, slot))
      throw Error("io_uring: the submission queue is full");
    sent[slot] = Clock::now();
    ++in_flight;
    ++issued;
  };
  for (uint32_t s = 0; s < depth; ++s) issue(s);
  q.submit();
  // Reap one, resubmit its slot, until the point's time is up; then drain (every read reaped).
  while (in_flight > 0) {
    uint64_t slot = 0;
    int r = 0;
    q.wait(&slot, &r);
    --in_flight;
    if (slot >= depth) continue;
    if (r >= 0) sink.fetch_xor(hash64(bufs[slot].data(), size), std::memory_order_relaxed);
    lat.push_back(std::chrono::duration<double>(Clock::now() - sent[slot]).count());
    if (r < 0 && failure.empty()) failure = std::strerror(-r);
    const bool more = failure.empty() && (seconds_since(t0) < b.per_point || issued < 4u * depth);
    if (more) {
      issue(static_cast<uint32_t>(slot));
      q.submit();
    }
  }
  res.wall = seconds_since(t0);
  // One thread served every request: its CPU time over the point, per request.
  const double c1 = thread_cpu_seconds();
  if (c0 >= 0 && c1 >= c0 && !lat.empty()) res.cpu = (c1 - c0) / static_cast<double>(lat.size());
  if (!failure.empty()) throw Error(b.store.path() + ": io_uring read benchmark: " + failure);
  return res;
}

// Reads per request size and queue depth.
void bench_reads(Bench& b, const Plan& plan, uint64_t data_begin, IoBackend io, MicroResults& res) {
  std::atomic<uint64_t> sink{0};  // the requests' hashes, so that the hashing is not optimized away
  for (uint64_t size : plan.read_sizes) {
    const uint64_t positions = std::max<uint64_t>(1, (plan.region - size) / kStoreAlign);
    for (uint32_t depth : plan.depths) {
      const ReadPoint rp{data_begin, positions, size, depth};
      const ReadSamples s =
          io == IoBackend::kPread ? read_point_pread(b, rp, sink) : read_point_uring(b, rp, sink);
      MicroReadPoint p;
      p.bytes = size;
      p.depth = depth;
      p.requests = s.lat.size();
      p.latency_s = mean_of(s.lat);
      p.latency_p50_s = median_of(s.lat);
      p.bandwidth = s.wall > 0 ? static_cast<double>(size) * static_cast<double>(s.lat.size()) / s.wall : 0;
      p.cpu_s = s.cpu;
      res.reads.push_back(p);
      b.tick();
    }
  }
}

// Decompression per codec, size and thread count.
void bench_decompress(Bench& b, const Plan& plan, const Stores& data, MicroResults& res) {
  for (const std::string& cname : plan.codecs) {
    const auto codec = kernels::make_codec(cname);
    for (uint64_t size : plan.frame_sizes) {
      const std::vector<uint8_t> frame = kernels::compress_to_vector(*codec, data.exp.data(), size);
      for (uint32_t t = 1; t <= b.opt.threads; ++t) {
        std::vector<std::vector<uint8_t>> outs(t, std::vector<uint8_t>(size));
        const GroupTimes g = run_groups({t}, {[&](uint32_t i) {
                                          codec->decompress(frame.data(), frame.size(), outs[i].data(), size,
                                                            "a decompression benchmark frame");
                                        }},
                                        b.per_point, 3);
        MicroOpPoint p;
        p.codec = cname;
        p.bytes = size;
        p.stored = frame.size();
        p.threads = t;
        set_times(p, g.times[0]);
        res.decompress.push_back(p);
        b.tick();
      }
    }
  }
}

// Recovery (the CPU merge) per size and thread count.
void bench_recover(Bench& b, const Plan& plan, const Stores& data, MicroResults& res) {
  const uint64_t biggest = plan.merge_elems.back();
  std::vector<uint8_t> exp(biggest), sm(biggest);
  for (uint64_t i = 0; i < biggest;
       ++i) {  // the real bytes, repeated (the merge's speed does not depend on them)
    exp[i] = data.exp[i % data.exp.size()];
    sm[i] = data.sm[i % data.sm.size()];
  }
  for (uint64_t n : plan.merge_elems) {
    for (uint32_t t = 1; t <= b.opt.threads; ++t) {
      // Into a freshly allocated buffer, as exec's recovery does (its first-touch cost is part of the op).
      const GroupTimes g =
          run_groups({t}, {[&](uint32_t) {
                       AlignedBuffer out(2 * n);
                       kernels::merge_bf16(exp.data(), sm.data(), n, reinterpret_cast<uint16_t*>(out.data()));
                     }},
                     b.per_point, 3);
      MicroOpPoint p;
      p.bytes = 2 * n;
      p.threads = t;
      set_times(p, g.times[0]);
      res.recover.push_back(p);
      b.tick();
    }
  }
}

// 64 tokens' seeded activations, the input of every compute op.
std::vector<float> make_activations(uint64_t seed, uint32_t hidden) {
  Rng act_rng(seed ^ 0x5eed);
  std::vector<float> x(size_t{64} * std::max<uint64_t>(hidden, 1));
  for (float& v : x) v = static_cast<float>(act_rng.uniform() - 0.5);
  return x;
}

// Compute: the expert's FFN against tokens.
void bench_expert_compute(Bench& b, const Plan& plan, const Expert& e, const std::vector<float>& x,
                          MicroResults& res) {
  std::vector<float> y(x.size());
  for (uint32_t tokens : plan.token_ladder) {
    const GroupTimes g = run_groups({1}, {[&](uint32_t) {
                                      kernels::expert_ffn(e.wg.data(), e.wu.data(), e.wd.data(), res.hidden,
                                                          res.inter, x.data(), y.data(), tokens);
                                    }},
                                    b.per_point, 3);
    MicroComputePoint p;
    p.kind = "expert";
    p.tokens = tokens;
    p.bytes = e.bytes();
    p.flops = kernels::expert_ffn_flops(res.hidden, res.inter, tokens);
    set_times(p, g.times[0]);
    res.compute.push_back(p);
    b.tick();
  }
}

// Compute: a one-token dense GEMM against bytes.
void bench_dense_compute(Bench& b, const Plan& plan, const std::vector<float>& x, MicroResults& res) {
  const std::vector<uint16_t> w(plan.dense_bytes.back() / 2, kernels::f32_to_bf16(0.01f));
  std::vector<float> dy(plan.dense_bytes.back() / 2 / std::max<uint64_t>(res.hidden, 1) + 1);
  for (uint64_t bytes : plan.dense_bytes) {
    const uint64_t rows = bytes / 2 / res.hidden;
    const GroupTimes g = run_groups(
        {1}, {[&](uint32_t) { kernels::dense_gemm(w.data(), rows, res.hidden, x.data(), dy.data(), 1); }},
        b.per_point, 3);
    MicroComputePoint p;
    p.kind = "dense";
    p.tokens = 1;
    p.bytes = rows * res.hidden * 2;
    p.flops = 2.0 * static_cast<double>(rows) * res.hidden;
    set_times(p, g.times[0]);
    res.compute.push_back(p);
    b.tick();
  }
}

// The interference phase's decompression workers' frames (empty: no workers) and their codec.
struct WorkerFrames {
  std::unique_ptr<kernels::Codec> codec;
  std::vector<std::vector<uint8_t>> frames;
  std::vector<uint64_t> raw;  // each frame's decompressed size
};

// The workers' frames: the store's own E-chunks (read and verified once), or for a raw store the
// exponents recompressed with the first benchmarked codec (raw "decompression" would be a copy).
WorkerFrames worker_frames(const StoreReader& store, const Survey& s, const Plan& plan, const Stores& data) {
  const auto& entries = store.entries();
  const StoreEntry* coded = s.coded;
  WorkerFrames w;
  if (coded) {
    w.codec = kernels::make_codec(coded->codec, coded->level);
    for (size_t i = 0; i < entries.size() && w.frames.size() < 16; ++i)
      for (size_t k = 0; k < entries[i].shards.size() && w.frames.size() < 16; ++k) {
        if (entries[i].shards[k].raw_size == 0 || entries[i].codec != coded->codec ||
            entries[i].level != coded->level)
          continue;
        const AlignedBuffer b = store.read_chunk(entries[i], static_cast<int>(k));
        w.frames.emplace_back(b.data(), b.data() + b.size());
        w.raw.push_back(entries[i].shards[k].raw_size);
      }
  } else if (!plan.codecs.empty()) {
    w.codec = kernels::make_codec(plan.codecs[0]);
    const uint64_t n = std::min<uint64_t>(std::max<uint64_t>(s.median_shard, 4096), data.exp.size());
    w.frames.push_back(kernels::compress_to_vector(*w.codec, data.exp.data(), n));
    w.raw.push_back(n);
  }
  return w;
}

// Interference: the I/O thread, L workers and the compute thread, alone and at once.
void bench_interference(Bench& b, const WorkerFrames& wf, const Expert& e, const std::vector<float>& x,
                        MicroResults& res) {
  const StoreReader& store = b.store;
  const auto& entries = store.entries();
  const auto& frames = wf.frames;
  const auto& frame_raw = wf.raw;
  std::vector<std::vector<uint8_t>> wout(b.opt.threads);
  uint64_t max_raw = 0;
  for (uint64_t r : frame_raw) max_raw = std::max(max_raw, r);
  for (auto& o : wout) o.resize(max_raw);
  std::vector<size_t> next_frame(b.opt.threads, 0);
  auto decompress_work = [&](uint32_t i) {
    const size_t f = next_frame[i]++ % frames.size();
    wf.codec->decompress(frames[f].data(), frames[f].size(), wout[i].data(), frame_raw[f],
                         "an interference benchmark frame");
  };
  // Reads: seeded random chunks (SM or E), verified, as exec's I/O thread reads them.
  Rng io_rng(b.opt.seed ^ 0x10);
  std::atomic<uint64_t> io_bytes{0};
  auto io_work = [&](uint32_t) {
    const StoreEntry& en = entries[io_rng.below(entries.size())];
    const int shard = static_cast<int>(io_rng.below(en.shards.size() + 1)) - 1;
    const AlignedBuffer buf = store.read_chunk(en, shard);
    io_bytes.fetch_add(buf.size(), std::memory_order_relaxed);
  };
  std::vector<float> cy(res.hidden);
  auto compute_work = [&](uint32_t) {
    kernels::expert_ffn(e.wg.data(), e.wu.data(), e.wd.data(), res.hidden, res.inter, x.data(), cy.data(), 1);
  };
  const bool have_workers = !frames.empty();
  std::vector<std::string> names = {"io", "compute"};
  std::vector<uint32_t> threads = {1, 1};
  std::vector<std::function<void(uint32_t)>> work = {io_work, compute_work};
  if (have_workers) {
    names.insert(names.begin() + 1, "decompress");
    threads.insert(threads.begin() + 1, b.opt.threads);
    work.insert(work.begin() + 1, decompress_work);
  }
  const double phase = 2 * b.per_point;
  std::vector<GroupTimes> alone;
  std::vector<uint64_t> alone_io_bytes;
  for (size_t g = 0; g < names.size(); ++g) {
    io_bytes.store(0);
    alone.push_back(run_groups({threads[g]}, {work[g]}, phase, 3));
    alone_io_bytes.push_back(io_bytes.load());
    b.tick();
  }
  if (!have_workers) b.tick();
  io_bytes.store(0);
  const GroupTimes together = run_groups(threads, work, phase, 3);
  b.tick();
  uint64_t mean_frame = 0;
  for (uint64_t r : frame_raw) mean_frame += r;
  if (!frame_raw.empty()) mean_frame /= frame_raw.size();
  for (size_t g = 0; g < names.size(); ++g) {
    MicroInterference m;
    m.component = names[g];
    m.threads = threads[g];
    m.alone_ops = alone[g].times[0].size();
    m.together_ops = together.times[g].size();
    m.alone_s = mean_of(alone[g].times[0]);
    m.together_s = mean_of(together.times[g]);
    if (names[g] == "io")
      m.op_bytes = m.alone_ops ? alone_io_bytes[g] / m.alone_ops : 0;
    else if (names[g] == "decompress")
      m.op_bytes = mean_frame;
    else
      m.op_bytes = e.bytes();
    res.interference.push_back(m);
  }
}

}  // namespace

MicroResults run_microbenchmarks(const StoreReader& store, const MicroOptions& opt) {
  const auto start = Clock::now();
  if (opt.threads == 0) throw Error("calibrate --micro: at least one thread is needed");
  if (!(opt.budget_s > 0)) throw Error("calibrate --micro: the time budget must be positive");
  if (store.entries().empty()) throw Error(store.path() + ": the store holds no tensors");
  MicroResults res;
  Expert expert = find_expert(store, res);
  // ---- the store's own data ----------------------------------------------------------------------------
  const Survey survey = survey_store(store, res);
  const Stores data = sample_data(store, survey.median_shard);
  recover_weights(store, expert);
  const Plan plan = make_plan(store, opt, survey, data, res);
  const double units = static_cast<double>(plan.points) + 4;  // the interference phases count double
  Bench b{store, opt, opt.budget_s / units, plan.points};
  const IoBackend io = prepare_reads(store, opt, survey.data_begin, res);
  bench_reads(b, plan, survey.data_begin, io, res);
  bench_decompress(b, plan, data, res);
  bench_recover(b, plan, data, res);
  const std::vector<float> x = make_activations(opt.seed, res.hidden);
  bench_expert_compute(b, plan, expert, x, res);
  bench_dense_compute(b, plan, x, res);
  bench_interference(b, worker_frames(store, survey, plan, data), expert, x, res);
  res.wall_s = seconds_since(start);
  return res;
}

}  // namespace moesim::exec
