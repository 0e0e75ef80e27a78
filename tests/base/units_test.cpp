#include "base/units.h"

#include <gtest/gtest.h>

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

}  // namespace
}  // namespace moesim
