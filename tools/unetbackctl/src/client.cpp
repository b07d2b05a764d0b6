#include "client.hpp"

#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>

namespace unetback::ctl {

namespace {

struct fd_guard {
  int fd;
  ~fd_guard() { ::close(fd); }
};

int connect_to(const std::string& path) {
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (path.size() >= sizeof(addr.sun_path)) {
    throw std::runtime_error("control socket path too long: " + path);
  }
  std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
  const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) {
    throw std::runtime_error(std::string("socket: ") + std::strerror(errno));
  }
  if (::connect(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof(addr)) != 0) {
    const int err = errno;
    ::close(fd);
    throw std::runtime_error("cannot reach unetbackd at " + path + ": " + std::strerror(err) +
                             " (is the daemon running? see --socket)");
  }
  return fd;
}

}  // namespace

nlohmann::json call(const std::string& socket_path, const nlohmann::json& request) {
  const fd_guard sock{connect_to(socket_path)};
  const std::string line = request.dump() + "\n";
  if (::send(sock.fd, line.data(), line.size(), MSG_NOSIGNAL) !=
      static_cast<ssize_t>(line.size())) {
    throw std::runtime_error(std::string("send: ") + std::strerror(errno));
  }
  std::string reply;
  char buf[65536];
  // Only the new bytes are searched: a `metrics` reply of many vifs is megabytes.
  for (std::size_t searched = 0; reply.find('\n', searched) == std::string::npos;) {
    searched = reply.size();
    const ssize_t n = ::recv(sock.fd, buf, sizeof(buf), 0);
    if (n <= 0) {
      throw std::runtime_error("unetbackd closed the connection without a reply");
    }
    reply.append(buf, static_cast<std::size_t>(n));
  }
  const auto parsed = nlohmann::json::parse(reply, nullptr, false);
  if (!parsed.is_object() || !parsed.contains("ok")) {
    throw std::runtime_error("malformed reply from unetbackd");
  }
  if (!parsed["ok"].get<bool>()) {
    throw std::runtime_error(parsed.value("error", "unknown error"));
  }
  return parsed.value("result", nlohmann::json{});
}

}  // namespace unetback::ctl
