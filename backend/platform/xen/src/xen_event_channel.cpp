// event_channel over libxenevtchn (xenevtchn.h; docs/protocol.md §5.2).
#include <fcntl.h>
#include <poll.h>
#include <unistd.h>
extern "C" {
#include <xenevtchn.h>
}

#include <cerrno>
#include <system_error>
#include <type_traits>

#include <spdlog/spdlog.h>

#include "unetback/platform/xen/xen_platform.hpp"
#include "unetback/util/rate_limit.hpp"

namespace unetback::platform {
namespace {

class xen_event_channel final : public event_channel {
 public:
  xen_event_channel() : h_(xenevtchn_open(nullptr, 0)) {
    if (h_ == nullptr) {
      throw std::system_error(errno, std::generic_category(), "xenevtchn_open");
    }
    // Linux's evtchn device honours O_NONBLOCK (read: EAGAIN when nothing is
    // pending), so take_pending() needs no poll() first.
    const int fd = xenevtchn_fd(h_);
    const int flags = ::fcntl(fd, F_GETFL);
    nonblocking_ = flags >= 0 && ::fcntl(fd, F_SETFL, flags | O_NONBLOCK) == 0;
  }
  ~xen_event_channel() override { xenevtchn_close(h_); }  // unbinds what is left
  xen_event_channel(const xen_event_channel&) = delete;
  xen_event_channel& operator=(const xen_event_channel&) = delete;

  evtchn_port bind_interdomain(domid remote, evtchn_port remote_port,
                               std::error_code& ec) override {
    ec.clear();
    const xenevtchn_port_or_error_t p =
        xenevtchn_bind_interdomain(h_, remote.value(), remote_port.value());
    if (p < 0) {
      ec = {errno, std::generic_category()};
      return evtchn_port{};
    }
    return evtchn_port{static_cast<std::uint32_t>(p)};
  }

  evtchn_port alloc_unbound(domid remote, std::error_code& ec) override {
    ec.clear();
    const xenevtchn_port_or_error_t p = xenevtchn_bind_unbound_port(h_, remote.value());
    if (p < 0) {
      ec = {errno, std::generic_category()};
      return evtchn_port{};
    }
    return evtchn_port{static_cast<std::uint32_t>(p)};
  }

  void unbind(evtchn_port local) override {
    if (xenevtchn_unbind(h_, local.value()) != 0) {
      UNETBACK_LOG_RATELIMITED(spdlog::level::warn, "xenevtchn_unbind({}): {}", local.value(),
                               std::error_code(errno, std::generic_category()).message());
    }
  }

  void notify(evtchn_port local) override {
    if (xenevtchn_notify(h_, local.value()) != 0) {
      UNETBACK_LOG_RATELIMITED(spdlog::level::warn, "xenevtchn_notify({}): {}", local.value(),
                               std::error_code(errno, std::generic_category()).message());
    }
  }

  [[nodiscard]] int fd() const override { return xenevtchn_fd(h_); }

  // xenevtchn_pending() blocks when nothing is pending on a blocking fd
  // (xenevtchn.h calls O_NONBLOCK unreliable across platforms): poll first
  // unless the constructor made the fd non-blocking.
  std::optional<evtchn_port> pending() override {
    pollfd pfd{xenevtchn_fd(h_), POLLIN, 0};
    if (!nonblocking_ && (::poll(&pfd, 1, 0) <= 0 || (pfd.revents & POLLIN) == 0)) {
      return std::nullopt;
    }
    const xenevtchn_port_or_error_t p = xenevtchn_pending(h_);
    if (p < 0) {
      return std::nullopt;
    }
    return evtchn_port{static_cast<std::uint32_t>(p)};
  }

  void unmask(evtchn_port local) override {
    if (xenevtchn_unmask(h_, local.value()) != 0) {
      UNETBACK_LOG_RATELIMITED(spdlog::level::warn, "xenevtchn_unmask({}): {}", local.value(),
                               std::error_code(errno, std::generic_category()).message());
    }
  }

  // The Linux device behind libxenevtchn reads every pending port into one
  // buffer (xenevtchn_pending() reads one), and unmasks every port written to
  // it (xenevtchn_unmask() writes one): one system call per batch.
  std::size_t take_pending(std::span<evtchn_port> out) override {
    // The device's evtchn_port_t is an unsigned int; evtchn_port has its layout.
    static_assert(sizeof(evtchn_port) == sizeof(unsigned int) &&
                  std::is_trivially_copyable_v<evtchn_port>);
    if (!nonblocking_) {
      return event_channel::take_pending(out);
    }
    const ssize_t n = ::read(xenevtchn_fd(h_), out.data(), out.size_bytes());
    if (n <= 0) {
      return 0;  // EAGAIN: nothing pending
    }
    return static_cast<std::size_t>(n) / sizeof(evtchn_port);
  }

  void unmask_all(std::span<const evtchn_port> ports) override {
    if (ports.empty()) {
      return;
    }
    if (::write(xenevtchn_fd(h_), ports.data(), ports.size_bytes()) !=
        static_cast<ssize_t>(ports.size_bytes())) {
      UNETBACK_LOG_RATELIMITED(spdlog::level::warn, "unmasking {} event channels: {}", ports.size(),
                               std::error_code(errno, std::generic_category()).message());
    }
  }

 private:
  xenevtchn_handle* h_;
  bool nonblocking_ = false;
};

}  // namespace

std::unique_ptr<event_channel> xen_platform::open_event_channel() {
  return std::make_unique<xen_event_channel>();
}

}  // namespace unetback::platform
