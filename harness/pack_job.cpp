#include "harness/pack_job.h"

#include <chrono>
#include <cstdio>
#include <optional>
#include <thread>

#include "base/atomic_file.h"
#include "base/progress.h"
#include "base/units.h"
#include "exec/expert_naming.h"
#include "exec/raw_weights.h"
#include "exec/store_writer.h"
#include "exec/weight_source.h"
#include "harness/arguments.h"
#include "moesim_build_info.h"

namespace moesim::harness {
namespace {}  // namespace

Wrote pack_store(const PackArgs& o) {
  check_output_writable(o.out);
  std::optional<std::vector<uint64_t>> raw;
  if (!o.raw_shape.empty()) raw = exec::parse_raw_shape(o.raw_shape);
  const exec::WeightSource w = exec::WeightSource::open(o.weights, raw);
  const exec::ExpertSelection sel = exec::select_experts(w, o.all_tensors || raw.has_value());
  exec::PackOptions po;
  po.codec = o.codec;
  po.shards = o.shards;
  po.threads = o.threads;
  po.meta = {{"source", o.weights},
             {"source_format", w.format()},
             {"layout", sel.layout},
             {"layers", sel.layers},
             {"created_by", std::string("moesim ") + MOESIM_VERSION}};
  if (raw) po.meta["raw_shape"] = *raw;
  const auto t0 = std::chrono::steady_clock::now();
  Progress bar("pack", 0, Progress::kBytes);
  const exec::PackResult r = exec::write_store(o.out, sel, po, [&bar](uint64_t done, uint64_t total) {
    bar.set_total(2 * total);
    bar.set(2 * done);
  });
  bar.finish();
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const uint64_t stored = r.e_bytes + r.sm_bytes;
  Wrote wrote;
  wrote.summary = {
      {"path", o.out},
      {"weights", o.weights},
      {"tensors", r.tensors},
      {"layout", sel.layout},
      {"layers", sel.layers},
      {"skipped_tensors", sel.skipped},
      {"codec", po.codec},
      {"shards", po.shards},
      {"bf16_bytes", r.bf16_bytes},
      {"stored_bytes", stored},
      {"e_bytes", r.e_bytes},
      {"sm_bytes", r.sm_bytes},
      {"ratio", r.bf16_bytes ? static_cast<double>(stored) / static_cast<double>(r.bf16_bytes) : 0.0},
      {"file_bytes", r.file_size},
      {"seconds", secs},
      {"jobs", o.threads}};
  wrote.text = strprintf("packed %llu tensors (%s, %u layers) from %s into %s\n",
                         static_cast<unsigned long long>(r.tensors), sel.layout.c_str(), sel.layers,
                         o.weights.c_str(), o.out.c_str());
  if (sel.skipped)
    wrote.text += strprintf("skipped %llu tensors whose dtype is not BF16/F16/F32\n",
                            static_cast<unsigned long long>(sel.skipped));
  wrote.text += strprintf(
      "codec %s, K=%u: BF16 %s -> stored %s (E %s + SM %s), ratio %.4f; file %s; %.2f s on %u threads\n",
      po.codec.c_str(), po.shards, format_bytes(r.bf16_bytes).c_str(), format_bytes(stored).c_str(),
      format_bytes(r.e_bytes).c_str(), format_bytes(r.sm_bytes).c_str(),
      r.bf16_bytes ? static_cast<double>(stored) / static_cast<double>(r.bf16_bytes) : 0.0,
      format_bytes(r.file_size).c_str(), secs, o.threads);
  return wrote;
}

}  // namespace moesim::harness
