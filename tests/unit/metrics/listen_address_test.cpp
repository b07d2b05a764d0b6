// metrics-listen values: what is accepted and what is refused, with a reason.
#include "unetback/metrics/listen_address.hpp"

#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

namespace unetback::metrics {
namespace {

TEST(ListenAddress, Ipv4AndBracketedIpv6) {
  const auto v4 = parse_listen_address("127.0.0.1:9477");
  EXPECT_EQ(v4.address().to_string(), "127.0.0.1");
  EXPECT_EQ(v4.port(), 9477);
  const auto v6 = parse_listen_address("[::1]:65535");
  EXPECT_TRUE(v6.address().is_v6());
  EXPECT_EQ(v6.port(), 65535);
  EXPECT_EQ(parse_listen_address("0.0.0.0:1").port(), 1);
}

TEST(ListenAddress, RefusesWhatIsNotAddressAndPort) {
  for (const char* bad : {"", "9477", "127.0.0.1", "127.0.0.1:", "127.0.0.1:0", "127.0.0.1:65536",
                          "127.0.0.1:94x7", "127.0.0.1:-1", "localhost:9477", "::1:9477",
                          "[127.0.0.1]:9477", "[::1]", ":9477", "[]:9477", "127.0.0.1:9477 "}) {
    try {
      (void)parse_listen_address(bad);
      ADD_FAILURE() << "accepted '" << bad << "'";
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find("ADDRESS:PORT"), std::string::npos) << e.what();
    }
  }
}

}  // namespace
}  // namespace unetback::metrics
