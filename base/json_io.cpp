#include "base/json_io.h"

#include <algorithm>
#include <string_view>

#include "base/atomic_file.h"
#include "base/error.h"

namespace moesim {
namespace {

// "LINE:COLUMN" (1-based) of a byte offset, so an editor can jump to the fault.
std::string line_column(std::string_view text, size_t offset, uint64_t first_line) {
  offset = std::min(offset, text.size());
  uint64_t line = first_line, col = 1;
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

// The string a quoted JSON key stands for ("\u0061" is "a"), as nlohmann compares keys.
std::string decoded_key(std::string_view quoted) {
  try {
    return nlohmann::json::parse(quoted).get<std::string>();
  } catch (const nlohmann::json::exception&) {
    return std::string(quoted);
  }
}

}  // namespace

std::string json_line_column(std::string_view text, size_t offset, uint64_t first_line) {
  return line_column(text, offset, first_line);
}

void DuplicateKeyWatch::open() {
  if (depth_ == open_.size()) open_.emplace_back();
  open_[depth_].few.clear();
  open_[depth_].many.clear();
  ++depth_;
}

void DuplicateKeyWatch::key(const std::string& k) {
  if (depth_ == 0) return;
  Keys& o = open_[depth_ - 1];
  if (!o.many.empty()) {
    found_ |= !o.many.insert(k).second;
    return;
  }
  if (std::find(o.few.begin(), o.few.end(), k) != o.few.end()) {
    found_ = true;
    return;
  }
  o.few.push_back(k);
  // Past a few keys a linear search per key would make a wide object quadratic.
  if (o.few.size() > 16) {
    o.many.insert(o.few.begin(), o.few.end());
    o.few.clear();
  }
}

std::optional<DuplicateKey> find_duplicate_key(std::string_view t) {
  struct Frame {
    bool object;
    std::string path;
    size_t index = 0;  // an array's current element
    std::string key;   // an object's current member
    std::vector<std::pair<std::string, size_t>> keys;
  };
  std::vector<Frame> open;
  bool expect_key = false;
  auto member = [](const std::string& path, const std::string& key) {
    return path.empty() ? key : path + "." + key;
  };
  auto value_path = [&]() -> std::string {
    if (open.empty()) return "";
    const Frame& f = open.back();
    return f.object ? member(f.path, f.key) : f.path + "[" + std::to_string(f.index) + "]";
  };
  size_t i = 0;
  while (i < t.size()) {
    const char c = t[i];
    if (c == '"') {
      size_t end = i + 1;
      while (end < t.size() && t[end] != '"') end += t[end] == '\\' ? 2 : 1;
      end = std::min(end + 1, t.size());
      if (expect_key && !open.empty() && open.back().object) {
        Frame& f = open.back();
        std::string k = decoded_key(t.substr(i, end - i));
        for (const auto& [seen, at] : f.keys)
          if (seen == k) return DuplicateKey{member(f.path, k), at, i};
        f.keys.emplace_back(k, i);
        f.key = std::move(k);
        expect_key = false;
      }
      i = end;
      continue;
    }
    if (c == '{' || c == '[') {
      open.push_back(Frame{c == '{', value_path(), 0, "", {}});
      expect_key = c == '{';
    } else if (c == '}' || c == ']') {
      if (!open.empty()) open.pop_back();
      expect_key = false;
    } else if (c == ',' && !open.empty()) {
      if (open.back().object)
        expect_key = true;
      else
        ++open.back().index;
    }
    ++i;
  }
  return std::nullopt;
}

std::string duplicate_key_message(std::string_view text, const DuplicateKey& d, const std::string& origin,
                                  uint64_t first_line) {
  return origin + ": " + d.path + ": the key appears twice in one object, at " +
         line_column(text, d.first, first_line) + " and " + line_column(text, d.second, first_line) +
         " (give it once: only one of the two values would be used)";
}

Json parse_json_text(const std::string& text, const std::string& origin, uint64_t first_line) {
  auto line_column = [&](std::string_view t, size_t at) { return json_line_column(t, at, first_line); };
  try {
    DuplicateKeyWatch watch;
    Json j = Json::parse(text, watch.callback<Json>());
    if (watch.found())
      if (const auto d = find_duplicate_key(text))
        throw Error(duplicate_key_message(text, *d, origin, first_line));
    return j;
  } catch (const nlohmann::json::parse_error& e) {
    // e.byte is 1-based: the byte after the last one read.
    const size_t at = e.byte > 0 ? static_cast<size_t>(e.byte - 1) : 0;
    throw Error(origin + ": not valid JSON at " + line_column(text, at) + ": " + reason(e.what()));
  } catch (const nlohmann::json::out_of_range& e) {
    // A number beyond a double's range (1e400): nlohmann names the number but not where it is, so find its
    // text.
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

Json load_json_file(const std::string& path) {
  return parse_json_text(read_file(path), path);
}

void write_json_file(const std::string& path, const Json& j) {
  write_file_atomic(path, j.dump(2) + "\n");
}

}  // namespace moesim
