// Policy parameters (docs/architecture.md): a policy is named "name" or "name:key=value,key=value",
// e.g. "cache-prior:lambda=0.5,J=2". Each policy declares its parameters (ParamDef: key, default,
// description, type and range); Params validates a spec against them and renders the canonical name with
// every parameter, which every result row carries. A spec is parsed once (PolicySpec) and the typed value
// travels to where it is used. A bad spec, an unknown or repeated key and a value of the wrong type or out of
// its range are moesim::UsageError (exit 2): they are mistakes on the command line or in a sweep spec, not
// run-time failures. Every such value error has one form, naming the spec as written, the parameter and what
// it must be: "lfu:history=2: history must be a whole number in [0, 1]".
#pragma once

#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace moesim {

// What a parameter's value is. kText is free text (a path, a nested spec, a list); the others are checked
// before the factory runs, so a factory reads a value already known to parse and to lie in its range.
enum class ParamType {
  kText,
  kWhole,   // unsigned 64-bit integer (Params::get_uint)
  kInt,     // signed 64-bit integer (Params::get_int)
  kReal,    // finite double (Params::get_double)
  kChoice,  // one of ParamDef::choices (Params::get)
};

// The values a numeric parameter may take: lo..hi, each end closed or open; an infinite end is no bound.
struct ParamRange {
  static constexpr double kInf = std::numeric_limits<double>::infinity();
  double lo = -std::numeric_limits<double>::infinity();
  double hi = std::numeric_limits<double>::infinity();
  bool lo_open = false, hi_open = false;

  static ParamRange closed(double lo, double hi) { return {lo, hi, false, false}; }      // [lo, hi]
  static ParamRange closed_open(double lo, double hi) { return {lo, hi, false, true}; }  // [lo, hi)
  static ParamRange open_closed(double lo, double hi) { return {lo, hi, true, false}; }  // (lo, hi]
  static ParamRange open(double lo, double hi) { return {lo, hi, true, true}; }          // (lo, hi)
  static ParamRange at_least(double lo) { return {lo, kInf, false, false}; }             // >= lo
  static ParamRange above(double lo) { return {lo, kInf, true, false}; }                 // > lo
  static ParamRange at_most(double hi) { return {-kInf, hi, false, false}; }             // <= hi

  bool contains(double v) const;
  bool bounded() const;
  // "[0, 1]", "(0, 1)", ">= 1", "<= 100"; "" when unbounded.
  std::string to_string() const;
};

struct ParamDef {
  std::string key;
  std::string default_value;
  std::string description;
  ParamType type = ParamType::kText;
  ParamRange range{};                  // numeric types only
  std::vector<std::string> choices{};  // kChoice only

  // What a value must be, for messages and `moesim policies`: "a real in [0, 1]", "one of fused, thread".
  std::string requirement() const;
  // Throws moesim::UsageError "<spec_text>: <key> must be <requirement>" unless `value` is one.
  void check(const std::string& value, const std::string& spec_text) const;
};

// The name of a type as `moesim policies --json` shows it: "text", "whole", "int", "real", "choice".
const char* param_type_name(ParamType t);

struct PolicySpec {
  std::string name;
  std::vector<std::pair<std::string, std::string>> values;  // as written, in order
  static PolicySpec parse(std::string_view text);           // throws moesim::UsageError on bad syntax
  // The spec as written: "name" or "name:k=v,k=v" with the values in their order.
  std::string text() const;
  // Whether the spec sets `key`.
  bool sets(const std::string& key) const;
  bool operator==(const PolicySpec&) const = default;
};

class Params {
 public:
  Params() = default;
  // Throws on an unknown or repeated key and on a value of the wrong type or out of its range.
  Params(const PolicySpec& spec, const std::vector<ParamDef>& defs);

  const std::string& get(const std::string& key) const;  // throws if the key is not declared
  double get_double(const std::string& key) const;       // throws naming policy, key and value
  int64_t get_int(const std::string& key) const;
  uint64_t get_uint(const std::string& key) const;
  // "name:k1=v1,k2=v2" with every declared parameter (defaults filled in), in declaration order.
  std::string canonical() const;
  const std::string& policy_name() const { return name_; }

 private:
  std::string name_;
  std::vector<std::pair<std::string, std::string>> values_;  // declaration order
};

}  // namespace moesim
