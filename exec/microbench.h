// The microbenchmarks of `moesim calibrate --micro`: each of exec's op kinds measured on its own, against
// the variable its cost model depends on, on the store's own data:
//
//   reads        O_DIRECT reads of the store file (4 KiB-aligned, seeded random offsets in its chunk region)
//                against request size and queue depth: depth d is d I/O threads each with one blocking
//                pread, or (IoBackend::kUring) one thread keeping d reads in flight in one io_uring ring.
//                Each request's bytes are hashed as exec's I/O thread verifies a chunk (base/hash64.h).
//                Per point: the mean and median time per request (submit to completion, the hash included),
//                the aggregate bandwidth (bytes / wall time of the point) and the I/O threads' CPU time per
//                request (CLOCK_THREAD_CPUTIME_ID: the kernel's O_DIRECT path and the hash, ssd.read_cpu_*)
//   decompress   one frame of E-chunk exponent bytes (the store's real exponents, recompressed per codec)
//                against its decompressed size, on t = 1..L threads at once (each its own frame)
//   recover      the vectorized CPU merge (kernels/bf16.h) SM + exponents -> BF16 against the tensor size,
//                on t = 1..L threads at once
//   compute      the expert's SwiGLU FFN (kernels/expert_ffn.h, the store's gate/up/down tensors) against
//                the token count, and a one-token BF16 GEMM (dense compute) against the weight bytes
//   interference the I/O thread (verified chunk reads), L decompression workers and one compute thread
//                (a decode token's FFN), each alone and then all at once: per component the mean op time
//                alone and together (on a 2-core machine the hard case: 2 + L threads share 2 cores)
//
// Each point runs for about its share of MicroOptions::budget_s and at least a few operations. Timings
// are wall-clock and vary from run to run; the work done (offsets, sizes, data) is a function of the seed.
// Every thread started here is joined before run_microbenchmarks returns or throws (stop flags are atomic).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "exec/store_reader.h"
#include "exec/uring_io.h"

namespace moesim::exec {

struct MicroOptions {
  uint32_t threads = 1;    // L: decompression and recovery are swept over 1..L threads
  uint32_t max_depth = 8;  // queue depths 1, 2, 4, ... up to this
  double budget_s = 20;    // the wall time the whole set aims at
  IoBackend io = IoBackend::kPread;
  std::vector<std::string> codecs;  // decompression codecs beyond the store's own ("zstd:3", "lz4")
  uint64_t seed = 1;
  std::function<void(uint64_t done, uint64_t total)> progress;  // called between points
};

struct MicroReadPoint {
  uint64_t bytes = 0;
  uint32_t depth = 0;
  uint64_t requests = 0;
  double latency_s = 0;      // mean time per request, submit to completion
  double latency_p50_s = 0;  // median
  double bandwidth = 0;      // aggregate bytes/s over the point
  double cpu_s = -1;         // mean CPU time of the I/O thread(s) per request (< 0: no thread CPU clock)
};

struct MicroOpPoint {
  std::string codec;        // decompress: the codec; recover: ""
  uint64_t bytes = 0;       // decompress: decompressed bytes of one frame; recover: BF16 bytes written
  uint64_t stored = 0;      // decompress: the frame's compressed size
  uint32_t threads = 0;     // threads running the op at once
  uint64_t ops = 0;
  double time_s = 0;        // mean per op
  double time_p50_s = 0;
};

struct MicroComputePoint {
  std::string kind;  // "expert" or "dense"
  uint32_t tokens = 0;
  uint64_t bytes = 0;  // weight bytes read
  double flops = 0;
  uint64_t ops = 0;
  double time_s = 0;  // mean
  double time_p50_s = 0;
};

struct MicroInterference {
  std::string component;  // "io", "decompress", "compute"
  uint32_t threads = 0;
  uint64_t op_bytes = 0;  // bytes per op (read, decompressed, weights)
  uint64_t alone_ops = 0, together_ops = 0;
  double alone_s = 0, together_s = 0;  // mean op time
};

struct MicroResults {
  std::string io;           // the backend the reads used
  std::string io_fallback;  // why uring was asked for and not used
  bool direct_io = false;
  uint32_t hidden = 0, inter = 0;  // the expert shape computed
  std::string store_codec;
  uint64_t median_tensor_bytes = 0;  // the store's median tensor (BF16 bytes): what one recovery writes
  uint64_t median_shard_bytes = 0;   // its median E-chunk, decompressed: what one decompression writes
  double wall_s = 0;
  std::vector<MicroReadPoint> reads;
  std::vector<MicroOpPoint> decompress, recover;
  std::vector<MicroComputePoint> compute;
  std::vector<MicroInterference> interference;
};

// Throws moesim::Error for a store without SwiGLU experts (gate/up/down) or a failing read, naming the store.
MicroResults run_microbenchmarks(const StoreReader& store, const MicroOptions& opt);

}  // namespace moesim::exec
