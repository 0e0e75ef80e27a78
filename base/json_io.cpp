#include "base/json_io.h"

#include <string_view>

#include "base/atomic_file.h"
#include "base/error.h"

namespace moesim {
namespace {

// "LINE:COLUMN" (1-based) of a byte offset, so an editor can jump to the fault.
std::string line_column(std::string_view text, size_t offset) {
  offset = std::min(offset, text.size());
  size_t line = 1, col = 1;
  for (size_t i = 0; i < offset; ++i) {
    if (text[i] == '\n') {
      ++line;
      col = 1;
    } else {
      ++col;
    }
  }
  return std::to_string(line) + ":" + std::to_string(col);
}

// nlohmann's message without its "[json.exception.parse_error.101] parse error at line 1, column 2: " prefix:
// the location is given once, in our form.
std::string reason(const std::string& what) {
  std::string s = what;
  if (s.starts_with("[json.exception.")) {
    const size_t close = s.find("] ");
    if (close != std::string::npos) s = s.substr(close + 2);
  }
  if (const size_t colon = s.find(": "); s.starts_with("parse error") && colon != std::string::npos)
    s = s.substr(colon + 2);
  return s;
}

}  // namespace

Json parse_json_text(const std::string& text, const std::string& origin) {
  try {
    return Json::parse(text);
  } catch (const nlohmann::json::parse_error& e) {
    // e.byte is 1-based: the byte after the last one read.
    const size_t at = e.byte > 0 ? static_cast<size_t>(e.byte - 1) : 0;
    throw Error(origin + ": not valid JSON at " + line_column(text, at) + ": " + reason(e.what()));
  } catch (const nlohmann::json::out_of_range& e) {
    // A number beyond a double's range (1e400): nlohmann names the number but not where it is, so find its text.
    std::string where = origin;
    const std::string what = e.what();
    const size_t q = what.find('\'');
    const size_t q2 = q == std::string::npos ? q : what.find('\'', q + 1);
    if (q2 != std::string::npos) {
      const size_t pos = text.find(what.substr(q + 1, q2 - q - 1));
      if (pos != std::string::npos) where += ":" + line_column(text, pos);
      throw Error(where + ": the number " + what.substr(q + 1, q2 - q - 1) +
                  " is out of range (a JSON number here must fit a double, at most about 1.8e308)");
    }
    throw Error(where + ": not valid JSON: " + reason(what));
  } catch (const nlohmann::json::exception& e) {
    throw Error(origin + ": not valid JSON: " + reason(e.what()));
  }
}

Json load_json_file(const std::string& path) { return parse_json_text(read_file(path), path); }

void write_json_file(const std::string& path, const Json& j) { write_file_atomic(path, j.dump(2) + "\n"); }

}  // namespace moesim
