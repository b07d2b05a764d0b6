#include "unetback/tap/mac.hpp"

#include <cstdio>

namespace unetback::tap {

namespace {

int hex_value(char c) {
  if (c >= '0' && c <= '9') {
    return c - '0';
  }
  if (c >= 'a' && c <= 'f') {
    return c - 'a' + 10;
  }
  if (c >= 'A' && c <= 'F') {
    return c - 'A' + 10;
  }
  return -1;
}

}  // namespace

std::optional<mac_address> parse_mac(std::string_view text) {
  if (text.size() != 17) {
    return std::nullopt;
  }
  mac_address mac{};
  for (std::size_t i = 0; i < mac.size(); ++i) {
    const std::size_t at = i * 3;
    const int hi = hex_value(text[at]);
    const int lo = hex_value(text[at + 1]);
    if (hi < 0 || lo < 0 || (i < 5 && text[at + 2] != ':')) {
      return std::nullopt;
    }
    mac[i] = static_cast<std::uint8_t>(hi * 16 + lo);
  }
  return mac;
}

std::string to_string(const mac_address& mac) {
  char buf[18];
  std::snprintf(buf, sizeof(buf), "%02x:%02x:%02x:%02x:%02x:%02x", mac[0], mac[1], mac[2], mac[3],
                mac[4], mac[5]);
  return buf;
}

}  // namespace unetback::tap
