#include "exec/raw_weights.h"

#include <charconv>

#include "base/error.h"

namespace moesim::exec {

std::vector<uint64_t> parse_raw_shape(const std::string& text) {
  std::vector<uint64_t> shape;
  size_t pos = 0;
  while (true) {
    size_t next = text.find_first_of("xX", pos);
    const std::string part = text.substr(pos, next == std::string::npos ? std::string::npos : next - pos);
    uint64_t v = 0;
    auto [p, ec] = std::from_chars(part.data(), part.data() + part.size(), v);
    if (part.empty() || ec != std::errc() || p != part.data() + part.size() || v == 0)
      throw Error("--raw-shape '" + text +
                  "': expected positive dimensions separated by 'x', e.g. 4096x14336");
    if (!shape.empty()) {
      uint64_t prod = 1;
      for (auto d : shape) prod *= d;
      if (prod > UINT64_MAX / 4 / v) throw Error("--raw-shape '" + text + "': too many elements");
    }
    shape.push_back(v);
    if (next == std::string::npos) break;
    pos = next + 1;
  }
  return shape;
}

std::string format_shape(const std::vector<uint64_t>& shape) {
  if (shape.empty()) return "scalar";
  std::string s;
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? "x" : "") + std::to_string(shape[i]);
  return s;
}

}  // namespace moesim::exec
