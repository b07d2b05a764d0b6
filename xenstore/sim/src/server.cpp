#include "unetback/xs/sim/server.hpp"

#include <spdlog/spdlog.h>

#include <sys/socket.h>

#include <algorithm>
#include <array>
#include <boost/asio/local/stream_protocol.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/write.hpp>
#include <deque>
#include <vector>

#include "unetback/xs/sim/wire.hpp"

namespace unetback::xs::sim {

namespace {

// The client's pid (SO_PEERCRED), 0 if unknown: labels the connection in
// the "watches" control command.
std::int32_t peer_pid(boost::asio::local::stream_protocol::socket& sock) {
  ucred cred{};
  socklen_t len = sizeof cred;
  if (::getsockopt(sock.native_handle(), SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0) {
    return 0;
  }
  return cred.pid;
}

}  // namespace

using boost::asio::local::stream_protocol;

struct server::listener {
  listener(boost::asio::io_context& io, domid d, bool priv, std::filesystem::path p)
      : acceptor(io), dom(d), privileged(priv), path(std::move(p)) {}
  stream_protocol::acceptor acceptor;
  domid dom;
  bool privileged;
  std::filesystem::path path;

  void close() {
    boost::system::error_code ignored;
    acceptor.close(ignored);
    std::error_code fs_ignored;
    std::filesystem::remove(path, fs_ignored);
  }
};

// One client connection: frames requests with parse_message() and queues the
// engine's output, dropping a client whose unread output exceeds the cap.
class server::session : public std::enable_shared_from_this<server::session> {
 public:
  session(server& owner, stream_protocol::socket sock, conn_id id, domid dom)
      : owner_(owner), socket_(std::move(sock)), id_(id), dom_(dom) {}

  void start() { read_more(); }
  [[nodiscard]] domid dom() const { return dom_; }

  void queue(std::string bytes) {
    if (closed_) {
      return;
    }
    if (out_bytes_ + bytes.size() > owner_.options_.max_output_bytes) {
      owner_.log("client of domain " + std::to_string(dom_.value()) +
                 " does not read its replies: dropped");
      // The engine may be walking this connection's watches (a write firing
      // them): close the socket now, forget the connection once it is done.
      close();
      boost::asio::post(owner_.io_,
                        [self = shared_from_this()] { self->owner_.close_session(self->id_); });
      return;
    }
    out_bytes_ += bytes.size();
    out_.push_back(std::move(bytes));
    if (!writing_) {
      write_next();
    }
  }

  void close() {
    closed_ = true;
    boost::system::error_code ignored;
    socket_.close(ignored);
  }

 private:
  void read_more() {
    socket_.async_read_some(
        boost::asio::buffer(chunk_),
        [self = shared_from_this()](const boost::system::error_code& ec, std::size_t n) {
          if (self->closed_) {
            return;
          }
          if (ec) {
            self->owner_.close_session(self->id_);
            return;
          }
          self->inbuf_.insert(self->inbuf_.end(), self->chunk_.begin(),
                              self->chunk_.begin() + static_cast<long>(n));
          if (self->process()) {
            self->read_more();
          }
        });
  }

  // Handles every complete message in the buffer; false if the session closed.
  bool process() {
    for (;;) {
      parse_result r = parse_message(inbuf_);
      switch (r.status) {
        case parse_status::incomplete:
          return true;
        case parse_status::fatal:
          owner_.log("protocol violation from domain " + std::to_string(dom_.value()) + ": " +
                     r.reason);
          owner_.close_session(id_);
          return false;
        case parse_status::error_reply:
          owner_.engine_.reject(id_, r.req.hdr, r.error);
          break;
        case parse_status::ok:
          owner_.engine_.handle(id_, r.req);
          break;
      }
      inbuf_.erase(inbuf_.begin(), inbuf_.begin() + static_cast<long>(r.consumed));
      if (closed_) {
        return false;
      }
    }
  }

  // Everything queued (up to max_gather messages) in one gather write: one
  // system call per message fell behind a flood of watch events, and the cap
  // then dropped a client that was reading all it was sent.
  void write_next() {
    if (out_.empty() || closed_) {
      writing_ = false;
      return;
    }
    writing_ = true;
    const std::size_t count = std::min(out_.size(), max_gather);
    std::vector<boost::asio::const_buffer> buffers;
    buffers.reserve(count);
    for (std::size_t i = 0; i < count; ++i) {
      buffers.emplace_back(boost::asio::buffer(out_[i]));  // deque: push_back keeps these
    }
    boost::asio::async_write(
        socket_, buffers,
        [self = shared_from_this(), count](const boost::system::error_code& ec, std::size_t) {
          if (self->closed_) {
            return;
          }
          if (ec) {
            self->owner_.close_session(self->id_);
            return;
          }
          for (std::size_t i = 0; i < count; ++i) {
            self->out_bytes_ -= self->out_.front().size();
            self->out_.pop_front();
          }
          self->write_next();
        });
  }

  static constexpr std::size_t max_gather = 64;  // Boost.Asio's gather limit

  server& owner_;
  stream_protocol::socket socket_;
  conn_id id_;
  domid dom_;
  std::array<std::byte, 4096> chunk_{};
  std::vector<std::byte> inbuf_;
  std::deque<std::string> out_;
  std::size_t out_bytes_ = 0;
  bool writing_ = false;
  bool closed_ = false;
};

server::server(boost::asio::io_context& io, server_options options)
    : io_(io), options_(std::move(options)), engine_(*this, options_.limits) {
  std::filesystem::create_directories(options_.dir);
  listen(domid{0}, true, socket_path());
}

server::~server() {
  dom0_listener_->close();
  for (auto& [d, l] : guest_listeners_) {
    l->close();
  }
  for (auto& [id, s] : sessions_) {
    s->close();
  }
}

std::filesystem::path server::socket_path() const {
  return options_.dir / "socket";
}

std::filesystem::path server::domain_socket_path(domid d) const {
  return options_.dir / ("socket.d" + std::to_string(d.value()));
}

void server::listen(domid d, bool privileged, const std::filesystem::path& path) {
  auto l = std::make_shared<listener>(io_, d, privileged, path);
  std::error_code ignored;
  std::filesystem::remove(path, ignored);  // a stale socket from an earlier run
  l->acceptor.open(stream_protocol());
  l->acceptor.bind(stream_protocol::endpoint(path.string()));
  l->acceptor.listen();
  if (privileged) {
    dom0_listener_ = l;
  } else {
    guest_listeners_[d] = l;
  }
  accept_next(l);
}

void server::accept_next(const std::shared_ptr<listener>& l) {
  l->acceptor.async_accept(
      [this, l](const boost::system::error_code& ec, stream_protocol::socket sock) {
        if (!l->acceptor.is_open()) {
          return;
        }
        if (!ec) {
          if (sessions_.size() >= options_.max_connections) {
            log("connection limit reached: refusing a client");
          } else {
            const conn_id id = engine_.connect(l->dom, l->privileged, peer_pid(sock));
            auto s = std::make_shared<session>(*this, std::move(sock), id, l->dom);
            sessions_.emplace(id, s);
            s->start();
          }
        }
        accept_next(l);
      });
}

void server::close_session(conn_id c) {
  const auto it = sessions_.find(c);
  if (it == sessions_.end()) {
    return;
  }
  const std::shared_ptr<session> s = it->second;  // keep alive while closing
  sessions_.erase(it);
  s->close();
  engine_.disconnect(c);
}

void server::send(conn_id c, std::string bytes) {
  const auto it = sessions_.find(c);
  if (it != sessions_.end()) {
    const std::shared_ptr<session> s = it->second;
    s->queue(std::move(bytes));
  }
}

void server::domain_introduced(domid d) {
  try {
    listen(d, false, domain_socket_path(d));
  } catch (const std::exception& e) {
    log("cannot serve domain " + std::to_string(d.value()) + ": " + e.what());
  }
}

void server::domain_released(domid d) {
  std::vector<conn_id> doomed;
  for (const auto& [id, s] : sessions_) {
    if (s->dom() == d) {
      doomed.push_back(id);
    }
  }
  for (const conn_id id : doomed) {
    close_session(id);
  }
  const auto it = guest_listeners_.find(d);
  if (it != guest_listeners_.end()) {
    it->second->close();
    guest_listeners_.erase(it);
  }
}

void server::log(std::string_view line) {
  spdlog::info("sim-xenstored: {}", line);
}

}  // namespace unetback::xs::sim
