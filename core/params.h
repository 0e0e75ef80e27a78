// Policy parameters (docs/architecture.md): a policy is named "name" or "name:key=value,key=value",
// e.g. "cache-prior:lambda=0.5,J=2". Each policy declares its parameters (ParamDef: key, default,
// description); Params validates a spec against them (an unknown key is an error that lists the known
// ones) and renders the canonical name with every parameter, which every result row carries. A bad spec,
// an unknown or repeated key and a value of the wrong type are moesim::UsageError (exit 2): they are
// mistakes on the command line or in a sweep spec, not run-time failures.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace moesim {

struct ParamDef {
  std::string key;
  std::string default_value;
  std::string description;
};

struct PolicySpec {
  std::string name;
  std::vector<std::pair<std::string, std::string>> values;  // as written, in order
  static PolicySpec parse(std::string_view text);           // throws moesim::UsageError on bad syntax
};

class Params {
 public:
  Params() = default;
  Params(const PolicySpec& spec, const std::vector<ParamDef>& defs);  // throws on unknown/duplicate keys

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
