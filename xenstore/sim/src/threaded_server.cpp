#include "unetback/xs/sim/threaded_server.hpp"

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>

#include <thread>

namespace unetback::xs::sim {

struct threaded_server::impl {
  impl(std::filesystem::path dir, server_options options)
      : work(io.get_executor()), srv(io, with_dir(std::move(options), std::move(dir))) {
    thread = std::thread([this] { io.run(); });
  }
  ~impl() {
    work.reset();
    io.stop();
    thread.join();
  }
  static server_options with_dir(server_options o, std::filesystem::path dir) {
    o.dir = std::move(dir);
    return o;
  }
  impl(const impl&) = delete;
  impl& operator=(const impl&) = delete;

  boost::asio::io_context io;
  boost::asio::executor_work_guard<boost::asio::io_context::executor_type> work;
  server srv;
  std::thread thread;
};

threaded_server::threaded_server(std::filesystem::path dir, server_options options)
    : impl_(std::make_unique<impl>(std::move(dir), std::move(options))) {}

threaded_server::~threaded_server() = default;

std::filesystem::path threaded_server::socket_path() const {
  return impl_->srv.socket_path();
}

std::filesystem::path threaded_server::domain_socket_path(domid d) const {
  return impl_->srv.domain_socket_path(d);
}

}  // namespace unetback::xs::sim
