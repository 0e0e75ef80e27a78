// `moesim store verify STORE --weights PATH [--jobs N] [--direct-io] [--json] [-o OUT]`: recovers every tensor of the store
// (read + checksum + decompress + merge) and checks it is bit-identical to the source tensor cast to BF16
// exactly as `moesim pack` casts it. Exits non-zero naming the first differing tensor.
#include <cstdio>
#include <cstring>
#include <optional>
#include <thread>

#include "cli/cli_util.h"
#include "cli/command.h"
#include "cli/option_checks.h"
#include "core/atomic_file.h"
#include "core/error.h"
#include "core/run_info.h"
#include "core/units.h"
#include "exec/expert_naming.h"
#include "exec/raw_weights.h"
#include "exec/store_reader.h"
#include "exec/weight_source.h"

namespace moesim::cli {
namespace {

struct Options {
  std::string store, weights, raw_shape;
  unsigned threads = std::max(1u, std::thread::hardware_concurrency());
  bool direct_io = false;
  bool json = false;
  std::string out = "-";
};

void run(const Options& o) {
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
    j["header"] = run_header("store verify", {{"store", o.store}, {"weights", o.weights}, {"direct_io", o.direct_io}});
    j["verified"] = true;
    j["tensors"] = entries.size();
    j["bf16_bytes"] = bytes;
    j["direct_io_active"] = r.direct_io_active();
    write_json_file(o.out, j);
    return;
  }
  write_file_atomic(o.out, strprintf("verified %zu tensors (%s BF16) of %s bit-exact against %s%s\n", entries.size(),
                                     format_bytes(bytes).c_str(), o.store.c_str(), o.weights.c_str(),
                                     r.direct_io_active() ? " (O_DIRECT reads)" : ""));
}

void setup(CLI::App& app) {
  auto o = std::make_shared<Options>();
  app.add_option("store", o->store, "Expert store written by `moesim pack`")->required();
  app.add_option("--weights", o->weights, "The checkpoint the store was packed from")->required();
  app.add_option("--raw-shape", o->raw_shape,
                 "The weights file is raw BF16 of this shape (default: from the store)");
  add_jobs_option(app, o->threads, "Decompression threads per tensor (the result does not depend on it)", "--threads");
  app.add_flag("--json", o->json, "Write JSON (header, tensors and bytes verified) instead of a line of text");
  app.add_option("-o,--output", o->out, "Output file ('-' = standard output)")->capture_default_str();
  app.add_flag("--direct-io", o->direct_io,
               "Read chunks with O_DIRECT (falls back when the filesystem refuses)");
  app.callback([o] { run(*o); });
}

}  // namespace
MOESIM_CLI_COMMAND("store verify",
                   "Check every tensor of an expert store bit-exact against its source checkpoint", setup);
}  // namespace moesim::cli
