#include "unetback/metrics/http_listener.hpp"

#include <spdlog/spdlog.h>

#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

#include "unetback/metrics/exposition.hpp"

namespace unetback::metrics {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;

struct http_listener::impl : std::enable_shared_from_this<impl> {
  impl(asio::io_context& io, renderer r, limits l)
      : acceptor(io), render(std::move(r)), bounds(l) {}
  tcp::acceptor acceptor;
  renderer render;
  limits bounds;
  std::size_t open_connections = 0;

  void accept();
};

namespace {

// What GET /metrics (or anything else) is answered.
http::response<http::string_body> answer(const http::request<http::empty_body>& req,
                                         const http_listener::renderer& render) {
  http::response<http::string_body> res;
  res.version(req.version());
  res.keep_alive(false);
  const std::string_view target = req.target();
  const std::string_view path = target.substr(0, target.find('?'));
  if (path != "/metrics") {
    res.result(http::status::not_found);
    res.set(http::field::content_type, "text/plain; charset=utf-8");
    res.body() = "not found: only /metrics is served\n";
  } else if (req.method() != http::verb::get) {
    res.result(http::status::method_not_allowed);
    res.set(http::field::allow, "GET");
    res.set(http::field::content_type, "text/plain; charset=utf-8");
    res.body() = "method not allowed: only GET\n";
  } else {
    res.result(http::status::ok);
    res.set(http::field::content_type, content_type);
    res.body() = render();
  }
  res.prepare_payload();
  return res;
}

// One connection: read one request within the limits, answer it, close.
struct connection : std::enable_shared_from_this<connection> {
  connection(tcp::socket s, std::shared_ptr<http_listener::impl> srv)
      : stream(std::move(s)), server(std::move(srv)), buffer(server->bounds.header_bytes) {
    ++server->open_connections;
    parser.header_limit(static_cast<std::uint32_t>(server->bounds.header_bytes));
    parser.body_limit(0);  // GET carries no body; anything else is refused unread
  }
  ~connection() { --server->open_connections; }
  connection(const connection&) = delete;
  connection& operator=(const connection&) = delete;

  beast::tcp_stream stream;
  std::shared_ptr<http_listener::impl> server;
  beast::flat_buffer buffer;
  http::request_parser<http::empty_body> parser;
  http::response<http::string_body> response;

  void read() {
    stream.expires_after(server->bounds.read_timeout);
    http::async_read(stream, buffer, parser,
                     [self = shared_from_this()](beast::error_code ec, std::size_t) {
                       if (ec == beast::error::timeout || ec == http::error::end_of_stream) {
                         self->close();
                       } else if (ec) {
                         self->refuse(ec);
                       } else {
                         self->respond(answer(self->parser.get(), self->server->render));
                       }
                     });
  }
  // A request the parser refused (too large, malformed, with a body).
  void refuse(beast::error_code ec) {
    http::response<http::string_body> res;
    const bool too_large = ec == http::error::header_limit || ec == http::error::buffer_overflow;
    res.result(too_large ? http::status::request_header_fields_too_large
                         : http::status::bad_request);
    res.keep_alive(false);
    res.set(http::field::content_type, "text/plain; charset=utf-8");
    res.body() = "bad request\n";
    res.prepare_payload();
    respond(std::move(res));
  }
  void respond(http::response<http::string_body> res) {
    response = std::move(res);
    stream.expires_after(server->bounds.read_timeout);  // a peer that never reads
    http::async_write(
        stream, response,
        [self = shared_from_this()](beast::error_code, std::size_t) { self->close(); });
  }
  void close() {
    beast::error_code ignored;
    stream.socket().shutdown(tcp::socket::shutdown_both, ignored);
    stream.close();
  }
};

}  // namespace

void http_listener::impl::accept() {
  acceptor.async_accept([self = shared_from_this()](beast::error_code ec, tcp::socket s) {
    if (ec == asio::error::operation_aborted) {
      return;
    }
    if (!ec) {
      if (self->open_connections < self->bounds.connections) {
        std::make_shared<connection>(std::move(s), self)->read();
      } else {
        beast::error_code ignored;
        s.close(ignored);  // over the bound: the peer retries at its next scrape
      }
    }
    self->accept();
  });
}

http_listener::http_listener(asio::io_context& io, const tcp::endpoint& at, renderer render,
                             limits l)
    : impl_(std::make_shared<impl>(io, std::move(render), l)) {
  impl_->acceptor.open(at.protocol());
  impl_->acceptor.set_option(tcp::acceptor::reuse_address(true));
  impl_->acceptor.bind(at);
  impl_->acceptor.listen();
  impl_->accept();
  const tcp::endpoint bound = local_endpoint();
  spdlog::info("metrics listener on {} port {} (GET /metrics)", bound.address().to_string(),
               bound.port());
}

http_listener::~http_listener() {
  beast::error_code ignored;
  impl_->acceptor.close(ignored);
}

tcp::endpoint http_listener::local_endpoint() const {
  return impl_->acceptor.local_endpoint();
}

}  // namespace unetback::metrics
