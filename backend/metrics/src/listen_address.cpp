#include "unetback/metrics/listen_address.hpp"

#include <boost/asio/ip/address.hpp>

#include <charconv>
#include <cstdint>
#include <stdexcept>
#include <string>

namespace unetback::metrics {

namespace {

[[noreturn]] void bad(std::string_view text, std::string_view why) {
  throw std::invalid_argument("'" + std::string(text) + "': " + std::string(why) +
                              " (expected ADDRESS:PORT, e.g. 127.0.0.1:9477 or [::1]:9477)");
}

std::uint16_t port_of(std::string_view text, std::string_view port) {
  unsigned value = 0;
  const auto [end, ec] = std::from_chars(port.data(), port.data() + port.size(), value);
  if (port.empty() || ec != std::errc{} || end != port.data() + port.size() || value == 0 ||
      value > 65535) {
    bad(text, "the port must be a number in 1..65535");
  }
  return static_cast<std::uint16_t>(value);
}

}  // namespace

boost::asio::ip::tcp::endpoint parse_listen_address(std::string_view text) {
  const auto colon = text.rfind(':');
  if (colon == std::string_view::npos) {
    bad(text, "no port");
  }
  std::string_view host = text.substr(0, colon);
  const bool bracketed = host.starts_with('[') && host.ends_with(']') && host.size() >= 2;
  if (bracketed) {
    host = host.substr(1, host.size() - 2);
  }
  boost::system::error_code ec;
  const auto address = boost::asio::ip::make_address(std::string(host), ec);
  if (ec || host.empty() || address.is_v6() != bracketed) {
    bad(text, "the address must be an IPv4 literal or an IPv6 literal in brackets");
  }
  return {address, port_of(text, text.substr(colon + 1))};
}

}  // namespace unetback::metrics
