// Importer for BigMoeOnEdge "route_trace v1" CSV files (data/traces/SOURCE.md describes the format):
//
//   # route_trace v1
//   # model=PATH arch=NAME n_layer=L n_expert=E n_expert_used=K
//   # layer=0 expert_bytes=B dense_bytes=D          (one line per layer; optional as a whole)
//   turn,phase,step,layer,slot,expert,weight,residency,expert_bytes
//   0,0,0,0,0,49,0.221297,0,3059712                 (one row per (cell, slot); slots 0..K-1 in order)
//
// turn becomes the sequence id; phase 0 = prefill, 1 = decode. The engine numbers decode steps by
// absolute position (the first generated token of a 28-token prompt is step 28); the trace model counts
// decode steps from 0, so each turn's decode steps are shifted down by its prompt length (the number of
// prefill steps; the first decode step when a turn has no prefill rows). The shift is recorded in the
// provenance. residency and the per-row expert_bytes describe the engine's own cache; they are checked to
// be numbers and otherwise ignored.
#include <algorithm>
#include <map>

#include "base/error.h"
#include "traces/csv_util.h"
#include "traces/trace_io.h"

namespace moesim::traces {
namespace {

struct Cell {
  uint32_t turn, step, layer;
  Phase phase;
  uint64_t line;
  std::vector<uint32_t> experts;
  std::vector<float> weights;
};

// "key=value key=value" tokens of a preamble line.
std::map<std::string, std::string> preamble_fields(std::string_view line) {
  std::map<std::string, std::string> out;
  size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && (line[i] == ' ' || line[i] == '\t')) ++i;
    size_t e = i;
    while (e < line.size() && line[e] != ' ' && line[e] != '\t') ++e;
    std::string_view tok = line.substr(i, e - i);
    size_t eq = tok.find('=');
    if (eq != std::string_view::npos && eq > 0) out[std::string(tok.substr(0, eq))] = std::string(tok.substr(eq + 1));
    i = e;
  }
  return out;
}

// The preamble's model shape and per-layer sizes.
struct Preamble {
  uint64_t n_layer = 0, n_expert = 0, n_used = 0;
  uint64_t shape_line = 0;  // the line giving the shape; 0: none
  std::string model_path, arch;
  std::map<uint64_t, uint64_t> layer_bytes;
  std::map<uint64_t, uint64_t> layer_dense_bytes;  // non-expert weights per layer, kept for the simulator
};

// One comment line of the preamble, after its '#': the model shape, one layer's sizes, or free text.
void read_preamble_line(std::string_view text, uint64_t ln, const std::string& origin, Preamble& p) {
  auto f = preamble_fields(text);
  auto number = [&](const char* key) {
    auto v = parse_uint(f[key]);
    if (!v) throw input_error(origin, ln, key, "not a non-negative integer: '" + f[key] + "'");
    return *v;
  };
  if (f.count("n_layer") || f.count("n_expert") || f.count("n_expert_used")) {
    if (p.shape_line) throw input_error(origin, ln, "n_layer", "model shape given twice (first at line " + std::to_string(p.shape_line) + ")");
    p.shape_line = ln;
    p.n_layer = number("n_layer");
    p.n_expert = number("n_expert");
    p.n_used = number("n_expert_used");
    p.model_path = sanitize_utf8(f["model"]);
    p.arch = sanitize_utf8(f["arch"]);
    if (p.n_layer == 0 || p.n_layer > 65536) throw input_error(origin, ln, "n_layer", "must be in [1, 65536]");
    if (p.n_expert == 0 || p.n_expert > 65536) throw input_error(origin, ln, "n_expert", "must be in [1, 65536]");
    if (p.n_used == 0 || p.n_used > p.n_expert) throw input_error(origin, ln, "n_expert_used", "must be in [1, n_expert]");
  } else if (f.count("layer") && f.count("expert_bytes")) {
    if (!p.shape_line) throw input_error(origin, ln, "layer", "per-layer line before the n_layer line");
    const uint64_t l = number("layer"), b = number("expert_bytes");
    if (l >= p.n_layer) throw input_error(origin, ln, "layer", "layer " + std::to_string(l) + " >= n_layer " + std::to_string(p.n_layer));
    if (!p.layer_bytes.emplace(l, b).second) throw input_error(origin, ln, "layer", "layer " + std::to_string(l) + " listed twice");
    if (f.count("dense_bytes")) p.layer_dense_bytes.emplace(l, number("dense_bytes"));
  }
  // Other comment lines are free text.
}

// Reads the comment lines after the first up to the header row, which it leaves in `line`, and checks the
// shape they give against the model's.
Preamble read_preamble(LineReader& lines, std::string_view& line, const std::string& origin,
                       const ImportShape& shape) {
  Preamble p;
  bool have_header = false;
  while (lines.next(line)) {
    if (line.empty()) continue;
    if (line[0] != '#') {
      have_header = true;
      break;
    }
    read_preamble_line(line.substr(1), lines.line_number(), origin, p);
  }
  const uint64_t n_layer = p.n_layer, n_expert = p.n_expert, shape_line = p.shape_line;
  if (!shape_line) throw input_error(origin, lines.line_number(), "n_layer", "preamble has no n_layer/n_expert/n_expert_used line");
  if (!have_header) throw input_error(origin, lines.line_number(), "header", "no CSV header row (truncated file?)");
  if (shape.layers && shape.layers != n_layer)
    throw input_error(origin, shape_line, "n_layer",
                      std::to_string(n_layer) + " layers, the model has " + std::to_string(shape.layers) + " MoE layers");
  if (shape.experts && shape.experts != n_expert)
    throw input_error(origin, shape_line, "n_expert",
                      std::to_string(n_expert) + " experts, the model has " + std::to_string(shape.experts));
  if (!p.layer_bytes.empty() && p.layer_bytes.size() != n_layer)
    throw input_error(origin, shape_line, "expert_bytes",
                      "per-layer expert_bytes given for " + std::to_string(p.layer_bytes.size()) + " of " +
                          std::to_string(n_layer) + " layers");
  return p;
}

constexpr size_t kColumnCount = 9;
constexpr const char* kColumnNames[kColumnCount] = {"turn",   "phase",  "step",      "layer",       "slot",
                                                    "expert", "weight", "residency", "expert_bytes"};

void split_columns(std::string_view l, std::vector<std::string_view>& cols) {
  cols.clear();
  size_t i = 0;
  for (;;) {
    size_t e = l.find(',', i);
    if (e == std::string_view::npos) {
      cols.push_back(l.substr(i));
      return;
    }
    cols.push_back(l.substr(i, e - i));
    i = e + 1;
  }
}

// Where each of kColumnNames is in a row, and how many columns a row has.
struct Columns {
  size_t idx[kColumnCount];
  size_t ncols;
};

// Header row: columns by name, so that their order does not matter.
Columns read_header(std::string_view line, uint64_t header_line, const std::string& origin) {
  std::vector<std::string_view> cols;
  split_columns(line, cols);
  Columns c;
  std::vector<MissingField> missing;
  for (size_t n = 0; n < kColumnCount; ++n) {
    auto it = std::find(cols.begin(), cols.end(), kColumnNames[n]);
    if (it == cols.end()) missing.push_back({kColumnNames[n], kColumnNames[n]});
    c.idx[n] = static_cast<size_t>(it - cols.begin());
  }
  if (!missing.empty())
    throw missing_fields_error(origin, header_line, missing, "column", "the header row",
                               std::vector<std::string>(cols.begin(), cols.end()), false);
  c.ncols = cols.size();
  return c;
}

// One routing row's numbers: v = turn, phase, step, layer, slot, expert; w = the weight.
struct Row {
  uint64_t v[6];
  float w;
};

Row parse_row(const std::vector<std::string_view>& cols, const Columns& c, const Preamble& p, uint64_t ln,
              const std::string& origin) {
  const auto& names = kColumnNames;
  const auto& idx = c.idx;
  Row r;
  uint64_t* v = r.v;
  for (size_t n : {0, 1, 2, 3, 4}) {
    auto x = parse_uint(cols[idx[n]]);
    if (!x || *x > 0xFFFFFFFFu)
      throw input_error(origin, ln, names[n], "not an unsigned 32-bit integer: '" + std::string(cols[idx[n]]) + "'");
    v[n] = *x;
  }
  v[5] = parse_expert_id(cols[idx[5]], static_cast<uint32_t>(p.n_expert), origin, ln, "expert");
  auto w = parse_float(cols[idx[6]]);
  if (!w) throw input_error(origin, ln, "weight", "not a number: '" + std::string(cols[idx[6]]) + "'");
  for (size_t n : {7, 8})
    if (!parse_uint(cols[idx[n]]))
      throw input_error(origin, ln, names[n], "not an unsigned integer: '" + std::string(cols[idx[n]]) + "'");
  if (v[1] > 1) throw input_error(origin, ln, "phase", "must be 0 (prompt) or 1 (generation), got " + std::to_string(v[1]));
  if (v[3] >= p.n_layer)
    throw input_error(origin, ln, "layer", "layer " + std::to_string(v[3]) + " outside the model's " + std::to_string(p.n_layer) + " layers");
  r.w = *w;
  return r;
}

// The routing rows after the header, grouped into cells of n_expert_used consecutive slots.
std::vector<Cell> read_cells(LineReader& lines, const Columns& c, const Preamble& p,
                             const std::string& origin) {
  const uint64_t n_used = p.n_used;
  const size_t ncols = c.ncols;
  std::vector<std::string_view> cols;
  std::string_view line;
  std::vector<Cell> cells;
  Cell* cur = nullptr;
  // A cut last line is accepted only when it parses completely, with a warning (csv_util.h warn_if_cut).
  try {
    while (lines.next(line)) {
      const uint64_t ln = lines.line_number();
      if (line.empty()) continue;
      split_columns(line, cols);
      if (cols.size() != ncols)
        throw input_error(origin, ln, "", std::to_string(cols.size()) + " columns, the header has " + std::to_string(ncols));
      const Row r = parse_row(cols, c, p, ln, origin);
      const uint64_t* v = r.v;
      const uint32_t turn = static_cast<uint32_t>(v[0]), step = static_cast<uint32_t>(v[2]), layer = static_cast<uint32_t>(v[3]);
      const Phase phase = static_cast<Phase>(v[1]);
      const bool same = cur && cur->turn == turn && cur->phase == phase && cur->step == step && cur->layer == layer;
      if (!same) {
        if (cur && cur->experts.size() != n_used)
          throw input_error(origin, cur->line, "slot",
                            "top-k mismatch: cell has " + std::to_string(cur->experts.size()) + " slots, n_expert_used is " +
                                std::to_string(n_used));
        cells.push_back(Cell{turn, step, layer, phase, ln, {}, {}});
        cur = &cells.back();
      }
      if (v[4] >= n_used)
        throw input_error(origin, ln, "slot",
                          "top-k mismatch: slot " + std::to_string(v[4]) + " but n_expert_used is " + std::to_string(n_used));
      if (v[4] != cur->experts.size())
        throw input_error(origin, ln, "slot",
                          "slot " + std::to_string(v[4]) + ", expected " + std::to_string(cur->experts.size()) +
                              " (slots of a cell must be consecutive rows in order 0..n_expert_used-1)");
      cur->experts.push_back(static_cast<uint32_t>(v[5]));
      cur->weights.push_back(r.w);
    }
  } catch (const Error& e) {
    throw note_if_cut(lines, e);
  }
  warn_if_cut(lines, origin);
  if (cur && cur->experts.size() != n_used)
    throw input_error(origin, cur->line, "slot",
                      "top-k mismatch: cell has " + std::to_string(cur->experts.size()) + " slots, n_expert_used is " +
                          std::to_string(n_used) + " (truncated file?)");
  if (cells.empty()) throw input_error(origin, lines.line_number(), "", "no routing rows after the header");
  return cells;
}

// Decode step shift per turn: its prompt length. `shifts` gets them for the provenance.
std::map<uint32_t, uint32_t> decode_step_shifts(const std::vector<Cell>& cells, Json& shifts) {
  std::map<uint32_t, uint64_t> prompt_len, first_decode;
  for (const Cell& c : cells) {
    if (c.phase == Phase::kPrefill) {
      uint64_t& p = prompt_len[c.turn];
      p = std::max<uint64_t>(p, uint64_t{c.step} + 1);
    } else {
      auto [it, fresh] = first_decode.emplace(c.turn, c.step);
      if (!fresh) it->second = std::min<uint64_t>(it->second, c.step);
    }
  }
  shifts = Json::object();
  std::map<uint32_t, uint32_t> shift;
  for (const auto& [turn, first] : first_decode) {
    auto p = prompt_len.find(turn);
    shift[turn] = static_cast<uint32_t>(p != prompt_len.end() ? p->second : first);
    shifts[std::to_string(turn)] = shift[turn];
  }
  return shift;
}

TraceInfo make_info(const Preamble& p, const std::string& origin, const Json& shifts) {
  TraceInfo info;
  const std::string& model_path = p.model_path;
  const size_t slash = model_path.find_last_of('/');
  info.model = slash == std::string::npos ? model_path : model_path.substr(slash + 1);
  if (info.model.size() > 5 && info.model.ends_with(".gguf")) info.model.resize(info.model.size() - 5);
  info.layers = static_cast<uint32_t>(p.n_layer);
  info.experts = static_cast<uint32_t>(p.n_expert);
  info.top_k = static_cast<uint32_t>(p.n_used);
  for (const auto& [l, b] : p.layer_bytes) info.expert_bytes.push_back(b);
  info.provenance = {{"format", "route_trace v1"},
                     {"source", sanitize_utf8(origin)},
                     {"engine_model", model_path},
                     {"arch", p.arch},
                     {"expert_bytes_source", "route_trace preamble (the engine's quantized file)"},
                     {"decode_step_shift", shifts}};
  if (!p.layer_dense_bytes.empty() && p.layer_dense_bytes.size() == p.n_layer) {
    Json dense = Json::array();
    for (const auto& [l, d] : p.layer_dense_bytes) dense.push_back(d);
    info.provenance["dense_bytes"] = std::move(dense);
  }
  return info;
}

}  // namespace

Trace import_bigmoe(std::string_view text, const std::string& origin, const ImportShape& shape) {
  text = skip_bom(text);
  if (text.empty()) throw input_error(origin, 0, "", "empty file");
  LineReader lines(text);
  std::string_view line;
  lines.next(line);
  if (line != "# route_trace v1")
    throw input_error(origin, 1, "preamble", "first line must be '# route_trace v1'");
  const Preamble pre = read_preamble(lines, line, origin, shape);
  const Columns columns = read_header(line, lines.line_number(), origin);
  const std::vector<Cell> cells = read_cells(lines, columns, pre, origin);
  Json shifts;
  std::map<uint32_t, uint32_t> shift = decode_step_shifts(cells, shifts);

  TraceBuilder b(make_info(pre, origin, shifts), true, false, origin);
  for (const Cell& c : cells) {
    uint32_t step = c.step;
    if (c.phase == Phase::kDecode) {
      const uint32_t s = shift[c.turn];
      if (step < s)
        throw input_error(origin, c.line, "step",
                          "decode step " + std::to_string(step) + " is inside the prompt (" + std::to_string(s) +
                              " prefill steps) of turn " + std::to_string(c.turn));
      step -= s;
    }
    b.add(c.turn, c.phase, step, c.layer, c.experts, c.weights, {}, c.line);
  }
  return std::move(b).finish();
}

}  // namespace moesim::traces
