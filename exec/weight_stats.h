// Exponent statistics of a checkpoint's BF16 values (the data behind ZipMoE §2.2, Fig. 2 and Fig. 3): per
// tensor and for the whole file taken as one exponent stream, the exponent histogram, its order-0 entropy,
// the split-format bound (8 + H) / 16, the number of distinct exponents, and the size ratio each codec
// reaches on the split format: (compressed exponent bytes + raw SM bytes) / BF16 bytes, one frame per
// tensor (K = 1, what `moesim pack --shards 1` stores). F16/F32 tensors are cast to BF16 first, exactly as
// `moesim pack` does.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "base/json_io.h"
#include "exec/weight_source.h"
#include "kernels/exponent_stats.h"

namespace moesim::exec {

struct TensorExponentStats {
  std::string name;
  std::string dtype;
  std::vector<uint64_t> shape;
  kernels::ExponentHistogram hist;
  std::vector<uint64_t> codec_e_bytes;  // per codec, same order as WeightStats::codecs
};

struct WeightStats {
  std::vector<std::string> codecs;  // canonical names
  std::vector<TensorExponentStats> tensors;
  kernels::ExponentHistogram all;
  std::vector<uint64_t> codec_e_bytes;  // summed over tensors
  uint64_t skipped = 0;                 // tensors whose dtype cannot be cast to BF16

  uint64_t elements() const { return all.total; }
  // (codec E bytes + one SM byte per element) / (2 bytes per element); 0 for an empty input.
  double codec_ratio(size_t codec) const;
};

inline const std::vector<std::string>& default_stats_codecs() {
  static const std::vector<std::string> c = {"zstd:3", "zstd:19", "lz4", "lz4hc:12"};
  return c;
}

// Parallel over tensors on `threads` threads; results do not depend on the thread count.
// `progress(done, total)` counts the BF16 bytes of the tensors finished so far; it is called from the
// worker threads, possibly concurrently, so it must be thread-safe (moesim::Progress::set is).
WeightStats compute_weight_stats(const WeightSource& w, const std::vector<std::string>& codecs,
                                 unsigned threads,
                                 const std::function<void(uint64_t, uint64_t)>& progress = {});

}  // namespace moesim::exec
