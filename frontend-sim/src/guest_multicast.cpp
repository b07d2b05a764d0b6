#include "unetback/sim/netfront/guest_multicast.hpp"

#include <cerrno>
#include <charconv>
#include <fstream>
#include <optional>
#include <sstream>
#include <system_error>

#include "unetback/sim/netfront/netns_thread.hpp"

namespace unetback::sim {
namespace {

std::optional<mac_bytes> parse_hex_mac(std::string_view hex) {
  mac_bytes mac{};
  if (hex.size() != 2 * mac.size()) {
    return std::nullopt;
  }
  for (std::size_t i = 0; i < mac.size(); ++i) {
    const char* first = hex.data() + 2 * i;
    const auto [end, ec] = std::from_chars(first, first + 2, mac[i], 16);
    if (ec != std::errc() || end != first + 2) {
      return std::nullopt;
    }
  }
  return mac;
}

}  // namespace

std::vector<mac_bytes> parse_dev_mcast(std::string_view text, std::string_view ifname) {
  std::vector<mac_bytes> out;
  std::istringstream lines{std::string(text)};
  std::string line;
  while (std::getline(lines, line)) {
    std::istringstream fields(line);
    std::string index, name, users, global_users, hex;
    if (!(fields >> index >> name >> users >> global_users >> hex) || name != ifname) {
      continue;
    }
    if (const auto mac = parse_hex_mac(hex)) {
      out.push_back(*mac);
    }
  }
  return out;
}

std::vector<mac_bytes> read_multicast_list(const std::string& netns, const std::string& ifname) {
  std::string text;
  run_in_netns(netns, [&] {
    // /proc/thread-self/net follows this thread's namespace, /proc/net the process's.
    std::ifstream in("/proc/thread-self/net/dev_mcast");
    if (!in) {
      throw std::system_error(errno, std::generic_category(), "open dev_mcast");
    }
    std::ostringstream all;
    all << in.rdbuf();
    text = all.str();
  });
  return parse_dev_mcast(text, ifname);
}

}  // namespace unetback::sim
