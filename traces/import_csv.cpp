// Importer for CSV routing traces: a header row naming the columns, then one (token, layer) routing record
// per row. Columns are found by name through --fields (csv_util.h FieldMap), in any order; extra columns
// are ignored. List fields (experts, weights, logits) hold a list inside one field (csv_util.h split_list:
// "12;7", "12 7", or a quoted "[12, 7]"), e.g.
//
//   seq,phase,token,layer,experts,weights
//   0,prefill,0,0,12;7,0.6;0.4
//
// Fields may be double-quoted (RFC 4180 style, "" for a quote); a quoted field cannot span lines. The
// separator is ',' unless TextImportOptions::delimiter says otherwise (auto: a header with tabs and no
// commas is tab-separated). A UTF-8 byte order mark is skipped. token, layer and experts are required
// (token not with --token-from order); seq (0), phase (decode), weights and logits are optional columns.
#include <algorithm>

#include "base/error.h"
#include "traces/csv_util.h"
#include "traces/trace_io.h"

namespace moesim::traces {
namespace {

constexpr size_t kAbsent = static_cast<size_t>(-1);

// The header row's layout: the separator, and where each field's column is (kAbsent: not in the file).
struct CsvLayout {
  std::vector<std::string> header;
  uint64_t header_line = 0;
  char sep = ',';
  size_t c_seq = kAbsent, c_phase = kAbsent, c_token = kAbsent, c_layer = kAbsent, c_experts = kAbsent;
  size_t c_weights = kAbsent, c_logits = kAbsent;
  std::vector<std::pair<size_t, std::string>> where;  // --where: (column, the value a kept row has there)
};

// Reads up to the first non-empty line, the header row, and finds the fields' columns in it.
CsvLayout read_csv_header(LineReader& lines, const std::string& origin, const TextImportOptions& opts) {
  const FieldMap& fm = opts.fields;
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
  CsvLayout l;
  l.header_line = lines.line_number();
  const uint64_t header_line = l.header_line;
  char sep = opts.delimiter;
  if (sep == 0)
    sep = line.find('\t') != std::string_view::npos && line.find(',') == std::string_view::npos ? '\t' : ',';
  l.sep = sep;
  if (!split_csv(line, sep, cols, err)) throw input_error(origin, header_line, "header", err);
  l.header = cols;
  const std::vector<std::string>& header = l.header;
  std::vector<MissingField> missing;
  auto find = [&](const std::string& key, const char* field, bool required) {
    auto it = std::find(header.begin(), header.end(), key);
    if (it == header.end()) {
      if (required) missing.push_back({field, key});
      return kAbsent;
    }
    if (std::find(it + 1, header.end(), key) != header.end())
      throw input_error(origin, header_line, field, "column '" + key + "' appears twice in the header row");
    return static_cast<size_t>(it - header.begin());
  };
  l.c_seq = find(fm.seq, "seq", false);
  l.c_phase = find(fm.phase, "phase", false);
  l.c_token = find(fm.token, "token", !opts.token_from_order);
  l.c_layer = find(fm.layer, "layer", true);
  l.c_experts = find(fm.experts, "experts", true);
  if (!missing.empty()) {
    std::string hint;
    if (l.c_token == kAbsent && !opts.token_from_order) hint += ", or number tokens by row order with --token-from order";
    if (header.size() == 1 && sep != '\t' && line.find('\t') != std::string_view::npos)
      hint += "; the header has tabs: --delimiter tab";
    throw missing_fields_error(origin, header_line, missing, "column", "the header row", header, true, hint);
  }
  if (opts.token_from_order && l.c_token != kAbsent)
    throw input_error(
        origin, header_line, "token",
        "--token-from order, but the header has a token column '" + fm.token + "' (drop the flag to use it)");
  l.c_weights = find(fm.weights, "weights", false);
  l.c_logits = find(fm.logits, "logits", false);
  for (const auto& [key, value] : opts.where) {
    auto it = std::find(header.begin(), header.end(), key);
    if (it == header.end())
      throw input_error(origin, header_line, "where",
                        "--where " + key + "=...: no column named '" + key + "'");
    l.where.emplace_back(static_cast<size_t>(it - header.begin()), value);
  }
  return l;
}

}  // namespace

Trace import_csv(std::string_view text, const std::string& origin, const TextImportOptions& opts,
                 const ImportShape& shape) {
  text = skip_bom(text);
  if (text.empty()) throw input_error(origin, 0, "", "empty file");
  LineReader lines(text);
  const CsvLayout l = read_csv_header(lines, origin, opts);
  const std::vector<std::string>& header = l.header;
  const uint64_t header_line = l.header_line;
  const char sep = l.sep;
  const auto& where = l.where;
  const size_t c_seq = l.c_seq, c_phase = l.c_phase, c_token = l.c_token, c_layer = l.c_layer,
               c_experts = l.c_experts, c_weights = l.c_weights, c_logits = l.c_logits;
  std::string_view line;
  std::vector<std::string> cols;
  std::string err;

  RecordCollector rc(origin, "csv", opts, shape);
  std::vector<uint32_t> experts;
  std::vector<float> weights, logits;
  std::vector<std::string_view> items;
  while (lines.next(line)) {
    const uint64_t ln = lines.line_number();
    if (line.empty()) continue;
    try {
      if (!split_csv(line, sep, cols, err)) throw input_error(origin, ln, "", err);
      if (cols.size() != header.size()) {
        std::string msg =
            std::to_string(cols.size()) + " columns, the header has " + std::to_string(header.size());
        if (cols.size() > header.size() && line.find('[') != std::string_view::npos)
          msg += " (a list with the separator inside must be quoted: \"[1, 2]\")";
        throw input_error(origin, ln, "", msg);
      }
      if (!std::all_of(where.begin(), where.end(),
                       [&](const auto& w) { return cols[w.first] == w.second; })) {
        rc.skip_filtered();
        warn_if_cut(lines, origin);
        continue;
      }
      auto u32 = [&](size_t c, const char* field, uint32_t dflt) -> uint32_t {
        if (c == kAbsent) return dflt;
        auto v = parse_uint(cols[c]);
        if (!v || *v > 0xFFFFFFFFu)
          throw input_error(origin, ln, field, "not an unsigned 32-bit integer: '" + cols[c] + "'");
        return static_cast<uint32_t>(*v);
      };
      auto list = [&](size_t c, const char* field) {
        if (!split_list(cols[c], items, err)) throw input_error(origin, ln, field, err);
      };
      const uint32_t seq = u32(c_seq, "seq", 0);
      Phase phase = Phase::kDecode;
      if (c_phase != kAbsent) {
        auto p = parse_phase_name(cols[c_phase]);
        if (!p)
          throw input_error(origin, ln, "phase",
                            "must be prefill, decode, 0 or 1, got '" + cols[c_phase] + "'");
        phase = *p;
      }
      const uint32_t token = u32(c_token, "token", 0), layer = u32(c_layer, "layer", 0);
      list(c_experts, "experts");
      experts.clear();
      for (const auto& it : items) experts.push_back(parse_expert_id(it, shape.experts, origin, ln));
      auto floats = [&](size_t c, const char* field, std::vector<float>& out) {
        out.clear();
        if (c == kAbsent) return;
        list(c, field);
        for (const auto& it : items) {
          auto v = parse_float(it);
          if (!v) throw input_error(origin, ln, field, "not a float32 number: '" + std::string(it) + "'");
          out.push_back(*v);
        }
      };
      floats(c_weights, "weights", weights);
      floats(c_logits, "logits", logits);
      rc.add(seq, phase, token, layer, experts, weights, logits, ln);
    } catch (const Error& e) {
      throw note_if_cut(lines, e);
    }
    warn_if_cut(lines, origin);
  }
  return std::move(rc).finish(c_weights != kAbsent, c_logits != kAbsent, header_line);
}

}  // namespace moesim::traces
