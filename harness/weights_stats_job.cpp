#include "harness/weights_stats_job.h"

#include <cstdio>
#include <optional>
#include <thread>

#include "base/atomic_file.h"
#include "base/error.h"
#include "base/progress.h"
#include "base/units.h"
#include "base/warnings.h"
#include "core/run_info.h"
#include "exec/raw_weights.h"
#include "exec/weight_stats.h"

namespace moesim::harness {
namespace {

void print_table(const WeightsStatsArgs& o, const exec::WeightStats& s, std::string& text) {
  auto put = [&text](const char* fmt, auto... args) {
    char buf[1024];
    std::snprintf(buf, sizeof buf, fmt, args...);
    text += buf;
  };
  put("%s: %zu tensors, %s elements (%s as BF16)%s\n", o.path.c_str(), s.tensors.size(),
      std::to_string(s.elements()).c_str(), format_bytes(s.elements() * 2).c_str(),
      s.skipped ? (", " + std::to_string(s.skipped) + " non-float tensors skipped").c_str() : "");
  put("whole file as one exponent stream: entropy %.4f bits, %u distinct exponents, bound ratio %.4f\n",
      s.all.entropy_bits(), s.all.distinct(), s.all.bound_ratio());
  put("split-format ratio (E compressed per tensor + SM raw) / BF16:");
  for (size_t c = 0; c < s.codecs.size(); ++c) put("  %s %.4f", s.codecs[c].c_str(), s.codec_ratio(c));
  put("\nper tensor:\n  %-48s %-16s %8s %7s %8s", "name", "shape", "H (bits)", "distinct", "bound");
  for (const auto& c : s.codecs) put(" %9s", c.c_str());
  put("\n");
  for (const auto& t : s.tensors) {
    const double n = static_cast<double>(t.hist.total);
    put("  %-48s %-16s %8.4f %7u %8.4f", t.name.c_str(), exec::format_shape(t.shape).c_str(),
        t.hist.entropy_bits(), t.hist.distinct(), t.hist.bound_ratio());
    for (size_t c = 0; c < s.codecs.size(); ++c)
      put(" %9.4f", n > 0 ? (static_cast<double>(t.codec_e_bytes[c]) + n) / (2 * n) : 0.0);
    put("\n");
  }
}

}  // namespace

std::string weights_stats_output(const WeightsStatsArgs& o) {
  if (o.path.empty())
    throw UsageError("a checkpoint is required: --weights PATH (or PATH as the first argument)");
  check_output_writable(o.out);
  std::optional<std::vector<uint64_t>> raw;
  if (!o.raw_shape.empty()) raw = exec::parse_raw_shape(o.raw_shape);
  const exec::WeightSource w = exec::WeightSource::open(o.path, raw);
  Progress bar("weights stats", 0, Progress::kBytes);
  const exec::WeightStats s = exec::compute_weight_stats(w, exec::default_stats_codecs(), o.threads,
                                                         [&bar](uint64_t done, uint64_t total) {
                                                           bar.set_total(total);
                                                           bar.set(done);
                                                         });
  bar.finish();
  std::string text;
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
                    {"exponent_histogram", t.hist.count},
                    {"codec_ratios", tc}});
    }
    j["per_tensor"] = ts;
    j["warnings"] = warnings_json();
    text = j.dump(2) + "\n";
  } else {
    print_table(o, s, text);
  }
  return text;
}

}  // namespace moesim::harness
