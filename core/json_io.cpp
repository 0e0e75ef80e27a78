#include "core/json_io.h"

#include "core/atomic_file.h"
#include "core/error.h"

namespace moesim {

Json parse_json_text(const std::string& text, const std::string& origin) {
  try {
    return Json::parse(text);
  } catch (const nlohmann::json::parse_error& e) {
    throw binary_input_error(origin, e.byte, "JSON", e.what());
  }
}

Json load_json_file(const std::string& path) { return parse_json_text(read_file(path), path); }

void write_json_file(const std::string& path, const Json& j) { write_file_atomic(path, j.dump(2) + "\n"); }

}  // namespace moesim
