// event_channel over libxenevtchn (xenevtchn.h; netif-reference §5.2).
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <unistd.h>
extern "C" {
#include <xenevtchn.h>
}

#include <array>
#include <cerrno>
#include <string>
#include <system_error>
#include <type_traits>

#include <spdlog/spdlog.h>

#include "irq_affinity.hpp"
#include "unetback/platform/xen/xen_platform.hpp"
#include "unetback/util/rate_limit.hpp"

namespace unetback::platform {
namespace {

/// The kernel's name of a thread: at most 15 characters.
std::string comm_of(std::string_view name) {
  return std::string(name.substr(0, 15));
}

/// Names the calling thread `name` for its lifetime, then restores the old name.
class thread_name_scope {
 public:
  explicit thread_name_scope(const std::string& name) {
    active_ = !name.empty() &&
              ::pthread_getname_np(::pthread_self(), saved_.data(), saved_.size()) == 0 &&
              ::pthread_setname_np(::pthread_self(), name.c_str()) == 0;
  }
  ~thread_name_scope() {
    if (active_) {
      (void)::pthread_setname_np(::pthread_self(), saved_.data());
    }
  }
  thread_name_scope(const thread_name_scope&) = delete;
  thread_name_scope& operator=(const thread_name_scope&) = delete;

 private:
  std::array<char, 16> saved_{};
  bool active_ = false;
};

class xen_event_channel final : public event_channel {
 public:
  explicit xen_event_channel(std::string comm) : h_(open_as(comm)), comm_(std::move(comm)) {
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

  std::optional<unsigned> colocate() override {
    if (comm_.empty()) {
      return std::nullopt;
    }
    return xen_irq::colocate_irqs("evtchn:" + comm_);
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
  // The evtchn device names every interrupt of this handle after the thread
  // that opened it ("evtchn:<comm>"): open under `comm` so colocate() finds them.
  static xenevtchn_handle* open_as(const std::string& comm) {
    const thread_name_scope as(comm);
    return xenevtchn_open(nullptr, 0);
  }

  xenevtchn_handle* h_;
  std::string comm_;
  bool nonblocking_ = false;
};

}  // namespace

std::unique_ptr<event_channel> xen_platform::open_event_channel(std::string_view owner) {
  return std::make_unique<xen_event_channel>(comm_of(owner));
}

}  // namespace unetback::platform
