#include "kick_request.hpp"

#include <unistd.h>

#include <cstdint>

#include "thread_util.hpp"

namespace unetback::datapath {

kick_request::kick_request() : fd_(make_wake_fd()) {}

kick_request::~kick_request() {
  ::close(fd_);
}

void kick_request::post() {
  signal_wake_fd(fd_);
}

bool kick_request::take() {
  std::uint64_t pending = 0;
  return ::read(fd_, &pending, sizeof(pending)) == sizeof(pending) && pending > 0;
}

}  // namespace unetback::datapath
