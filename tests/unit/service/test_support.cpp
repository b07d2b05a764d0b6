#include "test_support.hpp"

#include <cap-ng.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <stdexcept>
#include <system_error>

namespace unetback::service::test {

fake_notify_socket::fake_notify_socket() {
  const auto path = (dir_.path() / "notify").string();
  fd_ = ::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
  if (fd_ < 0 || ::bind(fd_, reinterpret_cast<const sockaddr*>(&addr), sizeof(addr)) != 0) {
    throw std::system_error(errno, std::generic_category(), "bind notify socket");
  }
  ::setenv("NOTIFY_SOCKET", path.c_str(), 1);
}

fake_notify_socket::~fake_notify_socket() {
  ::unsetenv("NOTIFY_SOCKET");
  ::close(fd_);
}

std::optional<std::string> fake_notify_socket::receive(std::chrono::milliseconds timeout) {
  pollfd p{fd_, POLLIN, 0};
  if (::poll(&p, 1, static_cast<int>(timeout.count())) != 1) {
    return std::nullopt;
  }
  std::array<char, 4096> buf{};
  const auto n = ::recv(fd_, buf.data(), buf.size(), 0);
  if (n < 0) {
    return std::nullopt;
  }
  return std::string(buf.data(), static_cast<std::size_t>(n));
}

int fake_notify_socket::drain() {
  int n = 0;
  while (receive(std::chrono::milliseconds(0))) {
    ++n;
  }
  return n;
}

child_result run_in_child(const std::function<std::string()>& fn) {
  std::array<int, 2> pipefd{};
  if (::pipe(pipefd.data()) != 0) {
    throw std::system_error(errno, std::generic_category(), "pipe");
  }
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::close(pipefd[0]);
    int code = 0;
    std::string out;
    try {
      out = fn();
    } catch (const std::exception& e) {
      out = std::string("exception: ") + e.what();
      code = 1;
    }
    const auto written = ::write(pipefd[1], out.data(), out.size());
    ::_exit(written == static_cast<ssize_t>(out.size()) ? code : 2);
  }
  ::close(pipefd[1]);
  child_result result;
  std::array<char, 4096> buf{};
  for (ssize_t n; (n = ::read(pipefd[0], buf.data(), buf.size())) > 0;) {
    result.output.append(buf.data(), static_cast<std::size_t>(n));
  }
  ::close(pipefd[0]);
  int status = 0;
  ::waitpid(pid, &status, 0);
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  result.signal = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
  return result;
}

bool have_capability(int cap) {
  capng_get_caps_process();
  return capng_have_capability(CAPNG_EFFECTIVE, static_cast<unsigned>(cap)) == 1;
}

}  // namespace unetback::service::test
