#pragma once
// Interface ioctls (SIOCGIFINDEX, SIOCSIFHWADDR, SIOCSIFMTU, SIOCSIFFLAGS...)
// through a control socket. A socket acts on the network namespace it was
// created in, so a TAP made inside a netns keeps a socket made there.

#include <net/if.h>

#include <string>
#include <string_view>

#include "unetback/tap/mac.hpp"
#include "unetback/tap/unique_fd.hpp"

namespace unetback::tap::detail {

/// Owns an AF_UNIX datagram socket used only for interface ioctls.
class if_control {
 public:
  /// Creates the socket in the calling thread's network namespace.
  if_control();

  [[nodiscard]] int index_of(std::string_view name) const;
  [[nodiscard]] std::string name_of(int ifindex) const;
  void set_mac(int ifindex, const mac_address& mac) const;
  [[nodiscard]] mac_address mac(int ifindex) const;
  void set_mtu(int ifindex, unsigned mtu) const;
  [[nodiscard]] unsigned mtu(int ifindex) const;
  /// Sets or clears `flag` (IFF_UP...) in the interface flags.
  void set_flag(int ifindex, unsigned flag, bool on) const;
  [[nodiscard]] unsigned flags(int ifindex) const;
  /// SIOCBRADDIF: enslaves `ifindex` to bridge `bridge`.
  void bridge_add(std::string_view bridge, int ifindex) const;

 private:
  [[nodiscard]] ifreq request_for(int ifindex) const;
  void call(unsigned long request, ifreq& ifr, std::string_view what) const;
  unique_fd fd_;
};

/// Copies `name` into ifr.ifr_name; throws if it does not fit IFNAMSIZ-1.
void set_ifr_name(ifreq& ifr, std::string_view name);

}  // namespace unetback::tap::detail
