// Importer for JSONL routing traces: one JSON object per line, one (token, layer) routing record each.
//
//   {"seq": 0, "phase": "decode", "token": 3, "layer": 5, "experts": [12, 7], "weights": [0.6, 0.4]}
//
// Keys are mapped by --fields (csv_util.h FieldMap). seq is optional (0), phase is optional (decode) and
// accepts "prefill"/"decode" or 0/1; token (not with --token-from order), layer and experts are required;
// weights and logits are optional, present on every record or on none. List fields are JSON arrays or
// strings in a csv_util.h split_list form ("[1, 2]", "1;2", "1 2"). Other keys are ignored, so engines can
// log more; --where KEY=VALUE skips records (a meta line) before their fields are read. Blank lines and a
// UTF-8 byte order mark are skipped. A last line without its newline is read when it is a complete record,
// with the warning every text importer gives (csv_util.h warn_if_cut: the file may have been cut while
// being written, for instance between two records' lines); a record cut before its closing brace is not
// valid JSON, so it is an error noting the missing newline.
#include <cmath>

#include "base/error.h"
#include "base/json_io.h"
#include "traces/csv_util.h"
#include "traces/trace_io.h"

namespace moesim::traces {
namespace {

// A line such as {"type":"meta",...} is not a routing record: say how to skip it.
constexpr const char* kNotARecordHint = " (not a routing record? keep only records with --where KEY=VALUE)";

class RecordReader {
 public:
  RecordReader(const std::string& origin, uint64_t line, uint32_t experts)
      : origin_(origin), line_(line), experts_(experts) {}

  // An absent key is `dflt`: required keys were checked for all at once (require_keys).
  uint32_t uint_field(const nlohmann::json& obj, const std::string& key, const char* field,
                      uint32_t dflt) const {
    auto it = obj.find(key);
    if (it == obj.end()) return dflt;
    if (!it->is_number_unsigned() || it->get<uint64_t>() > 0xFFFFFFFFu)
      throw input_error(origin_, line_, field, "not an unsigned 32-bit integer: " + it->dump());
    return static_cast<uint32_t>(it->get<uint64_t>());
  }

  Phase phase_field(const nlohmann::json& obj, const std::string& key) const {
    auto it = obj.find(key);
    if (it == obj.end()) return Phase::kDecode;
    std::optional<Phase> p;
    if (it->is_string()) p = parse_phase_name(it->get<std::string>());
    if (it->is_number_unsigned() && it->get<uint64_t>() <= 1) p = static_cast<Phase>(it->get<uint64_t>());
    if (!p)
      throw input_error(origin_, line_, "phase",
                        "must be \"prefill\", \"decode\", 0 or 1, got " + it->dump());
    return *p;
  }

  void ids(const nlohmann::json& obj, const std::string& key, std::vector<uint32_t>& out) const {
    out.clear();
    const nlohmann::json& v = obj.at(key);  // present: require_keys
    if (v.is_string()) {
      for (std::string_view item : string_list(v, "experts"))
        out.push_back(parse_expert_id(item, experts_, origin_, line_));
      return;
    }
    if (!v.is_array()) throw input_error(origin_, line_, "experts", "not an array of expert ids");
    for (const auto& id : v) {
      // A whole number too large for 64 bits arrives as a float: out of range as well, not "not an integer".
      if (id.is_number_float() && id.get<double>() >= 0 && std::floor(id.get<double>()) == id.get<double>())
        throw expert_id_out_of_range(id.dump(), experts_, origin_, line_);
      if (!id.is_number_unsigned())
        throw input_error(origin_, line_, "experts",
                          "expert id " + id.dump() + " is not a non-negative integer");
      out.push_back(parse_expert_id(id.dump(), experts_, origin_, line_));
    }
  }

  // Returns false when the key is absent.
  bool floats(const nlohmann::json& obj, const std::string& key, const char* field,
              std::vector<float>& out) const {
    out.clear();
    auto it = obj.find(key);
    if (it == obj.end()) return false;
    if (it->is_string()) {
      for (std::string_view item : string_list(*it, field)) {
        auto v = parse_float(item);
        if (!v) throw input_error(origin_, line_, field, "not a float32 number: '" + std::string(item) + "'");
        out.push_back(*v);
      }
      return true;
    }
    if (!it->is_array()) throw input_error(origin_, line_, field, "not an array of numbers");
    for (const auto& v : *it) {
      if (!v.is_number()) throw input_error(origin_, line_, field, "not a number: " + v.dump());
      const double d = v.get<double>();
      // Values from FLT_MAX up to the midpoint below 2^128 round to FLT_MAX; from there on to infinity.
      if (std::isfinite(d) && std::fabs(d) >= 0x1.ffffffp127)
        throw input_error(origin_, line_, field, "value " + v.dump() + " outside the float32 range");
      out.push_back(static_cast<float>(d));  // inf stays inf and is rejected by TraceBuilder
    }
    return true;
  }

 private:
  // The items of a list written as a string; they point into `v`, which outlives them.
  std::vector<std::string_view> string_list(const nlohmann::json& v, const char* field) const {
    std::vector<std::string_view> items;
    std::string err;
    if (!split_list(v.get_ref<const std::string&>(), items, err))
      throw input_error(origin_, line_, field, err);
    return items;
  }

  const std::string& origin_;
  uint64_t line_;
  uint32_t experts_;
};

// Every required key the record lacks, in one error that lists the record's keys.
void require_keys(const nlohmann::json& obj, const FieldMap& fm, bool token_from_order,
                  const std::string& origin, uint64_t line) {
  std::vector<MissingField> missing;
  if (!token_from_order && !obj.contains(fm.token)) missing.push_back({"token", fm.token});
  if (!obj.contains(fm.layer)) missing.push_back({"layer", fm.layer});
  if (!obj.contains(fm.experts)) missing.push_back({"experts", fm.experts});
  if (missing.empty()) return;
  std::vector<std::string> keys;
  for (auto it = obj.begin(); it != obj.end(); ++it) keys.push_back(it.key());
  const bool token = missing.front().field == "token";
  throw missing_fields_error(
      origin, line, missing, "key", "the record", keys, true,
      std::string(token ? "; to number tokens by file order: --token-from order" : "") + kNotARecordHint);
}

// --where: does the record's KEY hold VALUE (a string as itself, anything else as its compact JSON)?
bool matches(const nlohmann::json& obj, const std::vector<std::pair<std::string, std::string>>& where) {
  for (const auto& [key, value] : where) {
    auto it = obj.find(key);
    if (it == obj.end()) return false;
    if (it->is_string() ? it->get_ref<const std::string&>() != value : it->dump() != value) return false;
  }
  return true;
}

}  // namespace

Trace import_jsonl(std::string_view text, const std::string& origin, const TextImportOptions& opts,
                   const ImportShape& shape) {
  text = skip_bom(text);
  if (text.empty()) throw input_error(origin, 0, "", "empty file");
  const FieldMap& fm = opts.fields;
  RecordCollector rc(origin, "jsonl", opts, shape);
  bool seen_first = false, with_weights = false, with_logits = false;
  std::vector<uint32_t> experts;
  std::vector<float> weights, logits;
  LineReader lines(text);
  std::string_view line;
  uint64_t lines_seen = 0;
  while (lines.next(line)) {
    const uint64_t ln = lines.line_number();
    if (line.find_first_not_of(" \t") == std::string_view::npos) continue;
    ++lines_seen;
    try {
      nlohmann::json obj;
      DuplicateKeyWatch watch;
      try {
        obj = nlohmann::json::parse(line.begin(), line.end(), watch.callback<nlohmann::json>());
      } catch (const nlohmann::json::parse_error& e) {
        throw input_error(origin, ln, "",
                          "invalid JSON at column " + std::to_string(e.byte) + ": " + e.what());
      } catch (const nlohmann::json::exception& e) {  // e.g. out_of_range.406: a number overflowing a double
        throw input_error(origin, ln, "", std::string("invalid JSON: ") + e.what());
      }
      // nlohmann keeps the last of two equal keys: a record with "experts" twice would lose one routing.
      if (watch.found())
        if (const auto d = find_duplicate_key(line))
          throw input_error(origin, ln, d->path,
                            "the key appears twice in the record, at columns " +
                                std::to_string(d->first + 1) + " and " + std::to_string(d->second + 1));
      if (!obj.is_object()) throw input_error(origin, ln, "", "a record must be a JSON object");
      if (!matches(obj, opts.where)) {
        rc.skip_filtered();
        warn_if_cut(lines, origin);
        continue;
      }
      require_keys(obj, fm, opts.token_from_order, origin, ln);
      RecordReader rr(origin, ln, shape.experts);
      const uint32_t seq = rr.uint_field(obj, fm.seq, "seq", 0);
      const Phase phase = rr.phase_field(obj, fm.phase);
      if (opts.token_from_order && obj.contains(fm.token))
        throw input_error(origin, ln, "token",
                          "--token-from order, but the record has a token key \"" + fm.token +
                              "\" (drop the flag to use it)");
      const uint32_t token = opts.token_from_order ? 0 : rr.uint_field(obj, fm.token, "token", 0);
      const uint32_t layer = rr.uint_field(obj, fm.layer, "layer", 0);
      rr.ids(obj, fm.experts, experts);
      const bool has_w = rr.floats(obj, fm.weights, "weights", weights);
      const bool has_l = rr.floats(obj, fm.logits, "logits", logits);
      if (!seen_first) {
        seen_first = true;
        with_weights = has_w;
        with_logits = has_l;
      }
      if (has_w != with_weights)
        throw input_error(origin, ln, "weights",
                          has_w ? "present on this record but not on the first one"
                                : "missing (the first record has weights)");
      if (has_l != with_logits)
        throw input_error(origin, ln, "logits",
                          has_l ? "present on this record but not on the first one"
                                : "missing (the first record has logits)");
      rc.add(seq, phase, token, layer, experts, weights, logits, ln);
    } catch (const Error& e) {
      throw note_if_cut(lines, e);
    }
    warn_if_cut(lines, origin);
  }
  if (lines_seen == 0) throw input_error(origin, 0, "", "no routing records (blank file)");
  return std::move(rc).finish(with_weights, with_logits, 0);
}

}  // namespace moesim::traces
