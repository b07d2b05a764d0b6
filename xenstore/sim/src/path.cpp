#include "unetback/xs/sim/path.hpp"

namespace unetback::xs::sim {

namespace {

bool valid_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
         c == '/' || c == '_' || c == '@';
}

}  // namespace

std::string home_path(domid d) {
  return "/local/domain/" + std::to_string(d.value());
}

bool is_valid_absolute(std::string_view path) {
  if (path.empty() || path.front() != '/' || path.size() > abs_path_max) {
    return false;
  }
  if (path == "/") {
    return true;
  }
  if (path.back() == '/' || path.find("//") != std::string_view::npos) {
    return false;
  }
  for (const char c : path) {
    if (!valid_char(c)) {
      return false;
    }
  }
  return true;
}

bool is_special(std::string_view path) {
  return path == "@introduceDomain" || path == "@releaseDomain";
}

std::optional<std::string> canonicalize(std::string_view path, domid d) {
  if (path.empty()) {
    return std::nullopt;
  }
  if (path.front() == '/') {
    if (!is_valid_absolute(path)) {
      return std::nullopt;
    }
    return std::string(path);
  }
  if (path.size() > rel_path_max) {
    return std::nullopt;
  }
  std::string full = home_path(d);
  full += '/';
  full += path;
  if (!is_valid_absolute(full)) {
    return std::nullopt;
  }
  return full;
}

bool is_at_or_below(std::string_view path, std::string_view ancestor) {
  if (ancestor == "/") {
    return !path.empty() && path.front() == '/';
  }
  if (!path.starts_with(ancestor)) {
    return false;
  }
  return path.size() == ancestor.size() || path[ancestor.size()] == '/';
}

std::string parent_of(std::string_view path) {
  const auto slash = path.rfind('/');
  if (slash == std::string_view::npos || slash == 0) {
    return "/";
  }
  return std::string(path.substr(0, slash));
}

std::string_view basename_of(std::string_view path) {
  const auto slash = path.rfind('/');
  return slash == std::string_view::npos ? path : path.substr(slash + 1);
}

}  // namespace unetback::xs::sim
