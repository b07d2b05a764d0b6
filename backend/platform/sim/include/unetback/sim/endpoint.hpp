#pragma once
// An event-channel endpoint of the simulated hypervisor: a bound unix datagram
// socket <sim_dir>/evtchn/<16 hex digits>, named by a random 64-bit id. It is
// the pollable fd of an event-channel handle (doorbells carry the destination
// port number) and the liveness token of a handle: once its owner closes it or
// dies, connect() to the path fails (ECONNREFUSED/ENOENT), which is how the sim
// detects a dead binder or mapper (docs/sim-platform.md).

#include <sys/socket.h>
#include <sys/un.h>

#include <cstdint>
#include <filesystem>
#include <optional>
#include <system_error>

namespace unetback::sim {

/// A socket address of some endpoint, prepared once and reused for sends.
struct endpoint_address {
  sockaddr_un addr{};
  socklen_t len = 0;
};

class endpoint {
 public:
  /// Creates and binds a fresh endpoint under `sim_dir`/evtchn (created if
  /// missing). Throws std::system_error, or std::invalid_argument if the path
  /// would not fit in sockaddr_un (108 bytes).
  explicit endpoint(const std::filesystem::path& sim_dir);
  /// Closes the socket and removes its path.
  ~endpoint();
  endpoint(const endpoint&) = delete;
  endpoint& operator=(const endpoint&) = delete;

  /// This endpoint's id (never 0).
  [[nodiscard]] std::uint64_t id() const { return id_; }
  /// The non-blocking socket: readable when a doorbell is queued.
  [[nodiscard]] int fd() const { return fd_; }
  /// This endpoint's own address (for self-delivery after unmask).
  [[nodiscard]] const endpoint_address& self_address() const { return self_; }

  /// Sends a doorbell naming `port` to `to`, never blocking. Returns ENOENT or
  /// ECONNREFUSED when the receiver is gone, EAGAIN when its queue is full.
  std::error_code send_doorbell(const endpoint_address& to, std::uint32_t port) const;
  /// The next queued doorbell's port number, nullopt when none is queued.
  /// Malformed datagrams are consumed and reported as port 0.
  std::optional<std::uint32_t> receive() const;

  /// The address of endpoint `id` under `sim_dir` (nullopt if too long).
  static std::optional<endpoint_address> address_of(const std::filesystem::path& sim_dir,
                                                    std::uint64_t id);
  /// True while endpoint `id` exists and accepts datagrams (id 0 counts as
  /// alive: a record being filled in).
  static bool alive(const std::filesystem::path& sim_dir, std::uint64_t id);
  /// Removes the stale socket file of a dead endpoint.
  static void remove_stale(const std::filesystem::path& sim_dir, std::uint64_t id);

 private:
  std::filesystem::path sim_dir_;
  std::uint64_t id_ = 0;
  int fd_ = -1;
  endpoint_address self_;
};

}  // namespace unetback::sim
