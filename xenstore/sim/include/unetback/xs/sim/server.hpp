#pragma once
// sim-xenstored's socket side: Unix stream sockets speaking the xenstored wire
// protocol so that unmodified libxenstore (XENSTORED_PATH=<dir>/socket) and
// xenstore-utils reach it. Identity is the socket a client connected to:
// <dir>/socket is dom0 (privileged); <dir>/socket.d<D> exists while domain D
// is introduced and its clients are domain D (unprivileged).

#include <boost/asio/io_context.hpp>

#include <cstddef>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <string_view>

#include "unetback/rings/ids.hpp"
#include "unetback/xs/sim/engine.hpp"

namespace unetback::xs::sim {

/// Configuration of a server.
struct server_options {
  std::filesystem::path dir;                                ///< where the sockets live (created)
  std::size_t max_output_bytes = std::size_t{1024} * 1024;  ///< queued per client; beyond: dropped
  std::size_t max_connections = 256;                        ///< over all sockets
  engine_limits limits;                                     ///< quotas of the engine
};

/// Serves the engine on Unix sockets, on one io_context thread.
class server : private engine_sink {
 public:
  /// Binds <dir>/socket (replacing a stale file) and starts accepting.
  /// Throws std::system_error if the socket cannot be created.
  server(boost::asio::io_context& io, server_options options);
  /// Closes every connection and removes the socket files.
  ~server() override;
  server(const server&) = delete;
  server& operator=(const server&) = delete;

  /// <dir>/socket, the privileged (dom0) socket.
  [[nodiscard]] std::filesystem::path socket_path() const;
  /// <dir>/socket.d<D>, present while D is introduced.
  [[nodiscard]] std::filesystem::path domain_socket_path(domid d) const;
  /// The protocol engine (inspect from the io_context thread only).
  [[nodiscard]] const engine& core() const { return engine_; }
  /// Open client connections.
  [[nodiscard]] std::size_t session_count() const { return sessions_.size(); }

 private:
  class session;
  struct listener;
  friend class session;

  void listen(domid d, bool privileged, const std::filesystem::path& path);
  void accept_next(const std::shared_ptr<listener>& l);
  void close_session(conn_id c);

  // engine_sink
  void send(conn_id c, std::string bytes) override;
  void domain_introduced(domid d) override;
  void domain_released(domid d) override;
  void log(std::string_view line) override;

  boost::asio::io_context& io_;
  server_options options_;
  engine engine_;
  std::shared_ptr<listener> dom0_listener_;
  std::map<domid, std::shared_ptr<listener>> guest_listeners_;
  std::map<conn_id, std::shared_ptr<session>> sessions_;
};

}  // namespace unetback::xs::sim
