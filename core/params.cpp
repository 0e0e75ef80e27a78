#include "core/params.h"

#include <charconv>
#include <cmath>

#include "base/error.h"

namespace moesim {

PolicySpec PolicySpec::parse(std::string_view text) {
  PolicySpec s;
  auto colon = text.find(':');
  s.name = std::string(text.substr(0, colon));
  if (s.name.empty()) throw UsageError("policy '" + printable(text) + "': empty policy name");
  if (colon == std::string_view::npos) return s;
  std::string_view rest = text.substr(colon + 1);
  while (!rest.empty()) {
    auto comma = rest.find(',');
    std::string_view kv = rest.substr(0, comma);
    auto eq = kv.find('=');
    if (eq == std::string_view::npos || eq == 0 || eq + 1 == kv.size())
      throw UsageError("policy '" + printable(text) + "': expected key=value, got '" + printable(kv) + "'");
    s.values.emplace_back(std::string(kv.substr(0, eq)), std::string(kv.substr(eq + 1)));
    if (comma == std::string_view::npos) break;
    rest = rest.substr(comma + 1);
  }
  return s;
}

Params::Params(const PolicySpec& spec, const std::vector<ParamDef>& defs) : name_(spec.name) {
  for (const auto& d : defs) values_.emplace_back(d.key, d.default_value);
  std::vector<bool> seen(defs.size(), false);
  for (const auto& [k, v] : spec.values) {
    size_t i = 0;
    while (i < defs.size() && defs[i].key != k) ++i;
    if (i == defs.size()) {
      std::string known;
      for (const auto& d : defs) known += (known.empty() ? "" : ", ") + d.key;
      throw UsageError("policy '" + printable(spec.name) + "': unknown parameter '" + printable(k) +
                       "' (known: " + (known.empty() ? "none" : known) + ")");
    }
    if (seen[i]) throw UsageError("policy '" + printable(spec.name) + "': parameter '" + k + "' given twice");
    seen[i] = true;
    values_[i].second = v;
  }
}

const std::string& Params::get(const std::string& key) const {
  for (const auto& [k, v] : values_)
    if (k == key) return v;
  throw Error("policy '" + printable(name_) + "': no parameter '" + key + "' declared");
}

double Params::get_double(const std::string& key) const {
  const std::string& v = get(key);
  double d = 0;
  auto [p, ec] = std::from_chars(v.data(), v.data() + v.size(), d);
  if (ec != std::errc() || p != v.data() + v.size() || !std::isfinite(d))
    throw UsageError("policy '" + printable(name_) + "': parameter '" + key +
                     "' must be a finite number, got '" + printable(v) + "'");
  return d;
}

int64_t Params::get_int(const std::string& key) const {
  const std::string& v = get(key);
  int64_t i = 0;
  auto [p, ec] = std::from_chars(v.data(), v.data() + v.size(), i);
  if (ec != std::errc() || p != v.data() + v.size())
    throw UsageError("policy '" + printable(name_) + "': parameter '" + key +
                     "' must be a whole number from -9223372036854775808 to 9223372036854775807, got '" +
                     printable(v) + "'");
  return i;
}

// Read as unsigned, so the whole range is taken (a seed of 2^64 - 1 is a seed, not "not an integer").
uint64_t Params::get_uint(const std::string& key) const {
  const std::string& v = get(key);
  uint64_t u = 0;
  auto [p, ec] = std::from_chars(v.data(), v.data() + v.size(), u);
  if (ec != std::errc() || p != v.data() + v.size())
    throw UsageError("policy '" + printable(name_) + "': parameter '" + key +
                     "' must be a whole number from 0 to 18446744073709551615, got '" + printable(v) + "'");
  return u;
}

std::string Params::canonical() const {
  std::string s = name_;
  for (size_t i = 0; i < values_.size(); ++i)
    s += (i ? "," : ":") + values_[i].first + "=" + values_[i].second;
  return s;
}

}  // namespace moesim
