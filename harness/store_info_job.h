// `moesim store info STORE [--json] [-o OUT]`: what an expert store holds -- sizes and the ratio over BF16
// ((compressed E + SM) / BF16 bytes) overall, per codec and per tensor. The whole index is validated
// (exec/store_reader.h); chunk payloads are not read (use `store verify` for that).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "base/json_io.h"
#include "traces/trace_io.h"

namespace moesim::harness {

struct StoreInfoArgs {
  std::string store;
  bool json = false;
  std::string out = "-";
};

// Reads the store's index: its sizes and ratios, as text or JSON text (o.json), which cli/ writes to o.out.
std::string store_info_output(const StoreInfoArgs& o);

}  // namespace moesim::harness
