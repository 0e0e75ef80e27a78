#include "base/error.h"

namespace moesim {

std::string printable(std::string_view text) {
  static const char* const hex = "0123456789abcdef";
  std::string out;
  out.reserve(text.size());
  for (const char ch : text) {
    const auto c = static_cast<unsigned char>(ch);
    if (c == '\n') {
      out += "\\n";
    } else if (c == '\t') {
      out += "\\t";
    } else if (c < 0x20 || c == 0x7f) {
      out += "\\x";
      out += hex[c >> 4];
      out += hex[c & 15];
    } else {
      out += ch;
    }
  }
  return out;
}

Error input_error(std::string_view file, uint64_t line, std::string_view field, std::string_view message) {
  std::string s(file);
  if (line > 0) s += ":" + std::to_string(line);
  s += ": ";
  if (!field.empty()) {
    s += "field '";
    s += field;
    s += "': ";
  }
  s += message;
  return Error(s);
}

Error binary_input_error(std::string_view file, uint64_t offset, std::string_view field,
                         std::string_view message) {
  std::string s(file);
  s += ": at byte " + std::to_string(offset) + ": ";
  if (!field.empty()) {
    s += field;
    s += ": ";
  }
  s += message;
  return Error(s);
}

}  // namespace moesim
