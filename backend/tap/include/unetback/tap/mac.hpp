#pragma once
// Ethernet MAC addresses as the XenStore `mac` key and the TAP ioctls use them.

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace unetback::tap {

/// Six octets, most significant first.
using mac_address = std::array<std::uint8_t, 6>;

/// The MAC of the backend-side vif: fe:ff:ff:ff:ff:ff, high enough never to
/// win a bridge's root or FDB election (Linux netback and vif-bridge force it).
inline constexpr mac_address backend_vif_mac{0xfe, 0xff, 0xff, 0xff, 0xff, 0xff};

/// Parses "xx:xx:xx:xx:xx:xx" (hex digits, either case, exactly six octets of
/// two digits). nullopt otherwise.
[[nodiscard]] std::optional<mac_address> parse_mac(std::string_view text);

/// "xx:xx:xx:xx:xx:xx", lower case.
[[nodiscard]] std::string to_string(const mac_address& mac);

}  // namespace unetback::tap
