#include "unetback/xs/permission.hpp"

#include <charconv>

namespace unetback::xs {

std::string to_string(const permission& p) {
  static constexpr char letters[] = {'n', 'r', 'w', 'b'};
  std::string out(1, letters[static_cast<unsigned>(p.acc) & 3U]);
  out += std::to_string(p.id.value());
  return out;
}

std::optional<std::uint64_t> parse_decimal(std::string_view text, std::uint64_t max) {
  if (text.empty() || text.size() > 20) {
    return std::nullopt;
  }
  for (const char c : text) {
    if (c < '0' || c > '9') {
      return std::nullopt;
    }
  }
  std::uint64_t value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc{} || end != text.data() + text.size() || value > max) {
    return std::nullopt;
  }
  return value;
}

std::optional<permission> parse_permission(std::string_view text) {
  if (text.empty()) {
    return std::nullopt;
  }
  access acc = access::none;
  switch (text.front()) {
    case 'n':
      acc = access::none;
      break;
    case 'r':
      acc = access::read;
      break;
    case 'w':
      acc = access::write;
      break;
    case 'b':
      acc = access::both;
      break;
    default:
      return std::nullopt;
  }
  const auto id = parse_decimal(text.substr(1), 0xFFFF);
  if (!id) {
    return std::nullopt;
  }
  return permission{domid{static_cast<std::uint16_t>(*id)}, acc};
}

}  // namespace unetback::xs
