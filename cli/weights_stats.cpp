// `moesim weights stats PATH [--json] [--raw-shape RxC] [--threads N]`: exponent statistics of a
// checkpoint (ZipMoE §2.2, Fig. 2 and 3): per tensor and for the whole file as one exponent stream --
// entropy, distinct exponents, the split-format bound (8 + H) / 16, and the ratio zstd:3, zstd:19, lz4 and
// lz4hc:12 reach on the split format (one frame per tensor).
#include <cstdio>
#include <optional>
#include <thread>

#include "cli/command.h"
#include "core/run_info.h"
#include "core/units.h"
#include "exec/raw_weights.h"
#include "exec/weight_stats.h"

namespace moesim::cli {
namespace {

struct Options {
  std::string path, raw_shape;
  bool json = false;
  unsigned threads = std::max(1u, std::thread::hardware_concurrency());
};

void run(const Options& o) {
  std::optional<std::vector<uint64_t>> raw;
  if (!o.raw_shape.empty()) raw = exec::parse_raw_shape(o.raw_shape);
  const exec::WeightSource w = exec::WeightSource::open(o.path, raw);
  const exec::WeightStats s = exec::compute_weight_stats(w, exec::default_stats_codecs(), o.threads);
  if (o.json) {
    Json j = Json::object();
    j["header"] = run_header("weights stats", {{"weights", o.path}, {"raw_shape", o.raw_shape}});
    j["weights"] = o.path;
    j["tensors"] = s.tensors.size();
    j["skipped_tensors"] = s.skipped;
    j["elements"] = s.elements();
    j["entropy_bits"] = s.all.entropy_bits();
    j["bound_ratio"] = s.all.bound_ratio();
    j["distinct_exponents"] = s.all.distinct();
    Json cr = Json::object();
    for (size_t c = 0; c < s.codecs.size(); ++c) cr[s.codecs[c]] = s.codec_ratio(c);
    j["codec_ratios"] = cr;
    j["exponent_histogram"] = s.all.count;
    Json ts = Json::array();
    for (const auto& t : s.tensors) {
      Json tc = Json::object();
      const double n = static_cast<double>(t.hist.total);
      for (size_t c = 0; c < s.codecs.size(); ++c)
        tc[s.codecs[c]] = n > 0 ? (static_cast<double>(t.codec_e_bytes[c]) + n) / (2 * n) : 0.0;
      ts.push_back({{"name", t.name},
                    {"dtype", t.dtype},
                    {"shape", t.shape},
                    {"elements", t.hist.total},
                    {"entropy_bits", t.hist.entropy_bits()},
                    {"bound_ratio", t.hist.bound_ratio()},
                    {"distinct_exponents", t.hist.distinct()},
                    {"codec_ratios", tc}});
    }
    j["per_tensor"] = ts;
    write_json_file("-", j);
    return;
  }
  std::printf("%s: %zu tensors, %s elements (%s as BF16)%s\n", o.path.c_str(), s.tensors.size(),
              std::to_string(s.elements()).c_str(), format_bytes(s.elements() * 2).c_str(),
              s.skipped ? (", " + std::to_string(s.skipped) + " non-float tensors skipped").c_str() : "");
  std::printf(
      "whole file as one exponent stream: entropy %.4f bits, %u distinct exponents, bound ratio %.4f\n",
      s.all.entropy_bits(), s.all.distinct(), s.all.bound_ratio());
  std::printf("split-format ratio (E compressed per tensor + SM raw) / BF16:");
  for (size_t c = 0; c < s.codecs.size(); ++c)
    std::printf("  %s %.4f", s.codecs[c].c_str(), s.codec_ratio(c));
  std::printf("\nper tensor:\n  %-48s %-16s %8s %7s %8s", "name", "shape", "H (bits)", "distinct", "bound");
  for (const auto& c : s.codecs) std::printf(" %9s", c.c_str());
  std::printf("\n");
  for (const auto& t : s.tensors) {
    const double n = static_cast<double>(t.hist.total);
    std::printf("  %-48s %-16s %8.4f %7u %8.4f", t.name.c_str(), exec::format_shape(t.shape).c_str(),
                t.hist.entropy_bits(), t.hist.distinct(), t.hist.bound_ratio());
    for (size_t c = 0; c < s.codecs.size(); ++c)
      std::printf(" %9.4f", n > 0 ? (static_cast<double>(t.codec_e_bytes[c]) + n) / (2 * n) : 0.0);
    std::printf("\n");
  }
}

void setup(CLI::App& app) {
  auto o = std::make_shared<Options>();
  app.add_option("path", o->path,
                 "Checkpoint: .safetensors file, folder of shards, or raw BF16 (with --raw-shape)")
      ->required();
  app.add_flag("--json", o->json, "Write JSON to stdout");
  app.add_option("--raw-shape", o->raw_shape, "PATH is raw BF16 of this shape, e.g. 4096x14336");
  app.add_option("--threads", o->threads, "Threads (results do not depend on it)")
      ->capture_default_str()
      ->check(CLI::Range(1u, 1024u));
  app.callback([o] { run(*o); });
}

}  // namespace
MOESIM_CLI_COMMAND("weights stats",
                   "Exponent entropy, entropy bound and codec ratios of a checkpoint's weights", setup);
}  // namespace moesim::cli
