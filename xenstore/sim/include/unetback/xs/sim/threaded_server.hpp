#pragma once
// sim-xenstored in-process, on its own thread: for tests that need a
// xenstored to talk to through libxenstore without spawning a process.

#include <filesystem>
#include <memory>

#include "unetback/rings/ids.hpp"
#include "unetback/xs/sim/server.hpp"

namespace unetback::xs::sim {

/// Runs a server on a private io_context thread until destruction.
class threaded_server {
 public:
  /// Starts serving in `dir` (created if missing). Throws if binding fails.
  explicit threaded_server(std::filesystem::path dir, server_options options = {});
  /// Stops the thread and removes the sockets.
  ~threaded_server();
  threaded_server(const threaded_server&) = delete;
  threaded_server& operator=(const threaded_server&) = delete;

  /// <dir>/socket (dom0).
  [[nodiscard]] std::filesystem::path socket_path() const;
  /// <dir>/socket.d<D> (exists while D is introduced).
  [[nodiscard]] std::filesystem::path domain_socket_path(domid d) const;

 private:
  struct impl;
  std::unique_ptr<impl> impl_;
};

}  // namespace unetback::xs::sim
