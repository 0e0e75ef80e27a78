// `moesim pack --weights PATH --codec C --shards K -o STORE [--jobs N] [--all-tensors] [--raw-shape RxC]`:
// converts a checkpoint's expert tensors into an expert store (exec/store_writer.h, docs/store-format.md).
// A progress bar (BF16 bytes compressed) goes to stderr on a terminal; the store's bytes do not depend on
// --jobs. "-o -", a device or a FIFO get the finished store streamed (it is built in a scratch file).
#pragma once

#include <algorithm>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "base/json_io.h"
#include "harness/arguments.h"
#include "traces/trace_io.h"

namespace moesim::harness {

struct PackArgs {
  std::string weights, codec = "zstd:19", out, raw_shape;
  uint32_t shards = 4;
  unsigned threads = std::max(1u, std::thread::hardware_concurrency());
  bool all_tensors = false;
  bool json = false;
};

// Packs the checkpoint's expert tensors into an expert store at o.out; returns what it wrote (cli/ prints
// it).
Wrote pack_store(const PackArgs& o);

}  // namespace moesim::harness
