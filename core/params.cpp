#include "core/params.h"

#include <charconv>
#include <cmath>
#include <cstdio>

#include "base/error.h"

namespace moesim {
namespace {

// A bound as written in a range: whole numbers without a decimal point, others as %g.
std::string bound_text(double v) {
  char b[40];
  if (v == std::trunc(v) && std::fabs(v) < 1e15)
    std::snprintf(b, sizeof b, "%.0f", v);
  else
    std::snprintf(b, sizeof b, "%g", v);
  return b;
}

template <typename T>
bool parse_whole(const std::string& v, T& out) {
  auto [p, ec] = std::from_chars(v.data(), v.data() + v.size(), out);
  return ec == std::errc() && p == v.data() + v.size();
}

bool parse_real(const std::string& v, double& out) {
  auto [p, ec] = std::from_chars(v.data(), v.data() + v.size(), out);
  return ec == std::errc() && p == v.data() + v.size() && std::isfinite(out);
}

}  // namespace

bool ParamRange::contains(double v) const {
  if (lo_open ? !(v > lo) : !(v >= lo)) return false;
  return hi_open ? v < hi : v <= hi;
}

bool ParamRange::bounded() const {
  return std::isfinite(lo) || std::isfinite(hi);
}

std::string ParamRange::to_string() const {
  if (std::isfinite(lo) && std::isfinite(hi))
    return std::string(lo_open ? "(" : "[") + bound_text(lo) + ", " + bound_text(hi) + (hi_open ? ")" : "]");
  if (std::isfinite(lo)) return std::string(lo_open ? "> " : ">= ") + bound_text(lo);
  if (std::isfinite(hi)) return std::string(hi_open ? "< " : "<= ") + bound_text(hi);
  return "";
}

const char* param_type_name(ParamType t) {
  switch (t) {
    case ParamType::kText:
      return "text";
    case ParamType::kWhole:
      return "whole";
    case ParamType::kInt:
      return "int";
    case ParamType::kReal:
      return "real";
    case ParamType::kChoice:
      return "choice";
  }
  return "text";
}

std::string ParamDef::requirement() const {
  const std::string r = range.to_string();
  const std::string in = r.empty() ? "" : (r[0] == '[' || r[0] == '(' ? " in " : " ") + r;
  switch (type) {
    case ParamType::kText:
      return "text";
    case ParamType::kWhole:
      return "a whole number" + (in.empty() ? std::string(" in [0, 18446744073709551615]") : in);
    case ParamType::kInt:
      return "a whole number" +
             (in.empty() ? std::string(" in [-9223372036854775808, 9223372036854775807]") : in);
    case ParamType::kReal:
      return "a real" + in;
    case ParamType::kChoice: {
      std::string s = "one of ";
      for (size_t i = 0; i < choices.size(); ++i) s += (i ? ", " : "") + choices[i];
      return s;
    }
  }
  return "text";
}

void ParamDef::check(const std::string& value, const std::string& spec_text) const {
  bool ok = true;
  switch (type) {
    case ParamType::kText:
      break;
    case ParamType::kWhole: {
      uint64_t u = 0;
      ok = parse_whole(value, u) && range.contains(static_cast<double>(u));
      break;
    }
    case ParamType::kInt: {
      int64_t i = 0;
      ok = parse_whole(value, i) && range.contains(static_cast<double>(i));
      break;
    }
    case ParamType::kReal: {
      double d = 0;
      ok = parse_real(value, d) && range.contains(d);
      break;
    }
    case ParamType::kChoice:
      ok = false;
      for (const auto& c : choices) ok = ok || c == value;
      break;
  }
  if (!ok) throw UsageError(printable(spec_text) + ": " + key + " must be " + requirement());
}

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

std::string PolicySpec::text() const {
  std::string s = name;
  for (size_t i = 0; i < values.size(); ++i) s += (i ? "," : ":") + values[i].first + "=" + values[i].second;
  return s;
}

bool PolicySpec::sets(const std::string& key) const {
  for (const auto& kv : values)
    if (kv.first == key) return true;
  return false;
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
  // Defaults too: a declared default out of its own range would be the registration's mistake, caught the
  // first time the policy is built (tests/core/params_test.cpp builds every registered one).
  for (size_t i = 0; i < defs.size(); ++i) defs[i].check(values_[i].second, spec.text());
}

const std::string& Params::get(const std::string& key) const {
  for (const auto& [k, v] : values_)
    if (k == key) return v;
  throw Error("policy '" + printable(name_) + "': no parameter '" + key + "' declared");
}

double Params::get_double(const std::string& key) const {
  const std::string& v = get(key);
  double d = 0;
  if (!parse_real(v, d))
    throw UsageError("policy '" + printable(name_) + "': parameter '" + key +
                     "' must be a finite number, got '" + printable(v) + "'");
  return d;
}

int64_t Params::get_int(const std::string& key) const {
  const std::string& v = get(key);
  int64_t i = 0;
  if (!parse_whole(v, i))
    throw UsageError("policy '" + printable(name_) + "': parameter '" + key +
                     "' must be a whole number from -9223372036854775808 to 9223372036854775807, got '" +
                     printable(v) + "'");
  return i;
}

// Read as unsigned, so the whole range is taken (a seed of 2^64 - 1 is a seed, not "not an integer").
uint64_t Params::get_uint(const std::string& key) const {
  const std::string& v = get(key);
  uint64_t u = 0;
  if (!parse_whole(v, u))
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
