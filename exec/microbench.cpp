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
#include "exec/thread_cpu.h"
#include "kernels/bf16.h"
#include "kernels/codec.h"
#include "kernels/expert_ffn.h"

namespace moesim::exec {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

double mean_of(const std::vector<double>& v) {
  double s = 0;
  for (double x : v) s += x;
  return v.empty() ? 0.0 : s / static_cast<double>(v.size());
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

double median_of(std::vector<double> v) {
  if (v.empty()) return 0;
  const size_t m = v.size() / 2;
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(m), v.end());
  return v[m];
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

GroupTimes run_groups(const std::vector<uint32_t>& threads, const std::vector<std::function<void(uint32_t)>>& work,
                      double seconds, uint64_t min_ops) {
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
      for (uint32_t i = 0; i < threads[g]; ++i) pool.emplace_back(body, g, i, &per_thread[g][i], &cpu_thread[g][i]);
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

const StoreEntry* find_role(const StoreReader& s, const char* a, const char* b) {
  const StoreEntry* e = s.find(0, 0, a);
  return e ? e : s.find(0, 0, b);
}

}  // namespace

MicroResults run_microbenchmarks(const StoreReader& store, const MicroOptions& opt) {
  const auto start = Clock::now();
  if (opt.threads == 0) throw Error("calibrate --micro: at least one thread is needed");
  if (!(opt.budget_s > 0)) throw Error("calibrate --micro: the time budget must be positive");
  const auto& entries = store.entries();
  if (entries.empty()) throw Error(store.path() + ": the store holds no tensors");
  MicroResults res;
  const StoreEntry* gate = find_role(store, "gate_proj", "w1");
  const StoreEntry* up = find_role(store, "up_proj", "w3");
  const StoreEntry* down = find_role(store, "down_proj", "w2");
  if (!gate || !up || !down || gate->shape.size() != 2)
    throw Error(store.path() + ": calibrate --micro computes a SwiGLU expert and needs layer 0 expert 0's gate/up/down "
                "tensors (gate_proj/up_proj/down_proj or w1/w3/w2)");
  res.inter = static_cast<uint32_t>(gate->shape[0]);
  res.hidden = static_cast<uint32_t>(gate->shape[1]);
  if (up->elements != gate->elements || down->elements != gate->elements)
    throw Error(store.path() + ": layer 0 expert 0's gate, up and down tensors differ in size: not a SwiGLU expert");

  // ---- the store's own data ----------------------------------------------------------------------------
  uint64_t data_begin = store.file_size();
  std::vector<uint64_t> shard_raw, tensor_elems;
  for (const StoreEntry& e : entries) {
    data_begin = std::min(data_begin, e.sm.offset);
    tensor_elems.push_back(e.elements);
    for (const StoreChunk& c : e.shards) {
      data_begin = std::min(data_begin, c.offset);
      shard_raw.push_back(c.raw_size);
    }
  }
  std::sort(shard_raw.begin(), shard_raw.end());
  std::sort(tensor_elems.begin(), tensor_elems.end());
  const uint64_t median_shard = shard_raw.empty() ? 0 : shard_raw[shard_raw.size() / 2];
  const uint64_t median_tensor = tensor_elems[tensor_elems.size() / 2];
  res.median_tensor_bytes = 2 * median_tensor;
  res.median_shard_bytes = median_shard;
  // The store's codec: its compressed tensors' (a tensor whose exponents did not compress is stored raw).
  const StoreEntry* coded = nullptr;
  for (const StoreEntry& e : entries)
    if (e.codec != kernels::CodecId::kRaw) {
      coded = &e;
      break;
    }
  res.store_codec = coded ? kernels::make_codec(coded->codec, coded->level)->name() : "raw";

  // Real exponents and SM bytes: enough tensors for the largest decompression frame.
  constexpr uint64_t kMaxFrame = 256 << 10;
  const uint64_t want = std::max<uint64_t>(kMaxFrame, median_shard);
  Stores data;
  for (const StoreEntry& e : entries) {
    if (data.exp.size() >= want) break;
    std::vector<uint16_t> bf(e.elements);
    store.recover(e, bf.data(), 1);
    const size_t old = data.exp.size();
    data.exp.resize(old + e.elements);
    data.sm.resize(old + e.elements);
    kernels::split_bf16(bf.data(), e.elements, data.exp.data() + old, data.sm.data() + old);
  }
  std::vector<uint16_t> wg(gate->elements), wu(up->elements), wd(down->elements);
  store.recover(*gate, wg.data(), 1);
  store.recover(*up, wu.data(), 1);
  store.recover(*down, wd.data(), 1);

  // ---- the plan: every point, so that progress and the budget know the total --------------------------
  const uint64_t region = store.file_size() > data_begin ? store.file_size() - data_begin : 0;
  std::vector<uint64_t> read_sizes;
  for (uint64_t s = kStoreAlign; s <= (uint64_t{4} << 20) && s * 2 <= region; s *= 4) read_sizes.push_back(s);
  if (read_sizes.empty()) throw Error(store.path() + ": the store is too small to benchmark reads (" +
                                      std::to_string(region) + " bytes of chunks)");
  std::vector<uint32_t> depths;
  for (uint32_t d = 1; d <= std::max(1u, opt.max_depth); d *= 2) depths.push_back(d);
  std::vector<std::string> codecs;
  if (coded) codecs.push_back(res.store_codec);
  for (const std::string& c : opt.codecs) {
    const std::string name = kernels::make_codec(c)->name();
    if (name != "raw" && std::find(codecs.begin(), codecs.end(), name) == codecs.end()) codecs.push_back(name);
  }
  std::vector<uint64_t> frame_sizes;
  for (uint64_t s = 4 << 10; s <= kMaxFrame && s <= data.exp.size(); s *= 4) frame_sizes.push_back(s);
  if (median_shard > 0 && median_shard <= data.exp.size() &&
      std::none_of(frame_sizes.begin(), frame_sizes.end(),
                   [&](uint64_t s) { return s * 10 > median_shard * 9 && s * 10 < median_shard * 11; }))
    frame_sizes.push_back(median_shard);
  std::sort(frame_sizes.begin(), frame_sizes.end());
  std::vector<uint64_t> merge_elems = {16 << 10, 64 << 10, 256 << 10, 1 << 20, 4 << 20};
  if (std::find(merge_elems.begin(), merge_elems.end(), median_tensor) == merge_elems.end())
    merge_elems.push_back(median_tensor);
  std::sort(merge_elems.begin(), merge_elems.end());
  const std::vector<uint32_t> token_ladder = {1, 2, 4, 8, 16, 32, 64};
  const uint64_t expert_bytes = 2 * (gate->elements + up->elements + down->elements);
  std::vector<uint64_t> dense_bytes;
  for (uint64_t b = 256 << 10; b <= (16u << 20); b *= 4) dense_bytes.push_back(b);
  const uint64_t points = read_sizes.size() * depths.size() + codecs.size() * frame_sizes.size() * opt.threads +
                          merge_elems.size() * opt.threads + token_ladder.size() + dense_bytes.size() + 4;
  const double units = static_cast<double>(points) + 4;  // the interference phases count double
  const double per_point = opt.budget_s / units;
  uint64_t done = 0;
  auto tick = [&] {
    ++done;
    if (opt.progress) opt.progress(done, points);
  };

  // ---- reads ---------------------------------------------------------------------------------------------
  {
    // One buffered-or-direct read first: a filesystem that refuses O_DIRECT switches the reader to buffered
    // reads here, so read_fd() below is the descriptor that works.
    AlignedBuffer probe(kStoreAlign);
    store.read_raw(data_begin, probe.data(), kStoreAlign, probe.capacity(), "the first chunk (read benchmark)");
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
  std::atomic<uint64_t> sink{0};  // the requests' hashes, so that the hashing is not optimized away
  for (uint64_t size : read_sizes) {
    const uint64_t positions = std::max<uint64_t>(1, (region - size) / kStoreAlign);
    for (uint32_t depth : depths) {
      MicroReadPoint p;
      p.bytes = size;
      p.depth = depth;
      std::vector<double> lat;
      double wall = 0, cpu = -1;
      if (io == IoBackend::kPread) {
        std::vector<AlignedBuffer> bufs;
        std::vector<Rng> rngs;
        for (uint32_t i = 0; i < depth; ++i) {
          bufs.emplace_back(size);
          rngs.emplace_back(opt.seed ^ (size << 8) ^ (uint64_t{depth} << 40) ^ i);
        }
        const GroupTimes t = run_groups(
            {depth},
            {[&](uint32_t i) {
              const uint64_t off = data_begin + rngs[i].below(positions) * kStoreAlign;
              store.read_raw(off, bufs[i].data(), size, bufs[i].capacity(), "a read benchmark request");
              sink.fetch_xor(hash64(bufs[i].data(), size), std::memory_order_relaxed);  // as exec verifies a chunk
            }},
            per_point, 4);
        lat = t.times[0];
        wall = t.wall_s;
        cpu = mean_of_known(t.cpu[0]);
      } else {
        UringQueue q(depth);
        std::vector<AlignedBuffer> bufs;
        for (uint32_t i = 0; i < depth; ++i) bufs.emplace_back(size);
        std::vector<Clock::time_point> sent(depth);
        Rng rng(opt.seed ^ (size << 8) ^ (uint64_t{depth} << 40));
        const int fd = store.read_fd();
        const bool direct = store.direct_io_active();
        const double c0 = thread_cpu_seconds();
        const auto t0 = Clock::now();
        uint32_t in_flight = 0;
        uint64_t issued = 0;
        std::string failure;
        auto issue = [&](uint32_t slot) {
          const uint64_t off = data_begin + rng.below(positions) * kStoreAlign;
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
          const bool more = failure.empty() && (seconds_since(t0) < per_point || issued < 4u * depth);
          if (more) {
            issue(static_cast<uint32_t>(slot));
            q.submit();
          }
        }
        wall = seconds_since(t0);
        // One thread served every request: its CPU time over the point, per request.
        const double c1 = thread_cpu_seconds();
        if (c0 >= 0 && c1 >= c0 && !lat.empty()) cpu = (c1 - c0) / static_cast<double>(lat.size());
        if (!failure.empty()) throw Error(store.path() + ": io_uring read benchmark: " + failure);
      }
      p.requests = lat.size();
      p.latency_s = mean_of(lat);
      p.latency_p50_s = median_of(lat);
      p.bandwidth = wall > 0 ? static_cast<double>(size) * static_cast<double>(lat.size()) / wall : 0;
      p.cpu_s = cpu;
      res.reads.push_back(p);
      tick();
    }
  }

  // ---- decompression per codec, size and thread count ----------------------------------------------------
  for (const std::string& cname : codecs) {
    const auto codec = kernels::make_codec(cname);
    for (uint64_t size : frame_sizes) {
      const std::vector<uint8_t> frame = kernels::compress_to_vector(*codec, data.exp.data(), size);
      for (uint32_t t = 1; t <= opt.threads; ++t) {
        std::vector<std::vector<uint8_t>> outs(t, std::vector<uint8_t>(size));
        const GroupTimes g = run_groups(
            {t},
            {[&](uint32_t i) {
              codec->decompress(frame.data(), frame.size(), outs[i].data(), size, "a decompression benchmark frame");
            }},
            per_point, 3);
        MicroOpPoint p;
        p.codec = cname;
        p.bytes = size;
        p.stored = frame.size();
        p.threads = t;
        set_times(p, g.times[0]);
        res.decompress.push_back(p);
        tick();
      }
    }
  }

  // ---- recovery (the CPU merge) per size and thread count ------------------------------------------------
  {
    const uint64_t biggest = merge_elems.back();
    std::vector<uint8_t> exp(biggest), sm(biggest);
    for (uint64_t i = 0; i < biggest; ++i) {  // the real bytes, repeated (the merge's speed does not depend on them)
      exp[i] = data.exp[i % data.exp.size()];
      sm[i] = data.sm[i % data.sm.size()];
    }
    for (uint64_t n : merge_elems) {
      for (uint32_t t = 1; t <= opt.threads; ++t) {
        // Into a freshly allocated buffer, as exec's recovery does (its first-touch cost is part of the op).
        const GroupTimes g = run_groups(
            {t},
            {[&](uint32_t) {
              AlignedBuffer out(2 * n);
              kernels::merge_bf16(exp.data(), sm.data(), n, reinterpret_cast<uint16_t*>(out.data()));
            }},
            per_point, 3);
        MicroOpPoint p;
        p.bytes = 2 * n;
        p.threads = t;
        set_times(p, g.times[0]);
        res.recover.push_back(p);
        tick();
      }
    }
  }

  // ---- compute: the expert's FFN against tokens, a one-token dense GEMM against bytes ----------------------
  Rng act_rng(opt.seed ^ 0x5eed);
  std::vector<float> x(size_t{64} * std::max<uint64_t>(res.hidden, 1)), y(x.size());
  for (float& v : x) v = static_cast<float>(act_rng.uniform() - 0.5);
  for (uint32_t tokens : token_ladder) {
    const GroupTimes g = run_groups(
        {1},
        {[&](uint32_t) {
          kernels::expert_ffn(wg.data(), wu.data(), wd.data(), res.hidden, res.inter, x.data(), y.data(), tokens);
        }},
        per_point, 3);
    MicroComputePoint p;
    p.kind = "expert";
    p.tokens = tokens;
    p.bytes = expert_bytes;
    p.flops = kernels::expert_ffn_flops(res.hidden, res.inter, tokens);
    set_times(p, g.times[0]);
    res.compute.push_back(p);
    tick();
  }
  {
    const std::vector<uint16_t> w(dense_bytes.back() / 2, kernels::f32_to_bf16(0.01f));
    std::vector<float> dy(dense_bytes.back() / 2 / std::max<uint64_t>(res.hidden, 1) + 1);
    for (uint64_t b : dense_bytes) {
      const uint64_t rows = b / 2 / res.hidden;
      const GroupTimes g = run_groups(
          {1}, {[&](uint32_t) { kernels::dense_gemm(w.data(), rows, res.hidden, x.data(), dy.data(), 1); }}, per_point, 3);
      MicroComputePoint p;
      p.kind = "dense";
      p.tokens = 1;
      p.bytes = rows * res.hidden * 2;
      p.flops = 2.0 * static_cast<double>(rows) * res.hidden;
      set_times(p, g.times[0]);
      res.compute.push_back(p);
      tick();
    }
  }

  // ---- interference: the I/O thread, L workers and the compute thread, alone and at once -----------------
  {
    // The workers' frames: the store's own E-chunks (read and verified once), or for a raw store the
    // exponents recompressed with the first benchmarked codec (raw "decompression" would be a copy).
    std::vector<std::vector<uint8_t>> frames;
    std::unique_ptr<kernels::Codec> wcodec;
    std::vector<uint64_t> frame_raw;
    if (coded) {
      wcodec = kernels::make_codec(coded->codec, coded->level);
      for (size_t i = 0; i < entries.size() && frames.size() < 16; ++i)
        for (size_t k = 0; k < entries[i].shards.size() && frames.size() < 16; ++k) {
          if (entries[i].shards[k].raw_size == 0 || entries[i].codec != coded->codec ||
              entries[i].level != coded->level)
            continue;
          const AlignedBuffer b = store.read_chunk(entries[i], static_cast<int>(k));
          frames.emplace_back(b.data(), b.data() + b.size());
          frame_raw.push_back(entries[i].shards[k].raw_size);
        }
    } else if (!codecs.empty()) {
      wcodec = kernels::make_codec(codecs[0]);
      const uint64_t n = std::min<uint64_t>(std::max<uint64_t>(median_shard, 4096), data.exp.size());
      frames.push_back(kernels::compress_to_vector(*wcodec, data.exp.data(), n));
      frame_raw.push_back(n);
    }
    std::vector<std::vector<uint8_t>> wout(opt.threads);
    uint64_t max_raw = 0;
    for (uint64_t r : frame_raw) max_raw = std::max(max_raw, r);
    for (auto& o : wout) o.resize(max_raw);
    std::vector<size_t> next_frame(opt.threads, 0);
    auto decompress_work = [&](uint32_t i) {
      const size_t f = next_frame[i]++ % frames.size();
      wcodec->decompress(frames[f].data(), frames[f].size(), wout[i].data(), frame_raw[f], "an interference benchmark frame");
    };
    // Reads: seeded random chunks (SM or E), verified, as exec's I/O thread reads them.
    Rng io_rng(opt.seed ^ 0x10);
    std::atomic<uint64_t> io_bytes{0};
    auto io_work = [&](uint32_t) {
      const StoreEntry& e = entries[io_rng.below(entries.size())];
      const int shard = static_cast<int>(io_rng.below(e.shards.size() + 1)) - 1;
      const AlignedBuffer b = store.read_chunk(e, shard);
      io_bytes.fetch_add(b.size(), std::memory_order_relaxed);
    };
    std::vector<float> cy(res.hidden);
    auto compute_work = [&](uint32_t) {
      kernels::expert_ffn(wg.data(), wu.data(), wd.data(), res.hidden, res.inter, x.data(), cy.data(), 1);
    };
    const bool have_workers = !frames.empty();
    std::vector<std::string> names = {"io", "compute"};
    std::vector<uint32_t> threads = {1, 1};
    std::vector<std::function<void(uint32_t)>> work = {io_work, compute_work};
    if (have_workers) {
      names.insert(names.begin() + 1, "decompress");
      threads.insert(threads.begin() + 1, opt.threads);
      work.insert(work.begin() + 1, decompress_work);
    }
    const double phase = 2 * per_point;
    std::vector<GroupTimes> alone;
    std::vector<uint64_t> alone_io_bytes;
    for (size_t g = 0; g < names.size(); ++g) {
      io_bytes.store(0);
      alone.push_back(run_groups({threads[g]}, {work[g]}, phase, 3));
      alone_io_bytes.push_back(io_bytes.load());
      tick();
    }
    if (!have_workers) tick();
    io_bytes.store(0);
    const GroupTimes together = run_groups(threads, work, phase, 3);
    tick();
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
        m.op_bytes = expert_bytes;
      res.interference.push_back(m);
    }
  }
  res.wall_s = seconds_since(start);
  return res;
}

}  // namespace moesim::exec
