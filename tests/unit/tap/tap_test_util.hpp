#pragma once
// Helpers for TAP tests: unique interface names, sysfs reads, packet sockets,
// and a skip when the machine cannot create TAP devices.

#include <sys/uio.h>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace unetback::tap::testing {

/// struct virtio_net_hdr_v1 (linux/virtio_net.h cannot be included from C++).
struct vnet_header {
  std::uint8_t flags;
  std::uint8_t gso_type;
  std::uint16_t hdr_len;
  std::uint16_t gso_size;
  std::uint16_t csum_start;
  std::uint16_t csum_offset;
  std::uint16_t num_buffers;
};
static_assert(sizeof(vnet_header) == 12);
inline constexpr std::size_t packet_vnet_hdr_size = 10;  ///< PACKET_VNET_HDR: virtio_net_hdr
inline constexpr std::uint8_t needs_csum = 1;            ///< VIRTIO_NET_HDR_F_NEEDS_CSUM
inline constexpr std::uint8_t gso_tcpv4 = 1;             ///< VIRTIO_NET_HDR_GSO_TCPV4

/// A name unique to this process and call, at most 15 characters.
std::string unique_name(const char* prefix = "ubt");

/// True when /dev/net/tun exists and we may create interfaces (root).
bool can_create_taps();

/// Contents of /sys/class/net/<ifname>/<attr> without the newline.
std::optional<std::string> sysfs(const std::string& ifname, const std::string& attr);

/// An AF_PACKET raw socket bound to `ifindex` for ethertype `proto`; with
/// `vnet_hdr`, PACKET_VNET_HDR is on (frames carry a virtio_net_hdr).
class packet_socket {
 public:
  /// Whether frames carry a virtio_net_hdr (PACKET_VNET_HDR).
  enum class header : std::uint8_t { none, vnet };
  packet_socket(int ifindex, std::uint16_t proto, header h = header::none);
  ~packet_socket();
  packet_socket(const packet_socket&) = delete;
  packet_socket& operator=(const packet_socket&) = delete;
  void send(const std::vector<std::uint8_t>& frame);
  /// The next frame not sent by ourselves, or nullopt after `timeout_ms`.
  std::optional<std::vector<std::uint8_t>> receive(int timeout_ms = 2000);

 private:
  int fd_;
  int ifindex_;
  std::uint16_t proto_;
};

/// Ethernet frame: broadcast dst, src 02:00:00:00:00:01, `ethertype`, payload.
std::vector<std::uint8_t> ether_frame(std::uint16_t ethertype,
                                      const std::vector<std::uint8_t>& payload);

/// Polls `fd` readable for up to `timeout_ms`.
bool wait_readable(int fd, int timeout_ms);

}  // namespace unetback::tap::testing
