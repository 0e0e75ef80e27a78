// libFuzzer target: the SERVERS.json reader (JSON text -> schema checks -> ClusterSpec -> topology).
// moesim::Error is expected for bad input; anything else is a bug. A spec that loads keeps its invariants:
// servers with distinct names, GPUs and memory, traces, a positive arrival interval, links between two
// different known servers with a positive bandwidth, and a topology with at most one link per pair.
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <set>
#include <string>

#include "core/cluster_spec.h"
#include "base/error.h"
#include "base/json_io.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    // No base folder: a "timestamps:FILE" arrival then names a file relative to the working directory, which
    // fails as a missing file (an Error) unless one happens to exist.
    const moesim::ClusterSpec s = moesim::cluster_spec_from_json(moesim::parse_json_text(text, "fuzz.json"),
                                                                 "fuzz.json", "");
    std::set<std::string> names;
    for (const auto& sv : s.servers) {
      if (!names.insert(sv.name).second || sv.gpus == 0 || sv.gpu_memory == 0 || sv.traces.empty()) std::abort();
      if (sv.arrival.kind == moesim::ArrivalSpec::Kind::kPoisson && !(sv.arrival.mean_interval_s > 0)) std::abort();
    }
    std::set<std::pair<uint32_t, uint32_t>> pairs;
    for (const auto& l : s.topology()) {
      if (l.a >= l.b || l.b >= s.servers.size() || !(l.params.bandwidth > 0) || !std::isfinite(l.params.bandwidth) ||
          !(l.params.latency >= 0) || !pairs.insert({l.a, l.b}).second)
        std::abort();
    }
  } catch (const moesim::Error&) {
  }
  return 0;
}
