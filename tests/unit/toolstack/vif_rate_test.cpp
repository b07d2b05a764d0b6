// xl's `rate=` setting becomes the backend key libxl writes:
// "<bytes per interval>,<interval in microseconds>" (default interval 50 ms).

#include <gtest/gtest.h>

#include <stdexcept>

#include "vif_rate.hpp"

namespace unetback::toolstack {
namespace {

TEST(VifRate, BitsPerSecondWithTheDefaultInterval) {
  EXPECT_EQ(backend_rate("10Mb/s"), "62500,50000");  // 1.25 MB/s for 50 ms
}

TEST(VifRate, BytesPerSecondWithAnInterval) {
  EXPECT_EQ(backend_rate("1MB/s@20ms"), "20000,20000");
  EXPECT_EQ(backend_rate("50Mb/s@20ms"), "125000,20000");
  EXPECT_EQ(backend_rate("8000b/s@1s"), "1000,1000000");
  EXPECT_EQ(backend_rate("1GB/s@500us"), "500000,500");
}

TEST(VifRate, MalformedRatesAreRefusedNamingTheText) {
  for (const char* bad : {"", "fast", "10Mb", "10Mb/s@", "10Mb/s@0ms", "10Mb/s@2s", "10Mb/s@5m",
                          "10Xb/s", "1b/s@1us", "-5Mb/s", "99999999999999999999Gb/s"}) {
    try {
      (void)backend_rate(bad);
      ADD_FAILURE() << "accepted '" << bad << "'";
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find(std::string("'") + bad + "'"), std::string::npos)
          << e.what();
    }
  }
}

}  // namespace
}  // namespace unetback::toolstack
