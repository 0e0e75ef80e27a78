#include "harness/store_verify_job.h"

#include <cstdio>
#include <cstring>
#include <optional>
#include <thread>

#include "base/atomic_file.h"
#include "base/error.h"
#include "base/units.h"
#include "core/run_info.h"
#include "exec/expert_naming.h"
#include "exec/raw_weights.h"
#include "exec/store_reader.h"
#include "exec/weight_source.h"
#include "harness/arguments.h"

namespace moesim::harness {
namespace {}  // namespace

std::string store_verify_output(const StoreVerifyArgs& o) {
  check_output_writable(o.out);
  const exec::StoreReader r(o.store, exec::StoreReadOptions{o.direct_io});
  const Json& meta = r.meta();
  std::optional<std::vector<uint64_t>> raw;
  if (!o.raw_shape.empty()) {
    raw = exec::parse_raw_shape(o.raw_shape);
  } else if (meta.value("source_format", "") == "raw-bf16" && meta.contains("raw_shape") &&
             meta["raw_shape"].is_array()) {
    raw = meta["raw_shape"].get<std::vector<uint64_t>>();
  }
  const exec::WeightSource w = exec::WeightSource::open(o.weights, raw);
  const bool all = meta.value("layout", "") == "all-tensors" || raw.has_value();
  const exec::ExpertSelection sel = exec::select_experts(w, all);
  const auto& entries = r.entries();
  for (size_t i = 0; i < std::max(sel.tensors.size(), entries.size()); ++i) {
    if (i >= entries.size())
      throw Error(o.store + ": source tensor '" + sel.tensors[i].source->name +
                  "' is missing from the store");
    const auto& e = entries[i];
    if (i >= sel.tensors.size() || sel.tensors[i].source->name != e.name || sel.tensors[i].layer != e.layer ||
        sel.tensors[i].expert != e.expert || sel.tensors[i].role != e.role)
      throw Error(o.store + ": " + e.label() + " ('" + e.name + "') does not correspond to source tensor " +
                  (i < sel.tensors.size() ? "'" + sel.tensors[i].source->name + "'" : "(none)") + " of " +
                  o.weights);
    if (sel.tensors[i].source->shape != e.shape)
      throw Error(o.store + ": " + e.label() + " ('" + e.name + "') has shape " +
                  exec::format_shape(e.shape) + ", the source has " +
                  exec::format_shape(sel.tensors[i].source->shape));
  }
  uint64_t bytes = 0;
  std::vector<uint16_t> want, got;
  for (size_t i = 0; i < entries.size(); ++i) {
    const auto& e = entries[i];
    const size_t n = static_cast<size_t>(e.elements);
    want.resize(n);
    got.resize(n);
    exec::tensor_to_bf16(*sel.tensors[i].source, want.data());
    r.recover(e, got.data(), o.threads);
    if (std::memcmp(want.data(), got.data(), n * 2) != 0) {
      size_t j = 0;
      while (want[j] == got[j]) ++j;
      char buf[96];
      std::snprintf(buf, sizeof buf, "store has 0x%04x, source (as BF16) has 0x%04x", got[j], want[j]);
      throw Error(o.store + ": " + e.label() + " ('" + e.name + "') differs from " + o.weights +
                  " at element " + std::to_string(j) + ": " + buf);
    }
    bytes += n * 2;
  }
  if (o.json) {
    Json j;
    j["header"] =
        run_header("store verify", {{"store", o.store}, {"weights", o.weights}, {"direct_io", o.direct_io}});
    j["verified"] = true;
    j["tensors"] = entries.size();
    j["bf16_bytes"] = bytes;
    j["direct_io_active"] = r.direct_io_active();
    return j.dump(2) + "\n";
  }
  return strprintf("verified %zu tensors (%s BF16) of %s bit-exact against %s%s\n", entries.size(),
                   format_bytes(bytes).c_str(), o.store.c_str(), o.weights.c_str(),
                   r.direct_io_active() ? " (O_DIRECT reads)" : "");
}

}  // namespace moesim::harness
