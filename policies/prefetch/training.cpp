#include "policies/prefetch/training.h"

#include <map>
#include <tuple>

#include "base/error.h"
#include "traces/trace_io.h"

namespace moesim::policies {

PrefetchTraining train_prefetch(const std::string& path, uint32_t layers, uint32_t experts) {
  if (path.empty()) throw UsageError("prefetch: train=PATH (a training trace) is required");
  const traces::Trace t = traces::load_trace(path);
  const auto& info = t.info();
  if (info.layers != layers || info.experts != experts)
    throw Error(path + ": the training trace has " + std::to_string(info.layers) + " layers x " +
                std::to_string(info.experts) + " experts, the run " + std::to_string(layers) + " x " +
                std::to_string(experts));
  PrefetchTraining tr;
  tr.layers = layers;
  tr.experts = experts;
  tr.source = path;
  tr.freq.assign(size_t{layers} * experts, 0);
  tr.transition.assign(size_t{layers} * experts * experts, 0);
  // A token's records, by layer: (seq, phase, step) -> the record of each layer.
  std::map<std::tuple<uint32_t, uint8_t, uint32_t>, std::vector<int64_t>> tokens;
  for (size_t r = 0; r < t.records(); ++r) {
    auto& rows = tokens[{t.seq(r), static_cast<uint8_t>(t.phase(r)), t.step(r)}];
    if (rows.empty()) rows.assign(layers, -1);
    rows[t.layer(r)] = static_cast<int64_t>(r);
    for (uint16_t e : t.experts(r)) ++tr.freq[size_t{t.layer(r)} * experts + e];
  }
  for (const auto& [tok, rows] : tokens)
    for (uint32_t l = 0; l + 1 < layers; ++l) {
      if (rows[l] < 0 || rows[l + 1] < 0) continue;
      for (uint16_t i : t.experts(static_cast<size_t>(rows[l])))
        for (uint16_t j : t.experts(static_cast<size_t>(rows[l + 1])))
          ++tr.transition[(size_t{l} * experts + i) * experts + j];
    }
  return tr;
}

}  // namespace moesim::policies
