#include "unetback/ctl/status_json.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <string>
#include <utility>
#include <vector>

namespace unetback::ctl {
namespace {

constexpr std::array<std::pair<std::uint32_t, const char*>, 4> hash_type_names{{
    {XEN_NETIF_CTRL_HASH_TYPE_IPV4, "ipv4"},
    {XEN_NETIF_CTRL_HASH_TYPE_IPV4_TCP, "ipv4+tcp"},
    {XEN_NETIF_CTRL_HASH_TYPE_IPV6, "ipv6"},
    {XEN_NETIF_CTRL_HASH_TYPE_IPV6_TCP, "ipv6+tcp"},
}};

const char* algorithm_name(std::uint32_t algorithm) {
  switch (algorithm) {
    case XEN_NETIF_CTRL_HASH_ALGORITHM_NONE:
      return "none";
    case XEN_NETIF_CTRL_HASH_ALGORITHM_TOEPLITZ:
      return "toeplitz";
    default:
      return "unknown";  // ctrl_handler accepts only the two above
  }
}

}  // namespace

nlohmann::json hash_entry(const control::hash_status& h) {
  const rings::hash_config& config = h.config;
  nlohmann::json types = nlohmann::json::array();
  for (const auto& [bit, name] : hash_type_names) {
    if ((config.flags & bit) != 0) {
      types.push_back(name);
    }
  }
  std::string key;
  for (const std::uint8_t b : config.key) {
    key += fmt::format("{:02x}", b);
  }
  const std::uint32_t size = std::min(config.mapping_size, rings::max_hash_mapping_size);
  return {{"configured", h.generation > 0},
          {"algorithm", algorithm_name(config.algorithm)},
          {"flags", config.flags},
          {"types", std::move(types)},
          {"key", std::move(key)},
          {"mapping_size", size},
          {"mapping",
           std::vector<std::uint32_t>(config.mapping.begin(), config.mapping.begin() + size)},
          {"num_queues", h.num_queues},
          {"steered", h.steered},
          {"applied", h.applied}};
}

}  // namespace unetback::ctl
