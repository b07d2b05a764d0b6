#include "unetback/direct/doorbell.hpp"

#include <sys/eventfd.h>
#include <unistd.h>

#include <cerrno>
#include <system_error>

namespace unetback::direct {

doorbell::doorbell() : fd_(::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC)) {
  if (fd_ < 0) {
    throw std::system_error(errno, std::generic_category(), "eventfd (direct path doorbell)");
  }
}

doorbell::~doorbell() {
  ::close(fd_);
}

void doorbell::ring() {
  const std::uint64_t one = 1;
  // Fails only when the count would overflow: the fd is readable anyway.
  [[maybe_unused]] const auto rc = ::write(fd_, &one, sizeof one);
  // Counted after the write: a consumer that sees the count clears the write
  // too; one that does not yet sees the fd readable and looks again.
  rings_.fetch_add(1, std::memory_order_release);
}

bool doorbell::rung_since(std::uint64_t& seen) const {
  const std::uint64_t now = rings_.load(std::memory_order_acquire);
  if (now == seen) {
    return false;
  }
  seen = now;
  return true;
}

void doorbell::clear() const {
  std::uint64_t count = 0;
  [[maybe_unused]] const auto rc = ::read(fd_, &count, sizeof count);  // EAGAIN: not rung
}

}  // namespace unetback::direct
