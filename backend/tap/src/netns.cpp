#include "unetback/tap/netns.hpp"

#include <fcntl.h>
#include <sched.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <system_error>

namespace unetback::tap {

namespace {

int open_or_throw(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    throw std::system_error(errno, std::generic_category(), "open " + path);
  }
  return fd;
}

}  // namespace

netns_handle netns_handle::open_named(std::string_view name) {
  if (name.empty() || name.find('/') != std::string_view::npos || name == "." || name == "..") {
    throw std::system_error(EINVAL, std::generic_category(),
                            "bad netns name '" + std::string(name) + "'");
  }
  return netns_handle(open_or_throw("/run/netns/" + std::string(name)));
}

netns_handle netns_handle::open_current() {
  return netns_handle(open_or_throw("/proc/thread-self/ns/net"));
}

netns_scope::netns_scope(const netns_handle& target) : saved_(netns_handle::open_current()) {
  if (::setns(target.fd(), CLONE_NEWNET) != 0) {
    throw std::system_error(errno, std::generic_category(), "setns into network namespace");
  }
}

netns_scope::~netns_scope() {
  if (::setns(saved_.fd(), CLONE_NEWNET) != 0) {
    // Staying in the wrong namespace would silently misdirect every later
    // socket of this thread: that is our bug, not a recoverable condition.
    std::perror("unetback: setns back to the original network namespace");
    std::abort();
  }
}

}  // namespace unetback::tap
