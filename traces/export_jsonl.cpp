// JSONL export: one routing record per line in canonical order, in exactly the form import_jsonl reads,
// so JSONL -> .mtr -> JSONL is byte-identical. Floats are written in the shortest decimal form that reads
// back (decimal -> double -> float32, as the importer does) to the same float32; in the rare case where
// that double rounding would differ, the shortest form of the float's exact double value is written.
#include <charconv>
#include <cstdlib>
#include <string>

#include "base/atomic_file.h"
#include "base/json_io.h"
#include "traces/trace_io.h"

namespace moesim::traces {
namespace {

void append_float(std::string& out, float f) {
  char buf[64];
  auto r = std::to_chars(buf, buf + sizeof buf, f);
  *r.ptr = '\0';
  if (static_cast<float>(std::strtod(buf, nullptr)) != f) {
    r = std::to_chars(buf, buf + sizeof buf, static_cast<double>(f));
    *r.ptr = '\0';
  }
  out.append(buf, r.ptr);
  // "-0" would read back as the integer 0 and lose the sign bit.
  if (std::string_view(buf, r.ptr) == "-0") out += ".0";
}

void append_uint(std::string& out, uint64_t v) {
  char buf[24];
  auto r = std::to_chars(buf, buf + sizeof buf, v);
  out.append(buf, r.ptr);
}

std::string quoted(const std::string& key) {
  return nlohmann::json(key).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + ":";
}

}  // namespace

std::string export_jsonl(const Trace& t, const FieldMap& fm) {
  const std::string k_seq = quoted(fm.seq), k_phase = quoted(fm.phase), k_token = quoted(fm.token),
                    k_layer = quoted(fm.layer), k_experts = quoted(fm.experts), k_weights = quoted(fm.weights),
                    k_logits = quoted(fm.logits);
  std::string out;
  out.reserve(t.records() * (48 + 8 * t.info().top_k));
  for (size_t r = 0; r < t.records(); ++r) {
    out += '{';
    out += k_seq;
    append_uint(out, t.seq(r));
    out += ',';
    out += k_phase;
    out += t.phase(r) == Phase::kPrefill ? "\"prefill\"" : "\"decode\"";
    out += ',';
    out += k_token;
    append_uint(out, t.step(r));
    out += ',';
    out += k_layer;
    append_uint(out, t.layer(r));
    out += ',';
    out += k_experts;
    out += '[';
    const auto ex = t.experts(r);
    for (size_t i = 0; i < ex.size(); ++i) {
      if (i) out += ',';
      append_uint(out, ex[i]);
    }
    out += ']';
    auto floats = [&](const std::string& key, std::span<const float> v) {
      out += ',';
      out += key;
      out += '[';
      for (size_t i = 0; i < v.size(); ++i) {
        if (i) out += ',';
        append_float(out, v[i]);
      }
      out += ']';
    };
    if (t.has_weights()) floats(k_weights, t.weights(r));
    if (t.has_logits()) floats(k_logits, t.logits(r));
    out += "}\n";
  }
  return out;
}

void export_jsonl_file(const Trace& t, const std::string& path, const FieldMap& fm) {
  write_file_atomic(path, export_jsonl(t, fm));
}

}  // namespace moesim::traces
