// event_channel over libxenevtchn (xenevtchn.h; netif-reference §5.2).
#include <poll.h>
extern "C" {
#include <xenevtchn.h>
}

#include <cerrno>
#include <system_error>

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

  // xenevtchn_pending() blocks when nothing is pending and O_NONBLOCK on the
  // fd is unreliable (xenevtchn.h), so poll first with a zero timeout.
  std::optional<evtchn_port> pending() override {
    pollfd pfd{xenevtchn_fd(h_), POLLIN, 0};
    if (::poll(&pfd, 1, 0) <= 0 || (pfd.revents & POLLIN) == 0) {
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

 private:
  xenevtchn_handle* h_;
};

}  // namespace

std::unique_ptr<event_channel> xen_platform::open_event_channel() {
  return std::make_unique<xen_event_channel>();
}

}  // namespace unetback::platform
