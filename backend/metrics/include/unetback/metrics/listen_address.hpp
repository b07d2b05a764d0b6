#pragma once
// metrics-listen / --metrics-listen: where the HTTP listener binds, as
// "ADDRESS:PORT" with an IPv4 literal or "[IPv6]:PORT" (no host names: the
// daemon resolves nothing at start-up).

#include <boost/asio/ip/tcp.hpp>

#include <string_view>

namespace unetback::metrics {

/// Parses `text`; throws std::invalid_argument saying what is expected.
[[nodiscard]] boost::asio::ip::tcp::endpoint parse_listen_address(std::string_view text);

}  // namespace unetback::metrics
