#include "unetback/steering/tap_steering.hpp"

#include <linux/if_tun.h>
#include <net/if.h>
#include <sys/ioctl.h>

#include <cerrno>
#include <cstring>
#include <string>
#include <system_error>

#include "unetback/steering/rss_table.hpp"

namespace unetback::steering {

namespace {

std::string tap_name(int fd) {
  ifreq ifr{};
  if (::ioctl(fd, TUNGETIFF, &ifr) != 0) {
    throw std::system_error(errno, std::generic_category(), "TUNGETIFF");
  }
  return std::string(ifr.ifr_name, strnlen(ifr.ifr_name, IFNAMSIZ));
}

// The hotplug script may rename the TAP meanwhile: a name read before and
// after the lookup that agree identify the index.
std::uint32_t tap_ifindex(int fd) {
  for (int attempt = 0; attempt < 3; ++attempt) {
    const std::string name = tap_name(fd);
    const unsigned index = ::if_nametoindex(name.c_str());
    if (index != 0 && tap_name(fd) == name) {
      return index;
    }
  }
  throw std::system_error(ENODEV, std::generic_category(), "ifindex of the TAP");
}

void set_steering_program(int tap_fd, int program_fd) {
  if (::ioctl(tap_fd, TUNSETSTEERINGEBPF, &program_fd) != 0) {
    throw std::system_error(errno, std::generic_category(), "TUNSETSTEERINGEBPF");
  }
}

}  // namespace

tap_steering::tap_steering(rss_program& program, int tap_queue_fd)
    : program_(program), tap_queue_fd_(tap_queue_fd), ifindex_(tap_ifindex(tap_queue_fd)) {}

tap_steering::~tap_steering() {
  if (attached_) {
    try {
      set_steering_program(tap_queue_fd_, -1);
    } catch (const std::system_error&) {
      // The TAP is going away with the vif; nothing to restore.
    }
  }
  program_.erase_table(ifindex_);
}

void tap_steering::apply(const rings::hash_config& config) {
  if (config.algorithm != XEN_NETIF_CTRL_HASH_ALGORITHM_TOEPLITZ) {
    if (attached_) {
      set_steering_program(tap_queue_fd_, -1);  // back to the TAP's flow steering
      attached_ = false;
    }
    program_.erase_table(ifindex_);
    return;
  }
  program_.set_table(ifindex_, *make_rss_table(config));
  if (!attached_) {
    set_steering_program(tap_queue_fd_, program_.program_fd());
    attached_ = true;
  }
}

}  // namespace unetback::steering
