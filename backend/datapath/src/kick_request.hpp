#pragma once
// `unetbackctl kick VIF [QUEUE]` (like Linux xen-netback's debugfs `kick`):
// the control thread posts a request, the queue's worker answers it by
// notifying the guest on every port of the queue and looking at both rings
// again (worker::wait). A lost event on either side (a guest kick that never
// arrived, a notification the guest missed) is recovered this way. The
// worker owns the event-channel handle (never shared between threads), so
// the notification is sent from the worker, woken through an eventfd in its
// poll set.

namespace unetback::datapath {

class kick_request {
 public:
  kick_request();  ///< throws std::system_error if no eventfd can be made
  ~kick_request();
  kick_request(const kick_request&) = delete;
  kick_request& operator=(const kick_request&) = delete;

  /// Any thread: asks the worker for a kick (coalesced until it answers).
  void post();
  /// The fd the worker polls (readable while a kick is pending).
  [[nodiscard]] int fd() const { return fd_; }
  /// Worker: takes the pending request; true if there was one.
  [[nodiscard]] bool take();

 private:
  int fd_ = -1;
};

}  // namespace unetback::datapath
