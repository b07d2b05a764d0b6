#pragma once
// A frame_port over a SOCK_SEQPACKET (or SOCK_DGRAM) socket: each message is
// one frame with its vnet header, exactly like a TAP queue fd with
// IFF_VNET_HDR. Used by unit tests and fuzzers in place of a TAP.

#include <cstddef>

#include "unetback/platform/frame_port.hpp"

namespace unetback::test_support {

class socket_frame_port final : public platform::frame_port {
 public:
  /// Takes ownership of `fd` (made non-blocking). `vnet_hdr_size`: 10 or 12.
  explicit socket_frame_port(int fd, std::size_t vnet_hdr_size = 12);
  ~socket_frame_port() override;
  socket_frame_port(const socket_frame_port&) = delete;
  socket_frame_port& operator=(const socket_frame_port&) = delete;

  [[nodiscard]] int fd() const override { return fd_; }
  [[nodiscard]] std::size_t vnet_hdr_size() const override { return vnet_hdr_size_; }
  long read_frame(std::span<std::byte> buf) override;
  long write_frame(std::span<const iovec> iov) override;

 private:
  int fd_;
  std::size_t vnet_hdr_size_;
};

}  // namespace unetback::test_support
