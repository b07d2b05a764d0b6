#include "ifreq.hpp"

#include <linux/sockios.h>
#include <net/if_arp.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <system_error>

namespace unetback::tap::detail {

void set_ifr_name(ifreq& ifr, std::string_view name) {
  if (name.empty() || name.size() >= IFNAMSIZ) {
    throw std::system_error(EINVAL, std::generic_category(),
                            "interface name '" + std::string(name) + "' must be 1-15 characters");
  }
  std::memset(ifr.ifr_name, 0, IFNAMSIZ);
  std::memcpy(ifr.ifr_name, name.data(), name.size());
}

if_control::if_control() : fd_(::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0)) {
  if (fd_.get() < 0) {
    throw std::system_error(errno, std::generic_category(), "control socket");
  }
}

void if_control::call(unsigned long request, ifreq& ifr, std::string_view what) const {
  if (::ioctl(fd_.get(), request, &ifr) != 0) {
    throw std::system_error(errno, std::generic_category(),
                            std::string(what) + " " + std::string(ifr.ifr_name));
  }
}

int if_control::index_of(std::string_view name) const {
  ifreq ifr{};
  set_ifr_name(ifr, name);
  call(SIOCGIFINDEX, ifr, "SIOCGIFINDEX");
  return ifr.ifr_ifindex;
}

std::string if_control::name_of(int ifindex) const {
  ifreq ifr{};
  ifr.ifr_ifindex = ifindex;
  call(SIOCGIFNAME, ifr, "SIOCGIFNAME");
  return std::string(ifr.ifr_name, strnlen(ifr.ifr_name, IFNAMSIZ));
}

// The name is looked up from the index on every call: the hotplug script
// may have renamed the interface (backend `vifname`).
ifreq if_control::request_for(int ifindex) const {
  ifreq ifr{};
  set_ifr_name(ifr, name_of(ifindex));
  return ifr;
}

void if_control::set_mac(int ifindex, const mac_address& mac) const {
  ifreq ifr = request_for(ifindex);
  ifr.ifr_hwaddr.sa_family = ARPHRD_ETHER;
  std::memcpy(ifr.ifr_hwaddr.sa_data, mac.data(), mac.size());
  call(SIOCSIFHWADDR, ifr, "SIOCSIFHWADDR");
}

mac_address if_control::mac(int ifindex) const {
  ifreq ifr = request_for(ifindex);
  call(SIOCGIFHWADDR, ifr, "SIOCGIFHWADDR");
  mac_address mac{};
  std::memcpy(mac.data(), ifr.ifr_hwaddr.sa_data, mac.size());
  return mac;
}

void if_control::set_mtu(int ifindex, unsigned mtu) const {
  ifreq ifr = request_for(ifindex);
  ifr.ifr_mtu = static_cast<int>(mtu);
  call(SIOCSIFMTU, ifr, "SIOCSIFMTU");
}

unsigned if_control::mtu(int ifindex) const {
  ifreq ifr = request_for(ifindex);
  call(SIOCGIFMTU, ifr, "SIOCGIFMTU");
  return static_cast<unsigned>(ifr.ifr_mtu);
}

unsigned if_control::flags(int ifindex) const {
  ifreq ifr = request_for(ifindex);
  call(SIOCGIFFLAGS, ifr, "SIOCGIFFLAGS");
  return static_cast<unsigned short>(ifr.ifr_flags);
}

void if_control::set_flag(int ifindex, unsigned flag, bool on) const {
  ifreq ifr = request_for(ifindex);
  call(SIOCGIFFLAGS, ifr, "SIOCGIFFLAGS");
  unsigned value = static_cast<unsigned short>(ifr.ifr_flags);
  value = on ? (value | flag) : (value & ~flag);
  ifr.ifr_flags = static_cast<short>(value);
  call(SIOCSIFFLAGS, ifr, "SIOCSIFFLAGS");
}

void if_control::bridge_add(std::string_view bridge, int ifindex) const {
  ifreq ifr{};
  set_ifr_name(ifr, bridge);
  ifr.ifr_ifindex = ifindex;
  call(SIOCBRADDIF, ifr, "SIOCBRADDIF");
}

}  // namespace unetback::tap::detail
