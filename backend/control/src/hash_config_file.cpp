#include "hash_config_file.hpp"

#include <fcntl.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <system_error>
#include <type_traits>

#include "unetback/util/private_file.hpp"

namespace unetback::control {
namespace {

struct hash_record {
  static constexpr std::uint64_t magic_value = 0x31687361'48557155ULL;  // "UqUHash1"
  std::uint64_t magic = magic_value;
  std::uint64_t size = sizeof(rings::hash_config);
  rings::hash_config config;
};
static_assert(std::is_trivially_copyable_v<hash_record>);

bool write_all(int fd, const void* data, std::size_t n) {
  const auto* p = static_cast<const char*>(data);
  while (n > 0) {
    const ssize_t w = ::write(fd, p, n);
    if (w < 0 && errno == EINTR) {
      continue;
    }
    if (w <= 0) {
      return false;
    }
    p += w;
    n -= static_cast<std::size_t>(w);
  }
  return true;
}

}  // namespace

void save_hash_config(const std::string& path, const rings::hash_config& config) {
  hash_record r;
  r.config = config;
  const std::string tmp = path + ".new";
  ::unlink(tmp.c_str());  // a file we create ourselves, never one found there
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
  const bool ok = fd >= 0 && write_all(fd, &r, sizeof(r));
  const int err = errno;
  if (fd >= 0) {
    ::close(fd);
  }
  if (!ok || ::rename(tmp.c_str(), path.c_str()) != 0) {
    spdlog::warn("{}: could not save the hash configuration: {}", path,
                 std::strerror(ok ? errno : err));
    ::unlink(tmp.c_str());
  }
}

std::optional<rings::hash_config> load_hash_config(const std::string& path) {
  int fd = -1;
  try {
    fd = util::open_private_file(path, O_RDONLY);
  } catch (const std::system_error& e) {
    if (e.code() != std::errc::no_such_file_or_directory) {
      spdlog::warn("saved hash configuration not used: {}", e.what());
    }
    return std::nullopt;
  }
  hash_record r;
  char extra = 0;
  const ssize_t n = ::read(fd, &r, sizeof(r));
  const ssize_t more = ::read(fd, &extra, 1);
  ::close(fd);
  if (n != static_cast<ssize_t>(sizeof(r)) || more != 0 || r.magic != hash_record::magic_value ||
      r.size != sizeof(rings::hash_config)) {
    return std::nullopt;
  }
  return r.config;
}

}  // namespace unetback::control
