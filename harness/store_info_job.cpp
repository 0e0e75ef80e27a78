#include "harness/store_info_job.h"

#include <algorithm>
#include <cstdio>
#include <map>

#include "base/atomic_file.h"
#include "base/json_io.h"
#include "base/units.h"
#include "core/run_info.h"
#include "exec/raw_weights.h"
#include "exec/store_reader.h"
#include "harness/arguments.h"

namespace moesim::harness {
namespace {

double ratio(uint64_t a, uint64_t b) {
  return b ? static_cast<double>(a) / static_cast<double>(b) : 0.0;
}

}  // namespace

std::string store_info_output(const StoreInfoArgs& o) {
  check_output_writable(o.out);
  const exec::StoreReader r(o.store);
  struct Sum {
    uint64_t tensors = 0, bf16 = 0, e = 0, sm = 0;
  };
  Sum all;
  std::map<std::string, Sum> per_codec;
  std::map<uint32_t, Sum> per_layer;
  Json tensors = Json::array();
  for (const auto& e : r.entries()) {
    const std::string codec = kernels::make_codec(e.codec, e.level)->name();
    for (Sum* s : {&all, &per_codec[codec], &per_layer[e.layer]}) {
      s->tensors++;
      s->bf16 += e.bf16_bytes();
      s->e += e.e_bytes();
      s->sm += e.sm.size;
    }
    if (o.json)
      tensors.push_back({{"layer", e.layer},
                         {"expert", e.expert},
                         {"tensor", e.role},
                         {"name", e.name},
                         {"source_dtype", exec::dtype_label(e.source_dtype)},
                         {"shape", e.shape},
                         {"codec", codec},
                         {"shards", e.shards.size()},
                         {"bf16_bytes", e.bf16_bytes()},
                         {"e_bytes", e.e_bytes()},
                         {"sm_bytes", e.sm.size},
                         {"ratio", ratio(e.e_bytes() + e.sm.size, e.bf16_bytes())}});
  }
  const uint64_t stored = all.e + all.sm;
  if (o.json) {
    Json j = Json::object();
    j["header"] = run_header("store info", {{"store", o.store}});
    j["store"] = o.store;
    j["format_version"] = r.header().version;
    j["file_size"] = r.file_size();
    j["meta"] = r.meta();
    j["tensors"] = all.tensors;
    j["layers"] = per_layer.size();
    j["bf16_bytes"] = all.bf16;
    j["e_bytes"] = all.e;
    j["sm_bytes"] = all.sm;
    j["stored_bytes"] = stored;
    j["ratio"] = ratio(stored, all.bf16);
    j["exponent_ratio"] = ratio(all.e, all.bf16 / 2);
    Json pc = Json::array();
    for (const auto& [c, s] : per_codec)
      pc.push_back({{"codec", c},
                    {"tensors", s.tensors},
                    {"bf16_bytes", s.bf16},
                    {"stored_bytes", s.e + s.sm},
                    {"ratio", ratio(s.e + s.sm, s.bf16)}});
    j["per_codec"] = pc;
    j["per_tensor"] = tensors;
    return j.dump(2) + "\n";
  }
  std::string text = strprintf("store %s: format version %u, %s, %llu tensors in %zu layers\n",
                               o.store.c_str(), r.header().version, format_bytes(r.file_size()).c_str(),
                               static_cast<unsigned long long>(all.tensors), per_layer.size());
  for (const char* k : {"source", "source_format", "layout"})
    if (r.meta().contains(k) && r.meta()[k].is_string())
      text += strprintf("  %-14s %s\n", k, r.meta()[k].get<std::string>().c_str());
  text += strprintf("  BF16 %s -> stored %s (E %s + SM %s): ratio %.4f, exponent stream ratio %.4f\n",
                    format_bytes(all.bf16).c_str(), format_bytes(stored).c_str(), format_bytes(all.e).c_str(),
                    format_bytes(all.sm).c_str(), ratio(stored, all.bf16), ratio(all.e, all.bf16 / 2));
  text += strprintf("per codec:\n");
  for (const auto& [c, s] : per_codec)
    text += strprintf("  %-10s %6llu tensors  BF16 %12s  stored %12s  ratio %.4f\n", c.c_str(),
                      static_cast<unsigned long long>(s.tensors), format_bytes(s.bf16).c_str(),
                      format_bytes(s.e + s.sm).c_str(), ratio(s.e + s.sm, s.bf16));
  int wrole = 6, wshape = 5;  // column widths from the data, so long checkpoint names stay aligned
  for (const auto& e : r.entries()) {
    wrole = std::max(wrole, static_cast<int>(e.role.size()));
    wshape = std::max(wshape, static_cast<int>(exec::format_shape(e.shape).size()));
  }
  text += strprintf("per tensor:\n  %5s %7s %-*s %-*s %-9s %3s %12s %12s %7s\n", "layer", "expert", wrole,
                    "tensor", wshape, "shape", "codec", "K", "BF16", "stored", "ratio");
  for (const auto& e : r.entries())
    text += strprintf("  %5u %7u %-*s %-*s %-9s %3zu %12s %12s %7.4f\n", e.layer, e.expert, wrole,
                      e.role.c_str(), wshape, exec::format_shape(e.shape).c_str(),
                      kernels::make_codec(e.codec, e.level)->name().c_str(), e.shards.size(),
                      format_bytes(e.bf16_bytes()).c_str(), format_bytes(e.e_bytes() + e.sm.size).c_str(),
                      ratio(e.e_bytes() + e.sm.size, e.bf16_bytes()));
  return text;
}

}  // namespace moesim::harness
