// Importer for CSV routing traces: a header row naming the columns, then one (token, layer) routing record
// per row. Columns are found by name through --fields (csv_util.h FieldMap), in any order; extra columns
// are ignored. List fields (experts, weights, logits) hold ';'-separated values inside one field, e.g.
//
//   seq,phase,token,layer,experts,weights
//   0,prefill,0,0,12;7,0.6;0.4
//
// Fields may be double-quoted (RFC 4180 style, "" for a quote); a quoted field cannot span lines.
// token, layer and experts are required; seq (0), phase (decode), weights and logits are optional columns.
#include <algorithm>

#include "core/error.h"
#include "traces/csv_util.h"
#include "traces/trace_io.h"

namespace moesim::traces {
namespace {

constexpr size_t kAbsent = static_cast<size_t>(-1);

}  // namespace

Trace import_csv(std::string_view text, const std::string& origin, const FieldMap& fm, const ImportShape& shape) {
  if (text.empty()) throw input_error(origin, 0, "", "empty file");
  LineReader lines(text);
  std::string_view line;
  std::vector<std::string> cols;
  std::string err;
  bool have_header = false;
  while (lines.next(line))
    if (!line.empty()) {
      have_header = true;
      break;
    }
  if (!have_header) throw input_error(origin, 0, "", "empty file (no header row)");
  const uint64_t header_line = lines.line_number();
  if (!split_csv(line, ',', cols, err)) throw input_error(origin, header_line, "header", err);
  const std::vector<std::string> header = cols;
  auto find = [&](const std::string& key, const char* field, bool required) {
    auto it = std::find(header.begin(), header.end(), key);
    if (it == header.end()) {
      if (required)
        throw input_error(origin, header_line, field,
                          "no column named '" + key + "' in the header row (map it with --fields " + field + "=NAME)");
      return kAbsent;
    }
    if (std::find(it + 1, header.end(), key) != header.end())
      throw input_error(origin, header_line, field, "column '" + key + "' appears twice in the header row");
    return static_cast<size_t>(it - header.begin());
  };
  const size_t c_seq = find(fm.seq, "seq", false), c_phase = find(fm.phase, "phase", false);
  const size_t c_token = find(fm.token, "token", true), c_layer = find(fm.layer, "layer", true);
  const size_t c_experts = find(fm.experts, "experts", true);
  const size_t c_weights = find(fm.weights, "weights", false), c_logits = find(fm.logits, "logits", false);

  TraceInfo info;
  info.layers = shape.layers;
  info.experts = shape.experts;
  info.provenance = {{"format", "csv"}, {"source", sanitize_utf8(origin)}};
  TraceBuilder b(std::move(info), c_weights != kAbsent, c_logits != kAbsent, origin);
  std::vector<uint32_t> experts;
  std::vector<float> weights, logits;
  std::vector<std::string> items;
  while (lines.next(line)) {
    const uint64_t ln = lines.line_number();
    if (line.empty()) continue;
    if (!split_csv(line, ',', cols, err)) throw input_error(origin, ln, "", err);
    if (cols.size() != header.size())
      throw input_error(origin, ln, "",
                        std::to_string(cols.size()) + " columns, the header has " + std::to_string(header.size()));
    auto u32 = [&](size_t c, const char* field, uint32_t dflt) -> uint32_t {
      if (c == kAbsent) return dflt;
      auto v = parse_uint(cols[c]);
      if (!v || *v > 0xFFFFFFFFu)
        throw input_error(origin, ln, field, "not an unsigned 32-bit integer: '" + cols[c] + "'");
      return static_cast<uint32_t>(*v);
    };
    auto list = [&](size_t c) {
      items.clear();
      std::string_view s = cols[c];
      if (s.empty()) return;
      size_t i = 0;
      for (;;) {
        size_t e = s.find(';', i);
        if (e == std::string_view::npos) e = s.size();
        items.emplace_back(s.substr(i, e - i));
        if (e == s.size()) break;
        i = e + 1;
      }
    };
    const uint32_t seq = u32(c_seq, "seq", 0);
    Phase phase = Phase::kDecode;
    if (c_phase != kAbsent) {
      auto p = parse_phase_name(cols[c_phase]);
      if (!p) throw input_error(origin, ln, "phase", "must be prefill, decode, 0 or 1, got '" + cols[c_phase] + "'");
      phase = *p;
    }
    const uint32_t token = u32(c_token, "token", 0), layer = u32(c_layer, "layer", 0);
    list(c_experts);
    experts.clear();
    for (const auto& it : items) {
      auto v = parse_uint(it);
      if (!v || *v > 0xFFFFFFFFu)
        throw input_error(origin, ln, "experts", "expert id '" + it + "' is not a non-negative integer");
      experts.push_back(static_cast<uint32_t>(*v));
    }
    auto floats = [&](size_t c, const char* field, std::vector<float>& out) {
      out.clear();
      if (c == kAbsent) return;
      list(c);
      for (const auto& it : items) {
        auto v = parse_float(it);
        if (!v) throw input_error(origin, ln, field, "not a float32 number: '" + it + "'");
        out.push_back(*v);
      }
    };
    floats(c_weights, "weights", weights);
    floats(c_logits, "logits", logits);
    b.add(seq, phase, token, layer, experts, weights, logits, ln);
  }
  if (b.records() == 0) throw input_error(origin, header_line, "", "no routing records after the header row");
  return std::move(b).finish();
}

}  // namespace moesim::traces
