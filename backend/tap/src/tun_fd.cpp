#include "tun_fd.hpp"

#include <linux/if_tun.h>
#include <net/if.h>
#include <sys/ioctl.h>

#include <cerrno>
#include <system_error>

namespace unetback::tap::detail {

long tun_set_carrier(int fd, bool on) {
  int value = on ? 1 : 0;
  return ::ioctl(fd, TUNSETCARRIER, &value) == 0 ? 0 : -static_cast<long>(errno);
}

void tun_set_queue_attached(int fd, bool attached) {
  ifreq ifr{};
  ifr.ifr_flags = static_cast<short>(attached ? IFF_ATTACH_QUEUE : IFF_DETACH_QUEUE);
  if (::ioctl(fd, TUNSETQUEUE, &ifr) != 0) {
    throw std::system_error(errno, std::generic_category(),
                            attached ? "TUNSETQUEUE attach" : "TUNSETQUEUE detach");
  }
}

}  // namespace unetback::tap::detail
