#include "traces/csv_util.h"

#include <charconv>
#include <set>

#include "core/error.h"

namespace moesim::traces {

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

std::optional<uint64_t> parse_uint(std::string_view s) {
  if (s.empty() || s[0] < '0' || s[0] > '9') return std::nullopt;
  uint64_t v = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || p != s.data() + s.size()) return std::nullopt;
  return v;
}

std::optional<int64_t> parse_int(std::string_view s) {
  if (s.empty()) return std::nullopt;
  int64_t v = 0;
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

std::string sanitize_utf8(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  size_t i = 0;
  while (i < s.size()) {
    const auto c = static_cast<unsigned char>(s[i]);
    size_t n = c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xE ? 3 : (c >> 3) == 0x1E ? 4 : 0;
    bool ok = n > 0 && i + n <= s.size();
    for (size_t j = 1; ok && j < n; ++j) ok = (static_cast<unsigned char>(s[i + j]) >> 6) == 0x2;
    if (ok && n > 1) {  // reject overlong forms, surrogates and code points above U+10FFFF
      uint32_t cp = c & (0xFF >> (n + 1));
      for (size_t j = 1; j < n; ++j) cp = (cp << 6) | (static_cast<unsigned char>(s[i + j]) & 0x3F);
      const uint32_t min[] = {0, 0, 0x80, 0x800, 0x10000};
      ok = cp >= min[n] && cp <= 0x10FFFF && (cp < 0xD800 || cp > 0xDFFF);
    }
    if (ok) {
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

}  // namespace moesim::traces
