// JSON I/O (nlohmann_json). Parse errors name the file and the LINE:COLUMN. An object with a key twice is an
// error naming both keys' LINE:COLUMN and the JSON path, everywhere JSON is read: nlohmann would keep the
// last value and drop the first without a word, so the file would not mean what one of its lines says.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

#include "base/error.h"

namespace moesim {

using Json = nlohmann::ordered_json;  // keeps key order, so outputs read in the order they were written

Json load_json_file(const std::string& path);
// `first_line` is the line number of the text's first line (a JSONL record passes its own line).
Json parse_json_text(const std::string& text, const std::string& origin, uint64_t first_line = 1);

// A key that appears twice in one object: the member's JSON path ("servers[1].hw") and the 0-based byte
// offsets where the two keys' opening quotes are.
struct DuplicateKey {
  std::string path;
  size_t first = 0, second = 0;
};
// The first duplicate key of a JSON text in document order, or nullopt. The text must be valid JSON (the
// scan assumes it); parse it first.
std::optional<DuplicateKey> find_duplicate_key(std::string_view text);
// "LINE:COLUMN" (1-based; the text's first line is `first_line`) of a byte offset.
std::string json_line_column(std::string_view text, size_t offset, uint64_t first_line = 1);
// "FILE: PATH: the key appears twice in one object, at L:C and L:C (...)": the message of a duplicate key.
std::string duplicate_key_message(std::string_view text, const DuplicateKey& d, const std::string& origin,
                                  uint64_t first_line = 1);

// A parser callback for nlohmann's parse (any basic_json) that notes whether some object has a key twice,
// without the cost of a second pass over valid files: parse with watch.callback(), then if watch.found(),
// find_duplicate_key(text) says where.
class DuplicateKeyWatch {
 public:
  template <typename J>
  typename J::parser_callback_t callback() {
    return [this](int, nlohmann::detail::parse_event_t ev, J& parsed) {
      using E = nlohmann::detail::parse_event_t;
      if (ev == E::object_start)
        open();
      else if (ev == E::object_end)
        close();
      else if (ev == E::key)
        key(parsed.template get_ref<const std::string&>());
      return true;
    };
  }
  bool found() const { return found_; }

 private:
  // The keys of one object being read: a list while short (most objects), a hash set once long.
  struct Keys {
    std::vector<std::string> few;
    std::unordered_set<std::string> many;
  };
  void open();
  void close() { --depth_; }
  void key(const std::string& k);
  std::vector<Keys> open_;  // open_[0..depth_): the objects being read, innermost last (frames are reused)
  size_t depth_ = 0;
  bool found_ = false;
};
// Pretty-printed (indent 2) with a trailing newline, written atomically ("-" = stdout).
void write_json_file(const std::string& path, const Json& j);

// part / whole as a JSON number, or null when whole is 0: a rate of nothing measured is unknown, never 0.
inline Json fraction_or_null(uint64_t part, uint64_t whole) {
  return whole ? Json(static_cast<double>(part) / static_cast<double>(whole)) : Json(nullptr);
}

// Typed field access with errors that name the origin and the key: require<T>(j, "experts", "m.json").
template <typename T>
T require(const Json& j, const char* key, const std::string& origin) {
  if (!j.is_object() || !j.contains(key)) throw Error(origin + ": missing field '" + key + "'");
  try {
    return j.at(key).get<T>();
  } catch (const nlohmann::json::exception& e) {
    throw Error(origin + ": field '" + key + "': " + e.what());
  }
}

}  // namespace moesim
