#include "kick_request.hpp"

#include <sys/eventfd.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <system_error>

namespace unetback::datapath {

kick_request::kick_request() : fd_(::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC)) {
  if (fd_ < 0) {
    throw std::system_error(errno, std::generic_category(), "eventfd (kick)");
  }
}

kick_request::~kick_request() {
  ::close(fd_);
}

void kick_request::post() {
  const std::uint64_t one = 1;
  (void)!::write(fd_, &one, sizeof(one));
}

bool kick_request::take() {
  std::uint64_t pending = 0;
  return ::read(fd_, &pending, sizeof(pending)) == sizeof(pending) && pending > 0;
}

void answer_kick(platform::event_channel& channel, evtchn_port tx_port, evtchn_port rx_port,
                 queue_counters& counters) {
  bump(counters.kicks);
  channel.notify(tx_port);
  bump(counters.notify_sent);
  if (rx_port != tx_port) {
    channel.notify(rx_port);
    bump(counters.notify_sent);
  }
}

}  // namespace unetback::datapath
