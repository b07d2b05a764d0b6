#include "unetback/ctl/control_server.hpp"

#include <spdlog/spdlog.h>
#include <sys/stat.h>
#include <unistd.h>

#include <boost/asio/local/stream_protocol.hpp>
#include <boost/asio/read_until.hpp>
#include <boost/asio/streambuf.hpp>
#include <boost/asio/write.hpp>
#include <filesystem>

#include "unetback/ctl/control_protocol.hpp"

namespace unetback::ctl {

namespace asio = boost::asio;
using stream = asio::local::stream_protocol;

struct control_server::impl : std::enable_shared_from_this<impl> {
  explicit impl(asio::io_context& io) : acceptor(io) {}
  stream::acceptor acceptor;
  std::map<std::string, handler, std::less<>> commands;

  void accept();
  std::string dispatch(std::string_view line);
};

namespace {

// One client connection: read a line, answer it, repeat until EOF.
struct session : std::enable_shared_from_this<session> {
  session(stream::socket s, std::shared_ptr<control_server::impl> srv)
      : socket(std::move(s)), server(std::move(srv)), input(max_request_bytes) {}
  stream::socket socket;
  std::shared_ptr<control_server::impl> server;
  asio::streambuf input;
  std::string reply;

  void read_request() {
    asio::async_read_until(socket, input, '\n',
                           [self = shared_from_this()](auto ec, std::size_t n) {
                             if (!ec) {
                               self->answer(n);
                             } else if (ec == asio::error::not_found) {
                               self->refuse_oversized();
                             }
                           });
  }
  // The buffer is full without a newline: say why, then close (the rest of
  // the line is never read, so memory stays bounded).
  void refuse_oversized() {
    reply =
        make_error("request longer than " + std::to_string(max_request_bytes) + " bytes").dump() +
        "\n";
    asio::async_write(socket, asio::buffer(reply), [self = shared_from_this()](auto, auto) {
      boost::system::error_code ignored;
      self->socket.close(ignored);
    });
  }
  void answer(std::size_t n) {
    std::string line(asio::buffers_begin(input.data()),
                     asio::buffers_begin(input.data()) + static_cast<std::ptrdiff_t>(n));
    input.consume(n);
    reply = server->dispatch(line) + "\n";
    asio::async_write(socket, asio::buffer(reply), [self = shared_from_this()](auto ec, auto) {
      if (!ec) {
        self->read_request();
      }
    });
  }
};

}  // namespace

void control_server::impl::accept() {
  acceptor.async_accept([self = shared_from_this()](auto ec, stream::socket s) {
    if (ec == asio::error::operation_aborted) {
      return;
    }
    if (!ec) {
      std::make_shared<session>(std::move(s), self)->read_request();
    }
    self->accept();
  });
}

std::string control_server::impl::dispatch(std::string_view line) {
  try {
    const auto request = parse_request(line);
    const auto name = request["cmd"].get<std::string>();
    const auto it = commands.find(name);
    if (it == commands.end()) {
      return make_error("unknown command '" + name + "'").dump();
    }
    return make_ok(it->second(request)).dump();
  } catch (const std::exception& e) {
    return make_error(e.what()).dump();
  }
}

control_server::control_server(asio::io_context& io, std::string path)
    : path_(std::move(path)), impl_(std::make_shared<impl>(io)) {
  // The default directory, /run/unetback, is the state directory and exists by
  // now; another missing one is created private (bind reports any other problem).
  if (const auto parent = std::filesystem::path(path_).parent_path(); !parent.empty()) {
    ::mkdir(parent.c_str(), 0700);
  }
  ::unlink(path_.c_str());
  const stream::endpoint endpoint(path_);
  impl_->acceptor.open(endpoint.protocol());
  impl_->acceptor.bind(endpoint);
  ::chmod(path_.c_str(), 0600);
  impl_->acceptor.listen();
  impl_->accept();
  spdlog::info("control socket {}", path_);
}

control_server::~control_server() {
  boost::system::error_code ignored;
  impl_->acceptor.close(ignored);
  ::unlink(path_.c_str());
}

void control_server::add_command(std::string name, handler h) {
  impl_->commands[std::move(name)] = std::move(h);
}

}  // namespace unetback::ctl
