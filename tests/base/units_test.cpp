#include "base/units.h"

#include <gtest/gtest.h>

#include <cmath>

#include "base/error.h"

namespace moesim {
namespace {

TEST(Units, ParsesBytesWithBinaryAndDecimalUnits) {
  EXPECT_EQ(parse_bytes("4096"), 4096u);
  EXPECT_EQ(parse_bytes("4KiB"), 4096u);
  EXPECT_EQ(parse_bytes("3000MiB"), 3000ull * 1024 * 1024);
  EXPECT_EQ(parse_bytes("8GiB"), 8ull << 30);
  EXPECT_EQ(parse_bytes("1.5GB"), 1500000000ull);
  EXPECT_EQ(parse_bytes(" 2 TB "), 2000000000000ull);
  EXPECT_EQ(parse_bytes("0.5KiB"), 512u);
}

TEST(Units, ParsesTimes) {
  EXPECT_DOUBLE_EQ(parse_seconds("2.5ms"), 2.5e-3);
  EXPECT_DOUBLE_EQ(parse_seconds("10us"), 10e-6);
  EXPECT_DOUBLE_EQ(parse_seconds("80ns"), 80e-9);
  EXPECT_DOUBLE_EQ(parse_seconds("1.2s"), 1.2);
  EXPECT_DOUBLE_EQ(parse_seconds("3"), 3.0);
  EXPECT_DOUBLE_EQ(parse_seconds("2min"), 120.0);
}

TEST(Units, ParsesRates) {
  EXPECT_DOUBLE_EQ(parse_rate("3.5GB/s"), 3.5e9);
  EXPECT_DOUBLE_EQ(parse_rate("800MiB/s"), 800.0 * 1024 * 1024);
}

TEST(Units, RejectsBadInputWithTheText) {
  for (const char* bad : {"", "GiB", "-3GiB", "3 parsecs", "nan", "inf", "12XB"}) {
    try {
      (void)parse_bytes(bad);
      ADD_FAILURE() << "accepted '" << bad << "'";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(bad), std::string::npos) << e.what();
    }
  }
  EXPECT_THROW(parse_seconds("5 fortnights"), Error);
  EXPECT_THROW(parse_rate("3.5GB"), Error);
}

TEST(Units, Formats) {
  EXPECT_EQ(format_bytes(512), "512 B");
  EXPECT_EQ(format_bytes(3ull << 30), "3.00 GiB");
  EXPECT_EQ(format_seconds(2.5e-3), "2.5 ms");
  EXPECT_EQ(format_rate(3.5e9), "3.5 GB/s");
}

// Messages quote numbers in their shortest form: never the 300 digits "%f" gives 1e300.
TEST(Units, FormatNumberIsShortAndRoundTrips) {
  EXPECT_EQ(format_number(0.3253), "0.3253");
  EXPECT_EQ(format_number(-0.5), "-0.5");
  EXPECT_EQ(format_number(1e300), "1e+300");
  EXPECT_EQ(format_number(1.2e300), "1.2e+300");
  EXPECT_EQ(format_number(4), "4");
  EXPECT_EQ(format_number(std::nan("")), "nan");
  EXPECT_EQ(format_number(-HUGE_VAL), "-inf");
  EXPECT_LE(format_number(1.0 / 3).size(), 20u);
}

TEST(Units, BandwidthAndLatencyHavePhysicalRanges) {
  EXPECT_NO_THROW(check_bandwidth_range(125));      // 1 kbit/s
  EXPECT_NO_THROW(check_bandwidth_range(1.25e14));  // 1 Pbit/s
  EXPECT_NO_THROW(check_latency_range(0));
  EXPECT_NO_THROW(check_latency_range(60));
  for (double bad : {0.0, 124.0, 1.25e-301, 1.3e14, std::nan("")})
    EXPECT_THROW(check_bandwidth_range(bad), Error) << bad;
  for (double bad : {-1e-9, 60.5, 1e300, std::nan("")}) EXPECT_THROW(check_latency_range(bad), Error) << bad;
  try {
    check_bandwidth_range(1.25e-301);
    ADD_FAILURE();
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()),
              "a bandwidth of 1.25e-301 B/s is outside the physical range 1 kbit/s to 1 Pbit/s (125 to "
              "1.25e+14 B/s)");
  }
}

}  // namespace
}  // namespace moesim
