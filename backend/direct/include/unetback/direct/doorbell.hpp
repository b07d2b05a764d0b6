#pragma once
// A queue's doorbell on the direct path (docs/direct-path.md, "The hand-off"):
// an eventfd in the worker's poll set that a paired vif's worker rings after a
// push that found this queue's ring armed. It counts its rings too, so the
// consumer clears it (a system call) only when it was rung since it last
// looked, not every time it finds its rings empty.

#include <atomic>
#include <cstdint>

namespace unetback::direct {

class doorbell {
 public:
  /// Throws std::system_error if the eventfd cannot be made.
  doorbell();
  ~doorbell();
  doorbell(const doorbell&) = delete;
  doorbell& operator=(const doorbell&) = delete;

  [[nodiscard]] int fd() const { return fd_; }
  /// Any thread: makes fd() readable, then counts the ring.
  void ring();
  /// The consumer: whether it was rung since the count in `seen`, which it updates.
  [[nodiscard]] bool rung_since(std::uint64_t& seen) const;
  /// The consumer: makes fd() unreadable until the next ring().
  void clear() const;

 private:
  int fd_ = -1;
  std::atomic<std::uint64_t> rings_{0};
};

}  // namespace unetback::direct
