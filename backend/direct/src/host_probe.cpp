#include "unetback/direct/host_probe.hpp"

#include <linux/if_bridge.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <system_error>

namespace unetback::direct {

namespace {

/// A Linux interface name: 1 to 15 characters, none of them '/' or space, and
/// not "." or "..": it becomes a path component.
[[nodiscard]] bool valid_ifname(std::string_view name) {
  return !name.empty() && name.size() < 16 && name != "." && name != ".." &&
         name.find_first_of("/ \t\n") == std::string_view::npos;
}

/// The first line of a sysfs/procfs attribute, or nullopt if it cannot be read.
[[nodiscard]] std::optional<std::string> first_line(const std::filesystem::path& p) {
  std::ifstream in(p);
  std::string line;
  if (!in || !std::getline(in, line)) {
    return std::nullopt;
  }
  return line;
}

/// An unsigned attribute, decimal or 0x-prefixed hex (brport/port_no).
[[nodiscard]] std::optional<unsigned> number_at(const std::filesystem::path& p) {
  const auto line = first_line(p);
  if (!line) {
    return std::nullopt;
  }
  std::string_view text = *line;
  int base = 10;
  if (text.starts_with("0x")) {
    text.remove_prefix(2);
    base = 16;
  }
  unsigned value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value, base);
  if (ec != std::errc{} || end == text.data()) {
    return std::nullopt;
  }
  return value;
}

[[nodiscard]] bool flag_at(const std::filesystem::path& p) {
  return number_at(p).value_or(0) != 0;
}

constexpr unsigned br_state_forwarding = 3;  // BR_STATE_FORWARDING, linux/if_bridge.h

}  // namespace

host_probe::host_probe(host_roots roots, host_probe_limits limits)
    : roots_(std::move(roots)), limits_(limits) {}

std::filesystem::path host_probe::net(std::string_view ifname) const {
  return roots_.sys / "class/net" / ifname;
}

port_facts host_probe::port(std::string_view ifname, const tap::mac_address& guest_mac,
                            const filter_facts& filters) const {
  port_facts f;
  f.tc_or_xdp = true;
  f.netdev_rules = true;
  if (!valid_ifname(ifname)) {
    return f;
  }
  f.netdev_rules = filters.netdev_rules(ifname);
  f.mtu = number_at(net(ifname) / "mtu");
  std::error_code ec;
  const auto master = std::filesystem::read_symlink(net(ifname) / "master", ec);
  const auto brport = net(ifname) / "brport";
  if (ec || !std::filesystem::exists(brport, ec)) {
    return f;
  }
  f.bridge = master.filename().string();
  f.forwarding = number_at(brport / "state") == br_state_forwarding;
  f.isolated = flag_at(brport / "isolated");
  const auto port_no = number_at(brport / "port_no");
  f.fdb_age_cs = port_no ? fdb_age_on_port(f.bridge, guest_mac, *port_no) : std::nullopt;
  const auto ifindex = number_at(net(ifname) / "ifindex");
  f.packet_socket = !ifindex || packet_socket_on(*ifindex);
  f.tc_or_xdp = !ifindex || filters.tc_or_xdp(*ifindex);
  return f;
}

bridge_facts host_probe::bridge(std::string_view bridge, const filter_facts& filters) const {
  bridge_facts b;
  b.bridge_rules = filters.bridge_rules();
  if (!valid_ifname(bridge)) {
    b.vlan_filtering = true;
    return b;
  }
  b.vlan_filtering = flag_at(net(bridge) / "bridge/vlan_filtering");
  b.ageing_time_cs = number_at(net(bridge) / "bridge/ageing_time").value_or(0);
  b.br_netfilter = br_netfilter_on(bridge);
  return b;
}

std::optional<std::uint32_t> host_probe::fdb_age_on_port(std::string_view bridge,
                                                         const tap::mac_address& mac,
                                                         unsigned port) const {
  if (!valid_ifname(bridge)) {
    return std::nullopt;
  }
  // brforward: the bridge's FDB as an array of struct __fdb_entry, whose
  // ageing_timer_value is the time since the entry was last learned (USER_HZ).
  std::ifstream in(net(bridge) / "brforward", std::ios::binary);
  __fdb_entry e{};
  for (std::size_t i = 0; i < limits_.fdb_entries; ++i) {
    if (!in.read(reinterpret_cast<char*>(&e), sizeof e)) {  // NOLINT: a kernel struct
      return std::nullopt;
    }
    if (std::equal(mac.begin(), mac.end(), std::begin(e.mac_addr))) {
      const bool here =
          e.is_local == 0 && (static_cast<unsigned>(e.port_hi) << 8 | e.port_no) == port;
      return here ? std::optional<std::uint32_t>(e.ageing_timer_value) : std::nullopt;
    }
  }
  return std::nullopt;  // more entries than we read: not known
}

bool host_probe::packet_socket_on(unsigned ifindex) const {
  // /proc/net/packet: "sk RefCnt Type Proto Iface R Rmem User Inode"; Iface 0
  // is a socket bound to every device.
  std::ifstream in(roots_.proc / "net/packet");
  std::string line;
  if (!in || !std::getline(in, line)) {
    return true;
  }
  for (std::size_t i = 0; i < limits_.packet_sockets; ++i) {
    if (!std::getline(in, line)) {
      return false;
    }
    if (line.find_first_not_of(" \t") == std::string::npos) {
      continue;
    }
    std::istringstream fields(line);
    std::string sk;
    std::string refcnt;
    std::string type;
    std::string proto;
    unsigned iface = 0;
    if (!(fields >> sk >> refcnt >> type >> proto >> iface) || iface == 0 || iface == ifindex) {
      return true;
    }
  }
  return true;  // more sockets than we read: assume one watches
}

bool host_probe::br_netfilter_on(std::string_view bridge) const {
  // Without the br_netfilter module /proc/sys/net/bridge does not exist; with
  // it, each family is called when the global or the bridge's switch is on.
  const auto global = roots_.proc / "sys/net/bridge";
  std::error_code ec;
  if (!std::filesystem::exists(global, ec)) {
    return false;
  }
  constexpr std::array families{"iptables", "ip6tables", "arptables"};
  return std::any_of(families.begin(), families.end(), [&](const char* family) {
    const std::string name = std::string("bridge-nf-call-") + family;
    return flag_at(global / name) ||
           flag_at(net(bridge) / "bridge" / (std::string("nf_call_") + family));
  });
}

}  // namespace unetback::direct
