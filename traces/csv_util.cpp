#include "traces/csv_util.h"

#include <algorithm>
#include <charconv>
#include <map>
#include <set>
#include <tuple>

#include "base/error.h"
#include "base/warnings.h"

namespace moesim::traces {

std::string_view skip_bom(std::string_view text) {
  if (text.starts_with("\xEF\xBB\xBF")) text.remove_prefix(3);
  return text;
}

bool LineReader::next(std::string_view& line) {
  if (pos_ >= text_.size()) return false;
  size_t end = text_.find('\n', pos_);
  if (end == std::string_view::npos) end = text_.size();
  line = text_.substr(pos_, end - pos_);
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  pos_ = end + 1;
  ++line_;
  return true;
}

void warn_if_cut(const LineReader& lines, const std::string& origin) {
  if (lines.last_line_unterminated())
    warn(origin + ":" + std::to_string(lines.line_number()) +
         ": the last line has no newline; the file may have been cut (check that its last record is "
         "complete)");
}

Error note_if_cut(const LineReader& lines, const Error& e) {
  if (!lines.last_line_unterminated()) return e;
  return Error(std::string(e.what()) + " (the last line has no newline: the file may have been cut)");
}

std::optional<uint64_t> parse_uint(std::string_view s) {
  if (s.empty() || s[0] < '0' || s[0] > '9') return std::nullopt;
  uint64_t v = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || p != s.data() + s.size()) return std::nullopt;
  return v;
}

std::optional<float> parse_float(std::string_view s) {
  if (s.empty()) return std::nullopt;
  float v = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  // Out of range (ERANGE) is an error: a weight of 1e99 is not a float32 number.
  if (ec != std::errc() || p != s.data() + s.size()) return std::nullopt;
  return v;
}

std::optional<Phase> parse_phase_name(std::string_view s) {
  if (s == "prefill" || s == "0") return Phase::kPrefill;
  if (s == "decode" || s == "1") return Phase::kDecode;
  return std::nullopt;
}

size_t utf8_sequence_length(std::string_view s, size_t i) {
  const auto c = static_cast<unsigned char>(s[i]);
  const size_t n = c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xE ? 3 : (c >> 3) == 0x1E ? 4 : 0;
  if (n == 0 || i + n > s.size()) return 0;
  for (size_t j = 1; j < n; ++j)
    if ((static_cast<unsigned char>(s[i + j]) >> 6) != 0x2) return 0;
  if (n > 1) {  // reject overlong forms, surrogates and code points above U+10FFFF
    uint32_t cp = c & (0xFF >> (n + 1));
    for (size_t j = 1; j < n; ++j) cp = (cp << 6) | (static_cast<unsigned char>(s[i + j]) & 0x3F);
    const uint32_t min[] = {0, 0, 0x80, 0x800, 0x10000};
    if (cp < min[n] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return 0;
  }
  return n;
}

std::string sanitize_utf8(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  size_t i = 0;
  while (i < s.size()) {
    const size_t n = utf8_sequence_length(s, i);
    if (n) {
      out.append(s.substr(i, n));
      i += n;
    } else {
      out += '?';
      ++i;
    }
  }
  return out;
}

bool split_csv(std::string_view line, char sep, std::vector<std::string>& out, std::string& error) {
  out.clear();
  size_t i = 0;
  for (;;) {
    std::string field;
    if (i < line.size() && line[i] == '"') {
      ++i;
      for (;;) {
        if (i >= line.size()) {
          error = "unterminated quoted field";
          return false;
        }
        if (line[i] == '"') {
          if (i + 1 < line.size() && line[i + 1] == '"') {
            field += '"';
            i += 2;
            continue;
          }
          ++i;
          break;
        }
        field += line[i++];
      }
      if (i < line.size() && line[i] != sep) {
        error = "text after a closing quote in field " + std::to_string(out.size() + 1);
        return false;
      }
    } else {
      size_t e = line.find(sep, i);
      if (e == std::string_view::npos) e = line.size();
      field.assign(line.substr(i, e - i));
      i = e;
    }
    out.push_back(std::move(field));
    if (i >= line.size()) return true;
    ++i;  // the separator
  }
}

bool split_list(std::string_view cell, std::vector<std::string_view>& items, std::string& error) {
  items.clear();
  auto blank = [](char c) { return c == ' ' || c == '\t'; };
  auto trim = [&](std::string_view v) {
    while (!v.empty() && blank(v.front())) v.remove_prefix(1);
    while (!v.empty() && blank(v.back())) v.remove_suffix(1);
    return v;
  };
  std::string_view s = trim(cell);
  if (!s.empty() && s.front() == '[') {
    if (s.back() != ']') {
      error = s.find(']') == std::string_view::npos ? "list '" + std::string(cell) + "' has '[' but no ']'"
                                                    : "text after ']' in list '" + std::string(cell) + "'";
      return false;
    }
    s = trim(s.substr(1, s.size() - 2));
  }
  if (s.empty()) return true;
  size_t i = 0;
  for (;;) {
    size_t e = i;
    while (e < s.size() && s[e] != ',' && s[e] != ';' && !blank(s[e])) ++e;
    if (e == i) {
      error = "empty item in list '" + std::string(cell) + "'";
      return false;
    }
    items.push_back(s.substr(i, e - i));
    if (e == s.size()) return true;
    // One separator: blanks, optionally around a single ',' or ';'.
    while (e < s.size() && blank(s[e])) ++e;
    if (e < s.size() && (s[e] == ',' || s[e] == ';')) {
      ++e;
      while (e < s.size() && blank(s[e])) ++e;
    }
    if (e == s.size()) {
      error = "empty item at the end of list '" + std::string(cell) + "'";
      return false;
    }
    i = e;
  }
}

Error expert_id_out_of_range(std::string_view shown, uint32_t experts, const std::string& origin,
                             uint64_t line, const char* field) {
  const uint64_t limit = experts ? experts : kExpertIdLimit;
  const std::string why = experts ? "the model has " + std::to_string(experts) + " experts"
                                  : "a trace holds expert ids up to " + std::to_string(kExpertIdLimit - 1);
  return input_error(origin, line, field,
                     "expert id " + std::string(shown) + " outside [0, " + std::to_string(limit) +
                         "): out of range (" + why + ")");
}

uint32_t parse_expert_id(std::string_view text, uint32_t experts, const std::string& origin, uint64_t line,
                         const char* field) {
  const bool digits =
      !text.empty() && std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; });
  if (!digits)
    throw input_error(origin, line, field,
                      "expert id '" + std::string(text) + "' is not a non-negative integer");
  const auto v = parse_uint(text);  // nullopt: more than 64 bits
  if (!v || *v >= (experts ? experts : kExpertIdLimit))
    throw expert_id_out_of_range(text, experts, origin, line, field);
  return static_cast<uint32_t>(*v);
}

Error missing_fields_error(const std::string& origin, uint64_t line, const std::vector<MissingField>& missing,
                           std::string_view kind, std::string_view where,
                           const std::vector<std::string>& present, bool mappable, std::string_view hint) {
  const bool one = missing.size() == 1;
  std::string fields, names, mapping;
  for (const MissingField& m : missing) {
    const bool first = &m == &missing.front();
    fields += (first ? "'" : ", '") + m.field + "'";
    names += (first ? "'" : ", '") + m.name + "'";
    mapping += (first ? "" : ",") + m.field + "=NAME";
  }
  // A wide input is cut short: the names are there to spot the right ones, not to reprint the file.
  constexpr size_t kShown = 30;
  std::string has;
  for (size_t i = 0; i < present.size() && i < kShown; ++i) has += (i ? ", " : "") + present[i];
  if (present.size() > kShown) has += ", ... (" + std::to_string(present.size()) + " in all)";
  if (present.empty()) has = "nothing";
  std::string msg = (one ? "field " : "fields ") + fields + ": missing (no " + std::string(kind) + " named " +
                    names + " in " + std::string(where) + ", which has: " + has + ")";
  if (mappable) msg += "; map " + std::string(one ? "it" : "them") + " with --fields " + mapping;
  msg += hint;
  return input_error(origin, line, "", msg);
}

FieldMap parse_field_map(const std::string& spec) {
  FieldMap m;
  if (spec.empty()) return m;
  std::set<std::string> given;
  size_t i = 0;
  while (i <= spec.size()) {
    size_t e = spec.find(',', i);
    if (e == std::string::npos) e = spec.size();
    std::string item = spec.substr(i, e - i);
    i = e + 1;
    size_t eq = item.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == item.size())
      throw Error("--fields: '" + item + "' is not FIELD=KEY (known fields: " + kKnownFields + ")");
    std::string name = item.substr(0, eq), key = item.substr(eq + 1);
    std::string* slot = name == "seq"       ? &m.seq
                        : name == "token"   ? &m.token
                        : name == "layer"   ? &m.layer
                        : name == "experts" ? &m.experts
                        : name == "weights" ? &m.weights
                        : name == "phase"   ? &m.phase
                        : name == "logits"  ? &m.logits
                                            : nullptr;
    if (!slot) throw Error("--fields: unknown field '" + name + "' (known fields: " + kKnownFields + ")");
    if (!given.insert(name).second) throw Error("--fields: field '" + name + "' given twice");
    *slot = key;
  }
  const std::string* all[] = {&m.seq, &m.token, &m.layer, &m.experts, &m.weights, &m.phase, &m.logits};
  std::set<std::string> keys;
  for (const std::string* k : all)
    if (!keys.insert(*k).second) throw Error("--fields: key '" + *k + "' is mapped to two fields");
  return m;
}

std::pair<std::string, std::string> parse_where(const std::string& spec) {
  const size_t eq = spec.find('=');
  if (eq == std::string::npos || eq == 0) throw UsageError("--where: '" + spec + "' is not KEY=VALUE");
  return {spec.substr(0, eq), spec.substr(eq + 1)};
}

char parse_delimiter(const std::string& spec) {
  if (spec.empty()) return 0;
  if (spec == "tab" || spec == "\\t" || spec == "\t") return '\t';
  if (spec.size() != 1 || spec == "\"" || spec == "\n" || spec == "\r")
    throw UsageError("--delimiter: '" + spec +
                     "' is not one character (or 'tab'); a quote or newline cannot be one");
  return spec[0];
}

RecordCollector::RecordCollector(std::string origin, std::string format, const TextImportOptions& opts,
                                 const ImportShape& shape)
    : origin_(std::move(origin)), format_(std::move(format)), opts_(opts), shape_(shape) {}

void RecordCollector::add(uint32_t seq, Phase phase, uint32_t token, uint32_t layer,
                          std::span<const uint32_t> experts, std::span<const float> weights,
                          std::span<const float> logits, uint64_t line) {
  const uint32_t base = opts_.layer_base;
  if (layer < base)
    throw input_error(origin_, line, "layer",
                      "layer id " + std::to_string(layer) + " below --layer-base " + std::to_string(base));
  const uint32_t l = layer - base;
  if (shape_.layers && l >= shape_.layers) {
    std::string msg = base ? "layer id " + std::to_string(layer) + " (layer " + std::to_string(l) +
                                 " after --layer-base " + std::to_string(base) + ")"
                           : "layer " + std::to_string(layer);
    msg += " outside the model's " + std::to_string(shape_.layers) + " MoE layers: the layer counts disagree";
    // A 1-based import only if no record so far used layer 0 (records come layer by layer, so a 0-based
    // trace has shown layer 0 already); otherwise the trace is another model's.
    if (base == 0 && l == shape_.layers && std::find(layer_.begin(), layer_.end(), 0u) == layer_.end())
      msg += " (ids start at 1? try --layer-base 1)";
    else
      msg += " (a trace of another model? check --model)";
    throw input_error(origin_, line, "layer", msg);
  }
  seq_.push_back(seq);
  phase_.push_back(static_cast<uint8_t>(phase));
  token_.push_back(token);
  layer_.push_back(l);
  line_.push_back(line);
  experts_.insert(experts_.end(), experts.begin(), experts.end());
  weights_.insert(weights_.end(), weights.begin(), weights.end());
  logits_.insert(logits_.end(), logits.begin(), logits.end());
  eoff_.push_back(experts_.size());
  woff_.push_back(weights_.size());
  loff_.push_back(logits_.size());
}

Trace RecordCollector::finish(bool with_weights, bool with_logits, uint64_t header_line) && {
  const size_t n = seq_.size();
  TraceInfo info;
  info.layers = shape_.layers;
  info.experts = shape_.experts;
  info.provenance = {{"format", format_}, {"source", sanitize_utf8(origin_)}};
  if (!opts_.where.empty()) {
    Json w = Json::array();
    for (const auto& [k, v] : opts_.where) w.push_back(sanitize_utf8(k + "=" + v));
    info.provenance["where"] = w;
    info.provenance["where_skipped"] = filtered_;
    if (filtered_)
      warn(origin_ + ": --where skipped " + std::to_string(filtered_) + " of " +
           std::to_string(filtered_ + n) + " records");
  }
  if (n == 0)
    throw input_error(origin_, header_line, "",
                      filtered_ ? "no routing records left: --where skipped all " + std::to_string(filtered_)
                                : std::string("no routing records"));

  std::vector<bool> keep(n, true);
  auto number_tokens = [&] {  // --token-from order: the n-th kept record of (seq, phase, layer) is token n
    std::map<std::tuple<uint32_t, uint8_t, uint32_t>, uint32_t> next;
    for (size_t r = 0; r < n; ++r)
      if (keep[r]) token_[r] = next[{seq_[r], phase_[r], layer_[r]}]++;
  };
  if (opts_.token_from_order) number_tokens();
  if (opts_.token_from_order) info.provenance["token_from"] = "order";
  if (opts_.layer_base) info.provenance["layer_base"] = opts_.layer_base;

  if (opts_.skip_warmup) {
    auto sorted_experts = [&](size_t r) {
      std::vector<uint32_t> v(experts_.begin() + static_cast<ptrdiff_t>(eoff_[r]),
                              experts_.begin() + static_cast<ptrdiff_t>(eoff_[r + 1]));
      std::sort(v.begin(), v.end());
      return v;
    };
    std::map<uint32_t, std::vector<uint32_t>> first;  // layer -> its experts in the run
    size_t run = 0;
    for (; run < n; ++run) {
      auto e = sorted_experts(run);
      auto [it, fresh] = first.emplace(layer_[run], e);
      if (!fresh && it->second != e) break;
    }
    std::set<std::tuple<uint32_t, uint8_t, uint32_t>> later;
    for (size_t r = run; r < n; ++r) later.insert({seq_[r], phase_[r], token_[r]});
    std::vector<size_t> dropped;
    std::map<uint32_t, uint64_t> per_layer;
    for (size_t r = 0; r < run; ++r)
      if (!later.count({seq_[r], phase_[r], token_[r]})) {
        dropped.push_back(r);
        ++per_layer[layer_[r]];
      }
    const bool repeated = !dropped.empty() && std::all_of(per_layer.begin(), per_layer.end(),
                                                          [](auto& p) { return p.second >= 2; });
    if (!repeated) dropped.clear();
    for (size_t r : dropped) keep[r] = false;
    info.provenance["warmup_dropped"] = dropped.size();
    if (dropped.empty())
      warn(origin_ +
           ": --skip-warmup found no warm-up preamble (no leading run of identical records); dropped 0");
    else
      warn(origin_ + ": --skip-warmup dropped " + std::to_string(dropped.size()) +
           " warm-up records (lines " + std::to_string(line_[dropped.front()]) + "-" +
           std::to_string(line_[dropped.back()]) + ")");
    if (dropped.size() == n)
      throw input_error(origin_, 0, "",
                        "no routing records left after --skip-warmup dropped all " + std::to_string(n) +
                            " (every record is the same)");
    if (opts_.token_from_order && !dropped.empty()) number_tokens();
  }

  if (opts_.layer_base == 0 && shape_.layers == 0) {
    uint32_t min_layer = 0xFFFFFFFFu;
    for (size_t r = 0; r < n; ++r)
      if (keep[r]) min_layer = std::min(min_layer, layer_[r]);
    if (min_layer == 1)
      warn(origin_ +
           ": the smallest layer id is 1 and there is no layer 0; if the file numbers layers from 1, "
           "import it with --layer-base 1 (otherwise layer 0 counts as missing)");
  }

  TraceBuilder b(std::move(info), with_weights, with_logits, origin_);
  b.set_drop_duplicates(opts_.drop_duplicates);
  for (size_t r = 0; r < n; ++r) {
    if (!keep[r]) continue;
    auto span_of = [r](const auto& v, const std::vector<size_t>& off) {
      return std::span(v.data() + off[r], off[r + 1] - off[r]);
    };
    b.add(seq_[r], static_cast<Phase>(phase_[r]), token_[r], layer_[r], span_of(experts_, eoff_),
          span_of(weights_, woff_), span_of(logits_, loff_), line_[r]);
  }
  return std::move(b).finish();
}

}  // namespace moesim::traces
