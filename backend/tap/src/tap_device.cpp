#include "unetback/tap/tap_device.hpp"

#include <fcntl.h>
#include <linux/if_tun.h>
#include <net/if.h>
#include <sys/ioctl.h>

#include <cerrno>
#include <optional>
#include <system_error>

#include "ifreq.hpp"
#include "tun_fd.hpp"
#include "unetback/tap/netns.hpp"
#include "unetback/tap/unique_fd.hpp"

namespace unetback::tap {

namespace {

// linux/if_tun.h: every queue of a multi-queue TAP must use the same flags.
constexpr int tap_flags = IFF_TAP | IFF_NO_PI | IFF_VNET_HDR | IFF_MULTI_QUEUE;

[[noreturn]] void throw_errno(const std::string& what) {
  throw std::system_error(errno, std::generic_category(), what);
}

// Opens /dev/net/tun and attaches it to `name` (creating the TAP if absent).
unique_fd open_tun(std::string_view name) {
  unique_fd fd(::open("/dev/net/tun", O_RDWR | O_CLOEXEC));
  if (fd.get() < 0) {
    throw_errno("open /dev/net/tun");
  }
  ifreq ifr{};
  detail::set_ifr_name(ifr, name);
  ifr.ifr_flags = static_cast<short>(tap_flags);
  if (::ioctl(fd.get(), TUNSETIFF, &ifr) != 0) {
    throw_errno("TUNSETIFF " + std::string(name));
  }
  return fd;
}

}  // namespace

std::optional<std::string> tun_device_problem() {
  const unique_fd fd(::open("/dev/net/tun", O_RDWR | O_CLOEXEC));
  if (fd.get() >= 0) {
    return std::nullopt;
  }
  const std::error_code ec(errno, std::generic_category());
  std::string why = "cannot create TAP devices: open /dev/net/tun: " + ec.message();
  if (ec == std::errc::no_such_file_or_directory || ec == std::errc::no_such_device) {
    why += " (load the tun module: modprobe tun)";
  }
  return why;
}

struct tap_device::impl {
  std::optional<netns_handle> netns;
  detail::if_control ctl;  // made in the device's namespace
  unique_fd tun;           // the control queue, kept detached

  // Device-wide TUN ioctls fail with EBADFD on a detached queue: attach the
  // control fd for the call only (traffic steered to it meanwhile is lost;
  // these calls happen at setup and teardown).
  template <class F>
  void while_attached(F&& f) {
    detail::tun_set_queue_attached(tun.get(), true);
    try {
      f(tun.get());
    } catch (...) {
      detail::tun_set_queue_attached(tun.get(), false);
      throw;
    }
    detail::tun_set_queue_attached(tun.get(), false);
  }
};

tap_device::tap_device(std::unique_ptr<impl> p) : impl_(std::move(p)) {}

tap_device tap_device::create(const tap_config& config) {
  auto p = std::make_unique<impl>();
  p->tun = open_tun(config.name);
  const int fd = p->tun.get();
  int hdr_size = static_cast<int>(vnet_hdr_size);
  if (::ioctl(fd, TUNSETVNETHDRSZ, &hdr_size) != 0) {
    throw_errno("TUNSETVNETHDRSZ " + config.name);
  }
  if (::ioctl(fd, TUNSETOFFLOAD, static_cast<unsigned long>(config.offloads)) != 0) {
    throw_errno("TUNSETOFFLOAD " + config.name);
  }
  const int ifindex = p->ctl.index_of(config.name);
  if (config.persist && ::ioctl(fd, TUNSETPERSIST, 1UL) != 0) {
    throw_errno("TUNSETPERSIST " + config.name);
  }
  detail::tun_set_queue_attached(fd, false);
  tap_device dev(std::move(p));
  dev.ifindex_ = ifindex;
  return dev;
}

tap_device tap_device::create_in_netns(std::string_view netns, const tap_config& config) {
  netns_handle target = netns_handle::open_named(netns);
  std::optional<tap_device> dev;
  {
    const netns_scope inside(target);
    dev.emplace(create(config));  // the tun fd and control socket belong to `netns`
  }
  dev->impl_->netns.emplace(std::move(target));
  return std::move(*dev);
}

tap_device::~tap_device() = default;

tap_device::tap_device(tap_device&& other) noexcept
    : impl_(std::move(other.impl_)), ifindex_(other.ifindex_) {}

tap_device& tap_device::operator=(tap_device&& other) noexcept {
  impl_ = std::move(other.impl_);
  ifindex_ = other.ifindex_;
  return *this;
}

std::string tap_device::name() const {
  return impl_->ctl.name_of(ifindex_);
}

std::unique_ptr<tap_queue> tap_device::open_queue() {
  const std::string current = name();
  std::optional<netns_scope> inside;
  if (impl_->netns) {
    inside.emplace(*impl_->netns);  // TUNSETIFF looks the name up in the fd's namespace
  }
  unique_fd fd = open_tun(current);
  return std::make_unique<tap_queue>(fd.release());
}

std::vector<std::unique_ptr<tap_queue>> tap_device::open_queues(unsigned count) {
  std::vector<std::unique_ptr<tap_queue>> queues;
  queues.reserve(count);
  for (unsigned i = 0; i < count; ++i) {
    queues.push_back(open_queue());
  }
  return queues;
}

void tap_device::set_mac(const mac_address& mac) {
  impl_->ctl.set_mac(ifindex_, mac);
}

mac_address tap_device::mac() const {
  return impl_->ctl.mac(ifindex_);
}

void tap_device::set_mtu(unsigned mtu) {
  impl_->ctl.set_mtu(ifindex_, mtu);
}

unsigned tap_device::mtu() const {
  return impl_->ctl.mtu(ifindex_);
}

void tap_device::set_up(bool up) {
  impl_->ctl.set_flag(ifindex_, IFF_UP, up);
}

bool tap_device::is_up() const {
  return (impl_->ctl.flags(ifindex_) & IFF_UP) != 0;
}

void tap_device::set_offloads(unsigned tun_flags) {
  impl_->while_attached([tun_flags](int fd) {
    if (::ioctl(fd, TUNSETOFFLOAD, static_cast<unsigned long>(tun_flags)) != 0) {
      throw_errno("TUNSETOFFLOAD");
    }
  });
}

void tap_device::set_carrier(bool on) {
  impl_->while_attached([on](int fd) {
    if (const long rc = detail::tun_set_carrier(fd, on); rc != 0) {
      throw std::system_error(static_cast<int>(-rc), std::generic_category(), "TUNSETCARRIER");
    }
  });
}

void tap_device::set_persist(bool persist) {
  impl_->while_attached([persist](int fd) {
    if (::ioctl(fd, TUNSETPERSIST, persist ? 1UL : 0UL) != 0) {
      throw_errno("TUNSETPERSIST");
    }
  });
}

void tap_device::remove() {
  if (impl_) {
    set_persist(false);
    impl_.reset();
  }
}

void add_to_bridge(std::string_view bridge, int ifindex) {
  const detail::if_control ctl;
  ctl.bridge_add(bridge, ifindex);
}

}  // namespace unetback::tap
