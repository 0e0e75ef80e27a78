// `moesim store verify STORE --weights PATH [--jobs N] [--direct-io] [--json] [-o OUT]`: recovers every
// tensor of the store (read + checksum + decompress + merge) and checks it is bit-identical to the source
// tensor cast to BF16 exactly as `moesim pack` casts it. Exits non-zero naming the first differing tensor.
#pragma once

#include <algorithm>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "base/json_io.h"
#include "traces/trace_io.h"

namespace moesim::harness {

struct StoreVerifyArgs {
  std::string store, weights, raw_shape;
  unsigned threads = std::max(1u, std::thread::hardware_concurrency());
  bool direct_io = false;
  bool json = false;
  std::string out = "-";
};

// Decodes every tensor of the store and checks it against its checksum (and the source weights when given);
// returns the report (a line, or JSON text with o.json), which cli/ writes to o.out.
std::string store_verify_output(const StoreVerifyArgs& o);

}  // namespace moesim::harness
