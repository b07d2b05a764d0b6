#include "tap_test_util.hpp"

#include <arpa/inet.h>
#include <linux/if_packet.h>
#include <net/ethernet.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <fstream>
#include <stdexcept>

namespace unetback::tap::testing {

std::string unique_name(const char* prefix) {
  static std::atomic<unsigned> counter{0};
  return std::string(prefix) + std::to_string(::getpid() % 100000) + "x" +
         std::to_string(counter++ % 1000);
}

bool can_create_taps() {
  return ::geteuid() == 0 && ::access("/dev/net/tun", R_OK | W_OK) == 0;
}

std::optional<std::string> sysfs(const std::string& ifname, const std::string& attr) {
  std::ifstream in("/sys/class/net/" + ifname + "/" + attr);
  std::string value;
  if (!std::getline(in, value)) {
    return std::nullopt;
  }
  return value;
}

packet_socket::packet_socket(int ifindex, std::uint16_t proto, header h)
    : fd_(::socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC, htons(proto))),
      ifindex_(ifindex),
      proto_(proto) {
  if (fd_ < 0) {
    throw std::runtime_error("AF_PACKET socket");
  }
  if (h == header::vnet) {
    int on = 1;
    if (::setsockopt(fd_, SOL_PACKET, PACKET_VNET_HDR, &on, sizeof(on)) != 0) {
      throw std::runtime_error("PACKET_VNET_HDR");
    }
  }
  sockaddr_ll sll{};
  sll.sll_family = AF_PACKET;
  sll.sll_protocol = htons(proto);
  sll.sll_ifindex = ifindex;
  if (::bind(fd_, reinterpret_cast<sockaddr*>(&sll), sizeof(sll)) != 0) {
    throw std::runtime_error("bind AF_PACKET");
  }
}

packet_socket::~packet_socket() {
  ::close(fd_);
}

void packet_socket::send(const std::vector<std::uint8_t>& frame) {
  sockaddr_ll sll{};
  sll.sll_family = AF_PACKET;
  sll.sll_protocol = htons(proto_);
  sll.sll_ifindex = ifindex_;
  sll.sll_halen = 6;
  if (::sendto(fd_, frame.data(), frame.size(), 0, reinterpret_cast<sockaddr*>(&sll),
               sizeof(sll)) != static_cast<ssize_t>(frame.size())) {
    throw std::runtime_error("AF_PACKET sendto failed: errno " + std::to_string(errno));
  }
}

std::optional<std::vector<std::uint8_t>> packet_socket::receive(int timeout_ms) {
  std::vector<std::uint8_t> buf(70000);
  for (int waited = 0; waited < timeout_ms; waited += 10) {
    if (!wait_readable(fd_, 10)) {
      continue;
    }
    sockaddr_ll from{};
    socklen_t len = sizeof(from);
    const ssize_t n =
        ::recvfrom(fd_, buf.data(), buf.size(), 0, reinterpret_cast<sockaddr*>(&from), &len);
    if (n > 0 && from.sll_pkttype != PACKET_OUTGOING) {
      buf.resize(static_cast<std::size_t>(n));
      return buf;
    }
  }
  return std::nullopt;
}

std::vector<std::uint8_t> ether_frame(std::uint16_t ethertype,
                                      const std::vector<std::uint8_t>& payload) {
  std::vector<std::uint8_t> f = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02, 0, 0, 0, 0, 1};
  f.push_back(static_cast<std::uint8_t>(ethertype >> 8));
  f.push_back(static_cast<std::uint8_t>(ethertype & 0xff));
  f.insert(f.end(), payload.begin(), payload.end());
  return f;
}

bool wait_readable(int fd, int timeout_ms) {
  pollfd p{fd, POLLIN, 0};
  return ::poll(&p, 1, timeout_ms) > 0 && (p.revents & POLLIN) != 0;
}

}  // namespace unetback::tap::testing
