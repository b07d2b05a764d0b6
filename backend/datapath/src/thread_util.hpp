#pragma once
// Small helpers shared by the queue worker and the control-ring thread:
// thread naming, the wake-up eventfds, and mapping one ring page.

#include <pthread.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <system_error>

#include "unetback/platform/grant_table.hpp"
#include "unetback/rings/shared_ring.hpp"

namespace unetback::datapath {

/// Names the calling thread (truncated to the kernel's 15 characters).
inline void set_thread_name(const std::string& name) {
  (void)::pthread_setname_np(::pthread_self(), name.substr(0, 15).c_str());
}

/// A spin-wait hint to the CPU (x86 PAUSE: yields the core to a sibling
/// hyperthread and, under a hypervisor with pause-loop exiting, the vCPU).
inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}

/// A non-blocking eventfd that wakes a thread's poll(): stop(), an
/// operator's kick.
inline int make_wake_fd() {
  const int fd = ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  if (fd < 0) {
    throw std::system_error(errno, std::generic_category(), "eventfd");
  }
  return fd;
}

inline void signal_wake_fd(int fd) {
  const std::uint64_t one = 1;
  (void)!::write(fd, &one, sizeof(one));
}

/// A ring page mapped from the frontend and attached as a back ring.
template <class Ring>
struct mapped_ring {
  std::unique_ptr<platform::grant_mapping> mapping;
  Ring ring;
};

/// Maps `ref` (one page, read-write) granted by `frontend` and attaches a
/// back ring to it. Throws std::system_error on a map failure and
/// std::runtime_error when the indices are impossible; nothing stays mapped.
template <class Ring>
mapped_ring<Ring> map_back_ring(platform::grant_table& grants, domid frontend, grant_ref ref,
                                const char* what) {
  std::error_code ec;
  const std::array<grant_ref, 1> refs{ref};
  auto mapping = grants.map(frontend, refs, true, ec);
  if (ec || !mapping) {
    throw std::system_error(ec ? ec : std::make_error_code(std::errc::io_error),
                            std::string("map ") + what);
  }
  const rings::ring_page page(static_cast<std::byte*>(mapping->data()), rings::page_size);
  auto attached = Ring::attach(page);
  if (!attached) {
    throw std::runtime_error(std::string(what) + ": " + rings::to_string(attached.error()));
  }
  return mapped_ring<Ring>{std::move(mapping), attached.value()};
}

}  // namespace unetback::datapath
