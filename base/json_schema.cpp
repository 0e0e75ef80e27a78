#include "base/json_schema.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "base/error.h"
#include "base/units.h"

namespace moesim {
namespace {
std::string g17(double d, const char* fmt = "%.17g") {
  char buf[40];
  std::snprintf(buf, sizeof buf, fmt, d);
  return buf;
}
}  // namespace

std::string JsonAt::child_path(std::string_view key) const {
  return path_.empty() ? std::string(key) : path_ + "." + std::string(key);
}

std::string JsonAt::child_path(size_t index) const {
  return path_ + "[" + std::to_string(index) + "]";
}

void JsonAt::fail(const std::string& message) const {
  throw Error(file_ + ": " + (path_.empty() ? "" : path_ + ": ") + message);
}

void JsonAt::expected(const std::string& what) const {
  fail("expected " + what + ", found " + describe_json(*j_));
}

JsonAt JsonAt::operator[](std::string_view key) const {
  object();
  if (!j_->contains(key)) {
    const std::string p = child_path(key);
    throw Error(file_ + ": " + p + ": missing field");
  }
  return JsonAt(j_->at(key), file_, child_path(key));
}

std::optional<JsonAt> JsonAt::find(std::string_view key) const {
  if (!has(key)) return std::nullopt;
  return JsonAt(j_->at(key), file_, child_path(key));
}

JsonAt JsonAt::operator[](size_t index) const {
  array();
  if (index >= j_->size())
    fail("expected an element " + std::to_string(index) + ", found " + describe_json(*j_));
  return JsonAt((*j_)[index], file_, child_path(index));
}

const JsonAt& JsonAt::object() const {
  if (!j_->is_object()) expected("an object");
  return *this;
}

const JsonAt& JsonAt::array() const {
  if (!j_->is_array()) expected("an array");
  return *this;
}

size_t JsonAt::size() const {
  return array().j_->size();
}

double JsonAt::number() const {
  // Infinities and NaN cannot come from JSON text, but a document built in code may hold them.
  if (!j_->is_number() || !std::isfinite(j_->get<double>())) expected("a finite number");
  return j_->get<double>();
}

double JsonAt::number(double lo, double hi) const {
  const double d = number();
  if (d < lo || d > hi) expected("a number in [" + g17(lo, "%g") + ", " + g17(hi, "%g") + "]");
  return d;
}

double JsonAt::positive() const {
  const double d = number();
  if (!(d > 0)) expected("a positive number");
  return d;
}

uint64_t JsonAt::integer(uint64_t lo, uint64_t hi) const {
  const std::string range = hi == std::numeric_limits<uint64_t>::max()
                                ? "an integer >= " + std::to_string(lo)
                                : "an integer in [" + std::to_string(lo) + ", " + std::to_string(hi) + "]";
  uint64_t v = 0;
  if (j_->is_number_unsigned()) {
    v = j_->get<uint64_t>();
  } else if (j_->is_number_integer()) {
    // Signed: parsed text gives non-negative integers as unsigned, but a document built in code need not.
    if (j_->get<int64_t>() < 0) expected(range);
    v = static_cast<uint64_t>(j_->get<int64_t>());
  } else if (j_->is_number_float()) {
    // 4096.0 is an integer written as a float; 2^64 and beyond are not representable.
    const double d = j_->get<double>();
    if (!(d >= 0 && d < 18446744073709551616.0) || d != std::floor(d)) expected(range);
    v = static_cast<uint64_t>(d);
  } else {
    expected(range);
  }
  if (v < lo || v > hi) expected(range);
  return v;
}

std::string JsonAt::string() const {
  if (!j_->is_string()) expected("a string");
  return j_->get<std::string>();
}

std::string JsonAt::string_of(std::initializer_list<std::string_view> allowed) const {
  std::string list;
  for (auto a : allowed) list += std::string(list.empty() ? "" : " or ") + "\"" + std::string(a) + "\"";
  if (!j_->is_string()) expected(list);
  const std::string s = j_->get<std::string>();
  if (std::find(allowed.begin(), allowed.end(), s) == allowed.end()) expected(list);
  return s;
}

bool JsonAt::boolean() const {
  if (!j_->is_boolean()) expected("true or false");
  return j_->get<bool>();
}

void JsonAt::only_keys(const std::vector<std::string_view>& known) const {
  object();
  for (const auto& [k, v] : j_->items()) {
    if (std::find(known.begin(), known.end(), k) != known.end()) continue;
    std::string msg = file_ + ": " + child_path(k) + ": unknown field";
    if (auto near = closest_name(k, known))
      msg += "; did you mean " + child_path(*near) + "?";
    else {
      std::string list;
      for (auto n : known) list += std::string(list.empty() ? "" : ", ") + std::string(n);
      msg += " (known: " + list + ")";
    }
    throw Error(msg);
  }
}

std::string describe_json(const Json& j) {
  switch (j.type()) {
    case Json::value_t::object:
      return "an object";
    case Json::value_t::array:
      return "an array of " + std::to_string(j.size()) + " element" + (j.size() == 1 ? "" : "s");
    case Json::value_t::string: {
      std::string s = j.get<std::string>();
      if (s.size() > 60) s = s.substr(0, 57) + "...";
      return "the string " + Json(s).dump();
    }
    case Json::value_t::boolean:
      return j.get<bool>() ? "true" : "false";
    case Json::value_t::null:
      return "null";
    case Json::value_t::number_integer:
    case Json::value_t::number_unsigned:
      return "the number " + j.dump();
    case Json::value_t::number_float:
      return "the number " + format_number(j.get<double>());
    default:
      return "a value of another kind";
  }
}

size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t k = 0; k <= b.size(); ++k) row[k] = k;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diag = row[0];
    row[0] = i;
    for (size_t k = 1; k <= b.size(); ++k) {
      const size_t up = row[k];
      row[k] = std::min({row[k] + 1, row[k - 1] + 1, diag + (a[i - 1] == b[k - 1] ? 0 : 1)});
      diag = up;
    }
  }
  return row[b.size()];
}

std::optional<std::string> closest_name(std::string_view name,
                                        const std::vector<std::string_view>& candidates) {
  // A third of the name's length (at least 2) separates a typo from a different word.
  const size_t limit = std::max<size_t>(2, name.size() / 3);
  std::optional<std::string> best;
  size_t best_d = limit + 1;
  for (auto c : candidates) {
    const size_t d = edit_distance(name, c);
    if (d < best_d) {
      best_d = d;
      best = std::string(c);
    }
  }
  return best;
}

}  // namespace moesim
