// Node operations over libxenstore; its results go into c_ptr at once.

#include <cerrno>
#include <cstdlib>
#include <memory>
#include <string>

#include "c_ptr.hpp"
#include "unetback/xs/client.hpp"

namespace unetback::xs {

namespace {

// xs_write takes an unsigned int length; values are bounded by the payload
// maximum (4096) anyway, so longer ones are refused before the call.
unsigned int checked_length(std::string_view value, std::string_view path) {
  if (value.size() > 4096) {
    throw error(E2BIG, "write", path);
  }
  return static_cast<unsigned int>(value.size());
}

}  // namespace

std::optional<std::string> node_ops::read(std::string_view path) {
  const std::string p(path);
  unsigned int len = 0;
  errno = 0;
  c_ptr<char> value(static_cast<char*>(xs_read(handle_, tx_, p.c_str(), &len)));
  if (!value) {
    if (errno == ENOENT) {
      return std::nullopt;
    }
    throw_errno("read", path);
  }
  return std::string(value.get(), len);
}

void node_ops::write(std::string_view path, std::string_view value) {
  const std::string p(path);
  const unsigned int len = checked_length(value, path);
  errno = 0;
  if (!xs_write(handle_, tx_, p.c_str(), value.data(), len)) {
    throw_errno("write", path);
  }
}

void node_ops::mkdir(std::string_view path) {
  const std::string p(path);
  errno = 0;
  if (!xs_mkdir(handle_, tx_, p.c_str())) {
    throw_errno("mkdir", path);
  }
}

void node_ops::rm(std::string_view path) {
  const std::string p(path);
  errno = 0;
  if (!xs_rm(handle_, tx_, p.c_str()) && errno != ENOENT) {
    throw_errno("rm", path);
  }
}

std::vector<std::string> node_ops::directory(std::string_view path) {
  const std::string p(path);
  unsigned int num = 0;
  errno = 0;
  c_ptr<char*> names(xs_directory(handle_, tx_, p.c_str(), &num));
  if (!names) {
    if (errno == ENOENT) {
      return {};
    }
    throw_errno("directory", path);
  }
  std::vector<std::string> out;
  out.reserve(num);
  for (unsigned int i = 0; i < num; ++i) {
    out.emplace_back(names.get()[i]);
  }
  return out;
}

std::vector<permission> node_ops::get_permissions(std::string_view path) {
  const std::string p(path);
  unsigned int num = 0;
  errno = 0;
  c_ptr<xs_permissions> perms(xs_get_permissions(handle_, tx_, p.c_str(), &num));
  if (!perms) {
    throw_errno("get_permissions", path);
  }
  std::vector<permission> out;
  out.reserve(num);
  for (unsigned int i = 0; i < num; ++i) {
    const xs_permissions& entry = perms.get()[i];
    out.push_back(permission{domid{static_cast<std::uint16_t>(entry.id)},
                             static_cast<access>(entry.perms & 3U)});
  }
  return out;
}

void node_ops::set_permissions(std::string_view path, std::span<const permission> perms) {
  if (perms.empty()) {
    throw error(EINVAL, "set_permissions", path);
  }
  std::vector<xs_permissions> raw;
  raw.reserve(perms.size());
  for (const permission& entry : perms) {
    raw.push_back(xs_permissions{entry.id.value(), static_cast<unsigned int>(entry.acc)});
  }
  const std::string p(path);
  errno = 0;
  if (!xs_set_permissions(handle_, tx_, p.c_str(), raw.data(),
                          static_cast<unsigned int>(raw.size()))) {
    throw_errno("set_permissions", path);
  }
}

}  // namespace unetback::xs
