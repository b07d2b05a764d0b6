#pragma once
// The XenStore keys a key-parsing test sets for one device, and the key_reader
// that backend_keys and frontend_keys read them through.

#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "unetback/control/frontend_keys.hpp"

namespace unetback::control::testing {

using key_map = std::map<std::string, std::string>;

inline key_reader reader_of(const key_map& k) {
  return [&k](std::string_view key) -> std::optional<std::string> {
    const auto it = k.find(std::string(key));
    return it == k.end() ? std::nullopt : std::optional<std::string>(it->second);
  };
}

}  // namespace unetback::control::testing
