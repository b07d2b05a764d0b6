#include "unetback/sim/netfront/netns_thread.hpp"

#include <fcntl.h>
#include <sched.h>
#include <unistd.h>

#include <cerrno>
#include <exception>
#include <system_error>
#include <thread>

namespace unetback::sim {
namespace {

void enter_netns(const std::string& netns) {
  if (netns.empty()) {
    return;
  }
  const std::string path = "/run/netns/" + netns;
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    throw std::system_error(errno, std::generic_category(), "open " + path);
  }
  const int rc = ::setns(fd, CLONE_NEWNET);
  const int err = errno;
  ::close(fd);
  if (rc != 0) {
    throw std::system_error(err, std::generic_category(), "setns " + path);
  }
}

}  // namespace

void run_in_netns(const std::string& netns, const std::function<void()>& work) {
  std::exception_ptr error;
  std::thread t([&] {
    try {
      enter_netns(netns);
      work();
    } catch (...) {
      error = std::current_exception();
    }
  });
  t.join();
  if (error) {
    std::rethrow_exception(error);
  }
}

}  // namespace unetback::sim
