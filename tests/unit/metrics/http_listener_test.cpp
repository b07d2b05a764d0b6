// The HTTP listener over a real TCP socket on 127.0.0.1: what each request
// is answered, and the bounds an untrusted peer meets (header size, body,
// read timeout, concurrent connections).
#include "unetback/metrics/http_listener.hpp"

#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <string>
#include <thread>

#include "unetback/metrics/exposition.hpp"

namespace unetback::metrics {
namespace {

namespace asio = boost::asio;

class HttpListener : public ::testing::Test {
 protected:
  void start(http_listener::limits l = {}) {
    listener_.emplace(
        io_, asio::ip::tcp::endpoint(asio::ip::make_address("127.0.0.1"), 0),
        [this] {
          ++renders_;
          return std::string("# HELP x X.\n# TYPE x gauge\nx 1\n");
        },
        l);
    thread_ = std::thread([this] { io_.run(); });
  }
  ~HttpListener() override {
    io_.stop();
    if (thread_.joinable()) {
      thread_.join();
    }
  }

  // A connected client socket (blocking, 5 s receive timeout).
  int connect_client() {
    const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(listener_->local_endpoint().port());
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    EXPECT_EQ(::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a)), 0);
    timeval tv{5, 0};
    ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    return fd;
  }
  // Everything the server sends until it closes ("<timeout>" if it does not).
  static std::string read_all(int fd) {
    std::string out;
    char buf[4096];
    for (;;) {
      const ssize_t n = ::recv(fd, buf, sizeof(buf), 0);
      if (n == 0) {
        return out;
      }
      if (n < 0) {
        return errno == ECONNRESET ? out : "<timeout>";
      }
      out.append(buf, static_cast<std::size_t>(n));
    }
  }
  std::string exchange(const std::string& request) {
    const int fd = connect_client();
    EXPECT_EQ(::send(fd, request.data(), request.size(), MSG_NOSIGNAL),
              static_cast<ssize_t>(request.size()));
    std::string reply = read_all(fd);
    ::close(fd);
    return reply;
  }

  asio::io_context io_;
  std::optional<http_listener> listener_;
  std::thread thread_;
  std::atomic<int> renders_{0};
};

TEST_F(HttpListener, GetMetricsAnswersTheExpositionAndCloses) {
  start();
  const std::string r = exchange("GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n");
  EXPECT_TRUE(r.starts_with("HTTP/1.1 200 OK\r\n")) << r;
  EXPECT_NE(r.find("Content-Type: " + std::string(content_type) + "\r\n"), std::string::npos) << r;
  EXPECT_NE(r.find("Connection: close\r\n"), std::string::npos) << r;
  EXPECT_TRUE(r.ends_with("\r\n\r\n# HELP x X.\n# TYPE x gauge\nx 1\n")) << r;
  EXPECT_EQ(renders_.load(), 1);
}

TEST_F(HttpListener, OtherPathsAre404AndOtherMethods405) {
  start();
  EXPECT_TRUE(exchange("GET / HTTP/1.1\r\n\r\n").starts_with("HTTP/1.1 404 ")) << "GET /";
  EXPECT_TRUE(exchange("GET /metricsx HTTP/1.0\r\n\r\n").starts_with("HTTP/1.0 404 "));
  const std::string post = exchange("POST /metrics HTTP/1.1\r\nContent-Length: 0\r\n\r\n");
  EXPECT_TRUE(post.starts_with("HTTP/1.1 405 ")) << post;
  EXPECT_NE(post.find("Allow: GET\r\n"), std::string::npos) << post;
  EXPECT_TRUE(exchange("DELETE /metrics HTTP/1.1\r\n\r\n").starts_with("HTTP/1.1 405 "));
  EXPECT_EQ(renders_.load(), 0);
}

TEST_F(HttpListener, OversizedHeadersAreRefusedUnread) {
  start();
  const std::string big =
      "GET /metrics HTTP/1.1\r\nX-Pad: " + std::string(16 * 1024, 'a') + "\r\n\r\n";
  const std::string r = exchange(big);
  EXPECT_TRUE(r.starts_with("HTTP/1.1 431 ")) << r.substr(0, 80);
  EXPECT_EQ(renders_.load(), 0);
}

TEST_F(HttpListener, GarbageAndBodiesAre400) {
  start();
  EXPECT_TRUE(exchange("\x16\x03\x01 not http\r\n\r\n").starts_with("HTTP/1.1 400 "));
  const std::string body = exchange("GET /metrics HTTP/1.1\r\nContent-Length: 5\r\n\r\nhello");
  EXPECT_TRUE(body.starts_with("HTTP/1.1 400 ")) << body;
  EXPECT_EQ(renders_.load(), 0);
}

TEST_F(HttpListener, ASilentPeerIsClosedAfterTheReadTimeout) {
  http_listener::limits l;
  l.read_timeout = std::chrono::milliseconds(200);
  start(l);
  const int fd = connect_client();
  const auto t0 = std::chrono::steady_clock::now();
  EXPECT_EQ(read_all(fd), "");  // closed, not timed out on our side (5 s)
  EXPECT_GE(std::chrono::steady_clock::now() - t0, std::chrono::milliseconds(150));
  ::close(fd);
}

TEST_F(HttpListener, ConnectionsBeyondTheBoundAreClosedAtOnce) {
  http_listener::limits l;
  l.connections = 2;
  start(l);
  const int a = connect_client();
  const int b = connect_client();
  // Both held open by the server (they have sent nothing yet).
  pollfd held[2] = {{a, POLLIN, 0}, {b, POLLIN, 0}};
  EXPECT_EQ(::poll(held, 2, 100), 0);
  const int c = connect_client();
  EXPECT_EQ(read_all(c), "");
  ::close(c);
  // The held ones are still served.
  const std::string req = "GET /metrics HTTP/1.1\r\n\r\n";
  ASSERT_EQ(::send(a, req.data(), req.size(), MSG_NOSIGNAL), static_cast<ssize_t>(req.size()));
  EXPECT_TRUE(read_all(a).starts_with("HTTP/1.1 200 "));
  ::close(a);
  ::close(b);
}

}  // namespace
}  // namespace unetback::metrics
