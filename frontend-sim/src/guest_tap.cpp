#include "unetback/sim/netfront/guest_tap.hpp"

#include <fcntl.h>
#include <linux/if.h>
#include <linux/if_tun.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <system_error>

#include "unetback/sim/netfront/netns_thread.hpp"
#include "unetback/tap/mac.hpp"

namespace unetback::sim {
namespace {

[[noreturn]] void fail(const std::string& what) {
  throw std::system_error(errno, std::generic_category(), what);
}

ifreq make_ifreq(const std::string& name) {
  ifreq ifr{};
  if (name.empty() || name.size() >= IFNAMSIZ) {
    throw std::invalid_argument("bad interface name '" + name + "'");
  }
  std::memcpy(ifr.ifr_name, name.c_str(), name.size());
  return ifr;
}

int open_queue(const guest_tap_options& o, bool first) {
  const int fd = ::open("/dev/net/tun", O_RDWR | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) {
    fail("open /dev/net/tun");
  }
  ifreq ifr = make_ifreq(o.ifname);
  ifr.ifr_flags = IFF_TAP | IFF_NO_PI | IFF_VNET_HDR | IFF_MULTI_QUEUE;
  int hdr = 12;
  if (::ioctl(fd, TUNSETIFF, &ifr) != 0 ||
      (first && (::ioctl(fd, TUNSETVNETHDRSZ, &hdr) != 0 ||
                 ::ioctl(fd, TUNSETOFFLOAD, static_cast<unsigned long>(o.offload_flags)) != 0))) {
    const int err = errno;
    ::close(fd);
    throw std::system_error(err, std::generic_category(), "configure TAP " + o.ifname);
  }
  return fd;
}

bool set_hwaddr(const std::string& text, ifreq& ifr) {
  const auto mac = tap::parse_mac(text);
  if (!mac) {
    errno = EINVAL;
    return false;
  }
  ifr.ifr_hwaddr.sa_family = 1;  // ARPHRD_ETHER
  for (std::size_t i = 0; i < mac->size(); ++i) {
    ifr.ifr_hwaddr.sa_data[i] = static_cast<char>((*mac)[i]);
  }
  return true;
}

void configure_link(const guest_tap_options& o) {
  const int s = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (s < 0) {
    fail("socket");
  }
  ifreq ifr = make_ifreq(o.ifname);
  bool ok = true;
  if (o.mtu) {
    ifr.ifr_mtu = static_cast<int>(*o.mtu);
    ok = ::ioctl(s, SIOCSIFMTU, &ifr) == 0;
  }
  if (ok && o.mac) {
    ok = set_hwaddr(*o.mac, ifr) && ::ioctl(s, SIOCSIFHWADDR, &ifr) == 0;
  }
  if (ok && o.up && (ok = ::ioctl(s, SIOCGIFFLAGS, &ifr) == 0)) {
    ifr.ifr_flags = static_cast<short>(ifr.ifr_flags | IFF_UP);
    ok = ::ioctl(s, SIOCSIFFLAGS, &ifr) == 0;
  }
  const int err = errno;
  ::close(s);
  if (!ok) {
    throw std::system_error(err, std::generic_category(), "configure link " + o.ifname);
  }
}

}  // namespace

tap_queue_port::~tap_queue_port() {
  ::close(fd_);
}

long tap_queue_port::read_frame(std::span<std::byte> buf) {
  const ssize_t n = ::read(fd_, buf.data(), buf.size());
  if (n < 0) {
    return errno == EAGAIN ? 0 : -errno;
  }
  return static_cast<long>(n);
}

long tap_queue_port::write_frame(std::span<const iovec> iov) {
  const ssize_t n = ::writev(fd_, iov.data(), static_cast<int>(iov.size()));
  if (n < 0) {
    return errno == EAGAIN ? 0 : -errno;
  }
  return static_cast<long>(n);
}

std::vector<std::unique_ptr<platform::frame_port>> open_guest_tap(const guest_tap_options& o) {
  std::vector<std::unique_ptr<platform::frame_port>> ports;
  run_in_netns(o.netns, [&] {
    for (std::uint32_t q = 0; q < o.queues; ++q) {
      ports.push_back(std::make_unique<tap_queue_port>(open_queue(o, q == 0)));
    }
    if (o.tx_select == tx_queue_select::random && o.queues > 1) {
      attach_random_tx_spread(ports.front()->fd());
    }
    configure_link(o);
  });
  return ports;
}

}  // namespace unetback::sim
