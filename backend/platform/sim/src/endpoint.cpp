#include "unetback/sim/endpoint.hpp"

#include <sys/random.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstring>
#include <stdexcept>

#include <fmt/format.h>

namespace unetback::sim {
namespace {

std::uint64_t random_id() {
  for (int attempt = 0; attempt < 8; ++attempt) {
    std::uint64_t id = 0;
    if (getrandom(&id, sizeof id, 0) == static_cast<ssize_t>(sizeof id) && id != 0) {
      return id;
    }
  }
  throw std::system_error(errno, std::generic_category(), "getrandom");
}

std::filesystem::path endpoint_path(const std::filesystem::path& sim_dir, std::uint64_t id) {
  return sim_dir / "evtchn" / fmt::format("{:016x}", id);
}

const sockaddr* as_sockaddr(const endpoint_address& a) {
  return reinterpret_cast<const sockaddr*>(&a.addr);
}

}  // namespace

std::optional<endpoint_address> endpoint::address_of(const std::filesystem::path& sim_dir,
                                                     std::uint64_t id) {
  const std::string path = endpoint_path(sim_dir, id).string();
  endpoint_address a;
  if (path.size() >= sizeof a.addr.sun_path) {
    return std::nullopt;
  }
  a.addr.sun_family = AF_UNIX;
  std::memcpy(a.addr.sun_path, path.c_str(), path.size() + 1);
  a.len = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + path.size() + 1);
  return a;
}

endpoint::endpoint(const std::filesystem::path& sim_dir) : sim_dir_(sim_dir), id_(random_id()) {
  std::filesystem::create_directories(sim_dir / "evtchn");
  const auto address = address_of(sim_dir, id_);
  if (!address) {
    throw std::invalid_argument(
        fmt::format("sim dir '{}' is too long for a unix socket path", sim_dir.string()));
  }
  self_ = *address;
  fd_ = ::socket(AF_UNIX, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd_ < 0) {
    throw std::system_error(errno, std::generic_category(), "socket(AF_UNIX)");
  }
  if (::bind(fd_, as_sockaddr(self_), self_.len) != 0) {
    const int err = errno;
    ::close(fd_);
    throw std::system_error(err, std::generic_category(),
                            "bind " + std::string(self_.addr.sun_path));
  }
}

endpoint::~endpoint() {
  ::close(fd_);
  ::unlink(self_.addr.sun_path);
}

std::error_code endpoint::send_doorbell(const endpoint_address& to, std::uint32_t port) const {
  if (::sendto(fd_, &port, sizeof port, MSG_DONTWAIT | MSG_NOSIGNAL, as_sockaddr(to), to.len) < 0) {
    return {errno, std::generic_category()};
  }
  return {};
}

std::optional<std::uint32_t> endpoint::receive() const {
  std::array<std::byte, 8> buf{};
  const ssize_t n = ::recv(fd_, buf.data(), buf.size(), MSG_DONTWAIT);
  if (n < 0) {
    return std::nullopt;
  }
  std::uint32_t port = 0;
  if (n == static_cast<ssize_t>(sizeof port)) {
    std::memcpy(&port, buf.data(), sizeof port);
  }
  return port;
}

bool endpoint::alive(const std::filesystem::path& sim_dir, std::uint64_t id) {
  if (id == 0) {
    return true;
  }
  const auto address = address_of(sim_dir, id);
  if (!address) {
    return false;
  }
  const int fd = ::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0) {
    return true;  // cannot tell: assume alive (the safe answer)
  }
  const int rc = ::connect(fd, as_sockaddr(*address), address->len);
  const int err = errno;
  ::close(fd);
  return rc == 0 || (err != ECONNREFUSED && err != ENOENT);
}

void endpoint::remove_stale(const std::filesystem::path& sim_dir, std::uint64_t id) {
  if (id != 0 && !alive(sim_dir, id)) {
    std::error_code ec;
    std::filesystem::remove(endpoint_path(sim_dir, id), ec);
  }
}

}  // namespace unetback::sim
