// The per-token engine log reader (traces/engine_log.h). Strict like the trace importers: a cell that is not
// a finite non-negative number, a short or long row, or a step out of order is an error naming the line and
// the column, never a skipped row (a silently shorter log would fit a wrong profile).
#include "traces/engine_log.h"

#include <charconv>
#include <cmath>
#include <optional>
#include <set>

#include "base/error.h"
#include "base/input_file.h"
#include "traces/csv_util.h"

namespace moesim::traces {
namespace {

const std::vector<std::string>& column_fields() {
  static const std::vector<std::string> f = {"step",       "steps",      "wall_ms",  "io_ms",
                                             "compute_ms", "read_bytes", "stall_ms", "mgmt_ms"};
  return f;
}
const std::set<std::string> kOptional = {"steps", "stall_ms", "mgmt_ms"};

std::optional<double> parse_number(std::string_view s) {
  double v = 0;
  const auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v, std::chars_format::general);
  if (ec != std::errc() || p != s.data() + s.size() || s.empty() || !std::isfinite(v) || v < 0)
    return std::nullopt;
  return v;
}

std::string_view trim_front(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  return s;
}

std::string trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.remove_suffix(1);
  return std::string(s);
}

// "# summary k=v k=v": the pairs; a token without '=' is an error naming the line, and so is a key given
// twice (naming both columns: taking either would be a guess). `col` is the 1-based column of rest[0] in the
// line.
std::map<std::string, std::string> summary_pairs(std::string_view rest, const std::string& origin,
                                                 uint64_t ln, size_t col) {
  std::map<std::string, std::string> out;
  std::map<std::string, size_t> key_col;
  size_t i = 0;
  while (i < rest.size()) {
    while (i < rest.size() && (rest[i] == ' ' || rest[i] == '\t' || rest[i] == '\r')) ++i;
    size_t e = i;
    while (e < rest.size() && rest[e] != ' ' && rest[e] != '\t' && rest[e] != '\r') ++e;
    if (e == i) break;
    const std::string_view tok = rest.substr(i, e - i);
    const size_t eq = tok.find('=');
    if (eq == std::string_view::npos || eq == 0)
      throw input_error(origin, ln, "summary", "'" + sanitize_utf8(tok) + "' is not KEY=VALUE");
    const std::string key(tok.substr(0, eq));
    if (const auto [it, fresh] = key_col.emplace(key, col + i); !fresh)
      throw input_error(origin, ln, sanitize_utf8(key),
                        "the summary key appears twice (columns " + std::to_string(it->second) + " and " +
                            std::to_string(col + i) + ")");
    out[key] = std::string(tok.substr(eq + 1));
    i = e;
  }
  return out;
}

// The column index of every field (-1: an optional field the header lacks).
std::map<std::string, int> header_columns(const std::vector<std::string>& header, const LogFieldMap& fields,
                                          const std::string& origin, uint64_t ln) {
  // A name twice is refused whether or not a field maps to it: the CSV trace importer refuses it too, and a
  // reader that took the last (or first) copy would fit or validate against a column nobody chose.
  std::map<std::string, size_t> first;
  for (size_t c = 0; c < header.size(); ++c)
    if (const auto [it, fresh] = first.emplace(trim(header[c]), c); !fresh)
      throw input_error(origin, ln, sanitize_utf8(it->first),
                        "the column appears twice in the header row (columns " +
                            std::to_string(it->second + 1) + " and " + std::to_string(c + 1) + ")");
  std::map<std::string, int> at;
  std::vector<MissingField> missing;
  for (const std::string& f : column_fields()) {
    at[f] = -1;
    for (size_t c = 0; c < header.size(); ++c)
      if (trim(header[c]) == fields[f]) at[f] = static_cast<int>(c);
    if (at[f] < 0 && !kOptional.count(f)) missing.push_back({f, fields[f]});
  }
  if (!missing.empty())
    throw missing_fields_error(
        origin, ln, missing, "column", "the header row", header, /*mappable=*/false,
        "; map it with --log-fields FIELD=COLUMN (fields: " + std::string(kLogFields) + ")");
  return at;
}

EngineLogToken parse_row(const std::vector<std::string>& cells, const std::vector<std::string>& header,
                         const std::map<std::string, int>& at, const std::string& origin, uint64_t ln) {
  if (cells.size() != header.size())
    throw input_error(origin, ln, cells.size() < header.size() ? header[cells.size()] : "",
                      "column " + std::to_string(std::min(cells.size(), header.size()) + 1) +
                          ": the row has " + std::to_string(cells.size()) + " cells, the header " +
                          std::to_string(header.size()));
  std::vector<double> v(cells.size());
  for (size_t c = 0; c < cells.size(); ++c) {
    const auto x = parse_number(trim(cells[c]));
    if (!x)
      throw input_error(origin, ln, trim(header[c]),
                        "column " + std::to_string(c + 1) + ": '" + sanitize_utf8(cells[c]) +
                            "' is not a finite non-negative number");
    v[c] = *x;
  }
  auto get = [&](const char* f) { return at.at(f) < 0 ? 0.0 : v[static_cast<size_t>(at.at(f))]; };
  EngineLogToken t;
  const double step = get("step");
  if (step != std::floor(step) || step < 1 || step > 1e9)
    throw input_error(origin, ln, header[static_cast<size_t>(at.at("step"))],
                      "column " + std::to_string(at.at("step") + 1) + ": step must be a whole number >= 1");
  t.step = static_cast<uint32_t>(step);
  t.wall_ms = get("wall_ms");
  t.io_ms = get("io_ms");
  t.compute_ms = get("compute_ms");
  t.read_bytes = get("read_bytes");
  t.stall_ms = get("stall_ms");
  t.mgmt_ms = get("mgmt_ms");
  return t;
}

double summary_number(const EngineLog& log, const LogFieldMap& fields, const std::string& field) {
  const std::string& key = fields[field];
  const auto it = log.summary.find(key);
  if (it == log.summary.end())
    throw input_error(log.origin, log.summary_line, key,
                      "the summary line has no '" + key + "' (the " + field +
                          " field; map it with --log-fields " + field + "=KEY)");
  const auto v = parse_number(it->second);
  if (!v)
    throw input_error(log.origin, log.summary_line, key,
                      "'" + sanitize_utf8(it->second) + "' is not a finite non-negative number");
  return *v;
}

// Every row's step is its 1-based index and every `steps` cell the row count.
void check_steps(const EngineLog& log, const std::vector<double>& steps_cells,
                 const std::vector<uint64_t>& lines, const std::string& steps_col, int steps_at) {
  for (size_t i = 0; i < log.tokens.size(); ++i) {
    if (log.tokens[i].step != i + 1)
      throw input_error(log.origin, lines[i], "step",
                        "step " + std::to_string(log.tokens[i].step) + " where step " +
                            std::to_string(i + 1) + " was expected (steps must be 1..N in order)");
    if (steps_at >= 0 && steps_cells[i] != static_cast<double>(log.tokens.size()))
      throw input_error(log.origin, lines[i], steps_col,
                        "column " + std::to_string(steps_at + 1) + ": " +
                            std::to_string(static_cast<uint64_t>(steps_cells[i])) +
                            " steps, but the log has " + std::to_string(log.tokens.size()) + " token rows");
  }
}

}  // namespace

LogFieldMap::LogFieldMap() {
  for (const std::string& f : column_fields()) names[f] = f;
  names["n_prompt"] = "n_prompt";
  names["prefill_s"] = "prefill_s";
}

LogFieldMap parse_log_fields(const std::string& spec) {
  LogFieldMap m;
  std::set<std::string> given;
  size_t i = 0;
  while (i <= spec.size() && !spec.empty()) {
    size_t e = spec.find(',', i);
    if (e == std::string::npos) e = spec.size();
    const std::string item = spec.substr(i, e - i);
    const size_t eq = item.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == item.size())
      throw UsageError("--log-fields: '" + item + "' is not FIELD=NAME (fields: " + kLogFields + ")");
    const std::string f = item.substr(0, eq);
    if (!m.names.count(f))
      throw UsageError("--log-fields: unknown field '" + f + "' (fields: " + kLogFields + ")");
    if (!given.insert(f).second) throw UsageError("--log-fields: field '" + f + "' given twice");
    m.names[f] = item.substr(eq + 1);
    i = e + 1;
  }
  return m;
}

double EngineLog::mean_wall_ms() const {
  double s = 0;
  for (const EngineLogToken& t : tokens) s += t.wall_ms;
  return tokens.empty() ? 0 : s / static_cast<double>(tokens.size());
}

EngineLog parse_engine_log(std::string_view text, const std::string& origin, const LogFieldMap& fields) {
  EngineLog log;
  log.origin = origin;
  LineReader lines(skip_bom(text));
  std::string_view line;
  std::vector<std::string> header, cells;
  std::map<std::string, int> at;
  std::vector<double> steps_cells;
  std::vector<uint64_t> row_lines;
  std::string err;
  while (lines.next(line)) {
    const uint64_t ln = lines.line_number();
    const std::string t = trim(line);
    if (t.empty()) continue;
    if (t[0] == '#') {
      const std::string_view rest = std::string_view(t).substr(1);
      const std::string body = trim(rest);
      if (body.rfind("summary", 0) == 0) {
        // The 1-based column of the text after "summary": the leading blanks, '#', the blanks after it.
        const size_t lead = line.find_first_not_of(" \t");
        const size_t col = lead + 1 + (rest.size() - trim_front(rest).size()) + 7 + 1;
        if (log.summary_line)
          throw input_error(
              origin, ln, "summary",
              "a second summary line (the first is line " + std::to_string(log.summary_line) + ")");
        log.summary = summary_pairs(std::string_view(body).substr(7), origin, ln, col);
        log.summary_line = ln;
      }
      continue;
    }
    if (log.summary_line)
      throw input_error(origin, ln, "",
                        "a token row after the summary line (line " + std::to_string(log.summary_line) + ")");
    if (!split_csv(line, ',', cells, err)) throw input_error(origin, ln, "", err);
    if (header.empty()) {
      header = cells;
      at = header_columns(header, fields, origin, ln);
      continue;
    }
    log.tokens.push_back(parse_row(cells, header, at, origin, ln));
    steps_cells.push_back(
        at["steps"] < 0 ? 0 : parse_number(trim(cells[static_cast<size_t>(at["steps"])])).value_or(0));
    row_lines.push_back(ln);
  }
  if (header.empty())
    throw input_error(origin, 0, "", "no header row (expected the columns " + std::string(kLogFields) + ")");
  if (log.tokens.empty()) throw input_error(origin, 0, "", "no token rows after the header");
  if (!log.summary_line)
    throw input_error(
        origin, 0, "",
        "no '# summary' line after the token rows (the log may have been cut before the run ended)");
  check_steps(log, steps_cells, row_lines,
              at["steps"] < 0 ? "" : trim(header[static_cast<size_t>(at["steps"])]), at["steps"]);
  const double np = summary_number(log, fields, "n_prompt");
  if (np != std::floor(np) || np > 1e9)
    throw input_error(origin, log.summary_line, fields["n_prompt"], "must be a whole number of tokens");
  log.n_prompt = static_cast<uint32_t>(np);
  log.prefill_s = summary_number(log, fields, "prefill_s");
  return log;
}

EngineLog read_engine_log(const std::string& path, const LogFieldMap& fields) {
  InputFile in(path);
  return parse_engine_log(in.read_all(), path, fields);
}

}  // namespace moesim::traces
