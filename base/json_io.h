// JSON I/O (nlohmann_json). Parse errors name the file and the byte offset.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

#include "base/error.h"

namespace moesim {

using Json = nlohmann::ordered_json;  // keeps key order, so outputs read in the order they were written

Json load_json_file(const std::string& path);
Json parse_json_text(const std::string& text, const std::string& origin);
// Pretty-printed (indent 2) with a trailing newline, written atomically ("-" = stdout).
void write_json_file(const std::string& path, const Json& j);

// part / whole as a JSON number, or null when whole is 0: a rate of nothing measured is unknown, never 0.
inline Json fraction_or_null(uint64_t part, uint64_t whole) {
  return whole ? Json(static_cast<double>(part) / static_cast<double>(whole)) : Json(nullptr);
}

// Typed field access with errors that name the origin and the key: require<T>(j, "experts", "m.json").
template <typename T>
T require(const Json& j, const char* key, const std::string& origin) {
  if (!j.is_object() || !j.contains(key))
    throw Error(origin + ": missing field '" + key + "'");
  try {
    return j.at(key).get<T>();
  } catch (const nlohmann::json::exception& e) {
    throw Error(origin + ": field '" + key + "': " + e.what());
  }
}

}  // namespace moesim
