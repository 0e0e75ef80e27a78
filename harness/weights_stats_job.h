// `moesim weights stats (--weights PATH | PATH) [--json] [-o OUT] [--raw-shape RxC] [--jobs N]`:
// exponent statistics of a
// checkpoint (ZipMoE §2.2, Fig. 2 and 3): per tensor and for the whole file as one exponent stream --
// entropy, distinct exponents, the split-format bound (8 + H) / 16, and the ratio zstd:3, zstd:19, lz4 and
// lz4hc:12 reach on the split format (one frame per tensor).
#pragma once

#include <algorithm>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "base/json_io.h"
#include "traces/trace_io.h"

namespace moesim::harness {

struct WeightsStatsArgs {
  std::string path, raw_shape, out = "-";
  bool json = false;
  unsigned threads = std::max(1u, std::thread::hardware_concurrency());
};

// The exponent statistics of the weights, as text or JSON text (o.json), which cli/ writes to o.out.
std::string weights_stats_output(const WeightsStatsArgs& o);

}  // namespace moesim::harness
