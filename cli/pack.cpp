// `moesim pack --weights PATH --codec C --shards K -o STORE [--jobs N] [--all-tensors] [--raw-shape RxC]`:
// converts a checkpoint's expert tensors into an expert store (exec/store_writer.h, docs/store-format.md).
// A progress bar (BF16 bytes compressed) goes to stderr on a terminal; the store's bytes do not depend on
// --jobs. "-o -", a device or a FIFO get the finished store streamed (it is built in a scratch file).
#include <chrono>
#include <cstdio>
#include <optional>
#include <thread>

#include "cli/cli_util.h"
#include "cli/command.h"
#include "cli/option_checks.h"
#include "core/atomic_file.h"
#include "core/progress.h"
#include "core/units.h"
#include "exec/expert_naming.h"
#include "exec/raw_weights.h"
#include "exec/store_writer.h"
#include "exec/weight_source.h"
#include "moesim_build_info.h"

namespace moesim::cli {
namespace {

struct Options {
  std::string weights, codec = "zstd:19", out, raw_shape;
  uint32_t shards = 4;
  unsigned threads = std::max(1u, std::thread::hardware_concurrency());
  bool all_tensors = false;
  bool json = false;
};

void run(const Options& o) {
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
  if (o.json)
    return print_summary_json(
        "pack", {{"path", o.out}, {"weights", o.weights}, {"tensors", r.tensors}, {"layout", sel.layout},
                 {"layers", sel.layers}, {"skipped_tensors", sel.skipped}, {"codec", po.codec}, {"shards", po.shards},
                 {"bf16_bytes", r.bf16_bytes}, {"stored_bytes", stored}, {"e_bytes", r.e_bytes},
                 {"sm_bytes", r.sm_bytes},
                 {"ratio", r.bf16_bytes ? static_cast<double>(stored) / static_cast<double>(r.bf16_bytes) : 0.0},
                 {"file_bytes", r.file_size}, {"seconds", secs}, {"jobs", o.threads}});
  // With "-o -" the store went to stdout: the summary goes to stderr so it does not corrupt it.
  std::FILE* summary = o.out == "-" ? stderr : stdout;
  std::fprintf(summary, "packed %llu tensors (%s, %u layers) from %s into %s\n",
               static_cast<unsigned long long>(r.tensors), sel.layout.c_str(), sel.layers, o.weights.c_str(),
               o.out.c_str());
  if (sel.skipped)
    std::fprintf(summary, "skipped %llu tensors whose dtype is not BF16/F16/F32\n",
                 static_cast<unsigned long long>(sel.skipped));
  std::fprintf(
      summary,
      "codec %s, K=%u: BF16 %s -> stored %s (E %s + SM %s), ratio %.4f; file %s; %.2f s on %u threads\n",
      po.codec.c_str(), po.shards, format_bytes(r.bf16_bytes).c_str(), format_bytes(stored).c_str(),
      format_bytes(r.e_bytes).c_str(), format_bytes(r.sm_bytes).c_str(),
      r.bf16_bytes ? static_cast<double>(stored) / static_cast<double>(r.bf16_bytes) : 0.0,
      format_bytes(r.file_size).c_str(), secs, o.threads);
}

void setup(CLI::App& app) {
  auto o = std::make_shared<Options>();
  app.add_option("--weights", o->weights,
                 "Checkpoint: a .safetensors file, a folder of shards, or a raw BF16 file")
      ->required();
  app.add_option("--codec", o->codec, "E-chunk codec: zstd:LEVEL, lz4hc:LEVEL, lz4, raw")
      ->capture_default_str();
  app.add_option("--shards", o->shards, "K: exponent shards per tensor (independent codec frames)")
      ->capture_default_str()
      ->check(whole_in_range(1, 65536));
  app.add_option("-o,--output", o->out, "Output store file ('-' = standard output)")->required();
  add_jobs_option(app, o->threads, "Compression threads (the output does not depend on it)", "--threads");
  app.add_flag("--all-tensors", o->all_tensors,
               "Pack every tensor as a one-tensor expert (non-MoE checkpoints)");
  app.add_option("--raw-shape", o->raw_shape, "The weights file is raw BF16 of this shape, e.g. 4096x14336");
  add_summary_json_flag(app, o->json);
  app.callback([o] {
    check_summary_json(o->json, o->out);
    run(*o);
  });
}

}  // namespace
MOESIM_CLI_COMMAND("pack", "Pack a checkpoint's expert tensors into an expert store (split BF16, K shards)",
                   setup);
}  // namespace moesim::cli
