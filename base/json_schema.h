// Schema checks for JSON inputs (hardware profiles, model presets, sweep specs, buddy profiles, indexes).
// A JsonAt is a value together with the file it came from and its path from the document's root
// ("ssd.read_bandwidth.value", "points[3].budget"). Its accessors check type and range and throw a
// moesim::Error "FILE: PATH: expected WHAT, found WHAT" (FILE alone at the root), so that every reader
// reports a bad input the same way and no nlohmann exception reaches the user. Unknown object keys are errors
// that name the closest known key, because an ignored typo is a setting that silently never applies.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/json_io.h"

namespace moesim {

class JsonAt {
 public:
  JsonAt(const Json& j, std::string file) : j_(&j), file_(std::move(file)) {}

  const Json& json() const { return *j_; }
  const std::string& file() const { return file_; }
  const std::string& path() const { return path_; }  // "" at the root
  // The path of a member or element of this value ("ssd" + "read_bandwidth" -> "ssd.read_bandwidth").
  std::string child_path(std::string_view key) const;
  std::string child_path(size_t index) const;

  [[noreturn]] void fail(const std::string& message) const;  // "FILE: PATH: message"
  [[noreturn]] void expected(const std::string& what) const;  // "... expected WHAT, found <this value>"

  bool has(std::string_view key) const { return j_->is_object() && j_->contains(key); }
  // A required member: the value must be an object holding `key`.
  JsonAt operator[](std::string_view key) const;
  std::optional<JsonAt> find(std::string_view key) const;
  JsonAt operator[](size_t index) const;  // an element: the value must be an array with it

  const JsonAt& object() const;
  const JsonAt& array() const;
  size_t size() const;  // of an array (checked)

  double number() const;  // any finite number
  double number(double lo, double hi) const;
  double positive() const;
  uint64_t integer(uint64_t lo = 0, uint64_t hi = std::numeric_limits<uint64_t>::max()) const;
  std::string string() const;
  std::string string_of(std::initializer_list<std::string_view> allowed) const;
  bool boolean() const;

  // Every key of this object must be one of `known`; the error names the closest known key.
  void only_keys(const std::vector<std::string_view>& known) const;

 private:
  JsonAt(const Json& j, std::string file, std::string path)
      : j_(&j), file_(std::move(file)), path_(std::move(path)) {}
  const Json* j_;
  std::string file_;
  std::string path_;
};

// "an object", "an array of 3 elements", "the string \"abc\"", "the number -1", "true", "null".
std::string describe_json(const Json& j);
// Levenshtein distance (insertions, deletions, substitutions).
size_t edit_distance(std::string_view a, std::string_view b);
// The candidate nearest to `name` when it is near enough to be a likely typo; nullopt otherwise.
std::optional<std::string> closest_name(std::string_view name, const std::vector<std::string_view>& candidates);

}  // namespace moesim
