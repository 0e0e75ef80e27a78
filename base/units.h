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

std::string format_bytes(uint64_t bytes);     // "3.00 GiB", "512 B"
std::string format_seconds(double seconds);   // "2.50 ms", "12.0 us", "1.20 s"
std::string format_rate(double bytes_per_s);  // "3.50 GB/s"
// The physical range of a bandwidth and of a latency (a link's, a device's), far from any real device at both
// ends: a bandwidth from 1 kbit/s (125 B/s; an acoustic modem's) to 1 Pbit/s (1.25e14 B/s; a thousand times a
// GPU's memory), a latency from 0 to 60 s. Outside it a value is a typo or a unit slip, and would make a
// simulated time infinite or hundreds of digits long. Each check throws moesim::Error stating the range.
inline constexpr double kMinBandwidth = 125, kMaxBandwidth = 1.25e14, kMaxLatency = 60;
void check_bandwidth_range(double bytes_per_s);
void check_latency_range(double seconds);

// A number as a message quotes it: the shortest text that reads back as the same double ("0.3253", "-0.5",
// "1e+300", "nan", "inf"), never the hundreds of digits "%f" or std::to_string give a huge value.
std::string format_number(double v);

}  // namespace moesim
