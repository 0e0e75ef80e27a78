// Units with parsing and formatting. Sizes are bytes (uint64_t), times are seconds (double), rates are
// bytes per second (double). Parsers accept a number followed by an optional unit, no space needed:
//   bytes:   "4096", "4KiB", "3000MiB", "8GiB", "1.5GB", "2TB" (KB/MB/GB/TB are powers of 1000,
//            KiB/MiB/GiB/TiB powers of 1024; "B" optional)
//   seconds: "2.5ms", "10us", "80ns", "1.2s", "3min"; a bare number is seconds
//   rates:   "3.5GB/s", "204.8GB/s", "800MiB/s"
// Each throws moesim::Error naming the text and what was expected.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace moesim {

uint64_t parse_bytes(std::string_view text);
double parse_seconds(std::string_view text);
double parse_rate(std::string_view text);  // bytes per second

std::string format_bytes(uint64_t bytes);      // "3.00 GiB", "512 B"
std::string format_seconds(double seconds);    // "2.50 ms", "12.0 us", "1.20 s"
std::string format_rate(double bytes_per_s);   // "3.50 GB/s"

}  // namespace moesim
