#include "base/error.h"

namespace moesim {

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
