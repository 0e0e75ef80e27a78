// A raw BF16 file: no header, just rows x cols little-endian BF16 values (`--raw-shape 4096x14336`), as
// written by `tensor.view(torch.int16).numpy().tofile()`. The file size must be exactly prod(shape) * 2.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace moesim::exec {

// Parses "4096x14336" (or "4096X14336", any number of dimensions >= 1, each > 0); throws moesim::Error.
std::vector<uint64_t> parse_raw_shape(const std::string& text);
std::string format_shape(const std::vector<uint64_t>& shape);  // "4096x14336"; "scalar" when empty

// The name a raw file's single tensor carries in stores and reports.
inline constexpr const char* kRawTensorName = "weight";

}  // namespace moesim::exec
