#pragma once
// The optional HTTP listener (metrics-listen): GET /metrics answers the
// exposition text; other paths 404, other methods 405. Every peer is
// untrusted: Boost.Beast parses the request within a header limit, a request
// body is refused, a read timeout closes idle connections, concurrent
// connections are bounded, and each connection closes after one response. It
// runs on the daemon's io_context (like the control socket): rendering is a
// read of the supervisor's state, on the thread that owns it.

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>

#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>
#include <string>

namespace unetback::metrics {

class http_listener {
 public:
  /// Produces the body of GET /metrics (called on the io_context's thread).
  using renderer = std::function<std::string()>;

  struct limits {
    std::size_t header_bytes = std::size_t{8} * 1024;  ///< request line and headers
    std::chrono::milliseconds read_timeout{5000};      ///< for the whole request
    std::size_t connections = 16;                      ///< more are closed at once
  };

  /// Binds and listens on `at`. Throws boost::system::system_error if it cannot.
  http_listener(boost::asio::io_context& io, const boost::asio::ip::tcp::endpoint& at,
                renderer render, limits l);
  http_listener(boost::asio::io_context& io, const boost::asio::ip::tcp::endpoint& at,
                renderer render)
      : http_listener(io, at, std::move(render), limits{}) {}
  ~http_listener();  ///< stops accepting; open connections finish or time out
  http_listener(const http_listener&) = delete;
  http_listener& operator=(const http_listener&) = delete;

  /// Where it listens (the port the kernel chose when `at` had port 0).
  [[nodiscard]] boost::asio::ip::tcp::endpoint local_endpoint() const;

  struct impl;  ///< implementation detail (public so connections can hold it)

 private:
  std::shared_ptr<impl> impl_;
};

}  // namespace unetback::metrics
