#include "base/units.h"

#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <limits>

#include "base/error.h"

namespace moesim {
namespace {

struct NumberAndUnit {
  double value;
  std::string_view unit;
};

NumberAndUnit split(std::string_view text, std::string_view what) {
  auto trim = [](std::string_view s) {
    while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
    while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
    return s;
  };
  std::string_view s = trim(text);
  double v = 0;
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || ptr == s.data())
    throw Error("cannot parse '" + std::string(text) + "' as " + std::string(what) + ": no number");
  if (!std::isfinite(v) || v < 0)
    throw Error("cannot parse '" + std::string(text) + "' as " + std::string(what) +
                ": must be a finite, non-negative number");
  return {v, trim(s.substr(static_cast<size_t>(ptr - s.data())))};
}

double byte_multiplier(std::string_view u, bool* ok) {
  *ok = true;
  if (u.empty() || u == "B") return 1;
  if (u == "KB" || u == "kB" || u == "K") return 1e3;
  if (u == "MB" || u == "M") return 1e6;
  if (u == "GB" || u == "G") return 1e9;
  if (u == "TB" || u == "T") return 1e12;
  if (u == "KiB") return 1024.0;
  if (u == "MiB") return 1024.0 * 1024;
  if (u == "GiB") return 1024.0 * 1024 * 1024;
  if (u == "TiB") return 1024.0 * 1024 * 1024 * 1024;
  *ok = false;
  return 0;
}

}  // namespace

uint64_t parse_bytes(std::string_view text) {
  auto [v, unit] = split(text, "a size");
  bool ok;
  double m = byte_multiplier(unit, &ok);
  if (!ok)
    throw Error("cannot parse '" + std::string(text) + "' as a size: unknown unit '" + std::string(unit) +
                "' (use B, KB, MB, GB, TB, KiB, MiB, GiB, TiB)");
  double b = std::round(v * m);
  if (b >= 18446744073709551615.0) throw Error("size '" + std::string(text) + "' is too large");
  return static_cast<uint64_t>(b);
}

double parse_seconds(std::string_view text) {
  auto [v, unit] = split(text, "a time");
  if (unit.empty() || unit == "s") return v;
  if (unit == "ms") return v * 1e-3;
  if (unit == "us" || unit == "\xC2\xB5s") return v * 1e-6;
  if (unit == "ns") return v * 1e-9;
  if (unit == "min") return v * 60;
  throw Error("cannot parse '" + std::string(text) + "' as a time: unknown unit '" + std::string(unit) +
              "' (use s, ms, us, ns, min)");
}

double parse_rate(std::string_view text) {
  auto [v, unit] = split(text, "a rate");
  if (unit.size() < 2 || unit.substr(unit.size() - 2) != "/s")
    throw Error("cannot parse '" + std::string(text) + "' as a rate: expected a unit like GB/s or MiB/s");
  bool ok;
  double m = byte_multiplier(unit.substr(0, unit.size() - 2), &ok);
  if (!ok)
    throw Error("cannot parse '" + std::string(text) + "' as a rate: unknown unit '" + std::string(unit) +
                "'");
  return v * m;
}

void check_bandwidth_range(double r) {
  if (!(r >= kMinBandwidth && r <= kMaxBandwidth))
    throw Error("a bandwidth of " + format_number(r) +
                " B/s is outside the physical range 1 kbit/s to 1 Pbit/s (125 to 1.25e+14 B/s)");
}

void check_latency_range(double s) {
  if (!(s >= 0 && s <= kMaxLatency))
    throw Error("a latency of " + format_number(s) + " s is outside the range 0 to 60 s");
}

std::string format_number(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  char buf[64];
  const auto r = std::to_chars(buf, buf + sizeof buf, v);
  return std::string(buf, r.ptr);
}

std::string format_bytes(uint64_t bytes) {
  static const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double v = static_cast<double>(bytes);
  int u = 0;
  while (v >= 1024 && u < 4) {
    v /= 1024;
    ++u;
  }
  char buf[64];
  if (u == 0)
    std::snprintf(buf, sizeof buf, "%llu B", static_cast<unsigned long long>(bytes));
  else
    std::snprintf(buf, sizeof buf, "%.2f %s", v, units[u]);
  return buf;
}

std::string format_seconds(double s) {
  char buf[64];
  double a = std::fabs(s);
  if (a >= 1 || a == 0)
    std::snprintf(buf, sizeof buf, "%.3g s", s);
  else if (a >= 1e-3)
    std::snprintf(buf, sizeof buf, "%.3g ms", s * 1e3);
  else if (a >= 1e-6)
    std::snprintf(buf, sizeof buf, "%.3g us", s * 1e6);
  else
    std::snprintf(buf, sizeof buf, "%.3g ns", s * 1e9);
  return buf;
}

std::string format_rate(double r) {
  char buf[64];
  if (r >= 1e9)
    std::snprintf(buf, sizeof buf, "%.3g GB/s", r / 1e9);
  else if (r >= 1e6)
    std::snprintf(buf, sizeof buf, "%.3g MB/s", r / 1e6);
  else
    std::snprintf(buf, sizeof buf, "%.3g B/s", r);
  return buf;
}

}  // namespace moesim
