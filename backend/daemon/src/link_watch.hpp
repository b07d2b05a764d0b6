#pragma once
// The daemon's rtnetlink watch (RTMGRP_LINK) on the control thread: every
// link message goes to the supervisor, which tells the vif whose TAP it
// names (bridge joined or left, TAP deleted). Without it an operator
// removing a bridge would cut guests off with nothing in the log.

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/posix/stream_descriptor.hpp>

#include <array>
#include <cstddef>
#include <functional>

#include "unetback/tap/link_events.hpp"

namespace unetback::daemon {

class link_watch {
 public:
  using handler = std::function<void(const tap::link_event&)>;
  /// Opens and binds the netlink socket. Throws std::system_error.
  link_watch(const boost::asio::any_io_executor& executor, handler on_event);
  /// Starts reading on the executor.
  void start();

 private:
  void wait();
  void drain();

  boost::asio::posix::stream_descriptor socket_;
  handler on_event_;
  std::array<std::byte, 32768> buf_{};
};

}  // namespace unetback::daemon
