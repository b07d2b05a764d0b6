#pragma once
// rtnetlink link messages (RTM_NEWLINK / RTM_DELLINK), reduced to what the
// daemon reports about its TAPs: which bridge (master) a TAP is on, and
// whether it still exists. The bridge is not ours (the hotplug script puts
// the TAP on it), but an operator deleting it cuts the guest off the host
// without any error on the data path, so the daemon says so in its log.

#include <cstddef>
#include <span>
#include <string>
#include <vector>

namespace unetback::tap {

/// One interface's state after a link message.
struct link_event {
  std::string name;      ///< IFLA_IFNAME ("" if the message had none)
  int index = 0;         ///< ifi_index
  int master = 0;        ///< IFLA_MASTER: the bridge's ifindex, 0 = none
  bool deleted = false;  ///< RTM_DELLINK
};

/// Parses one rtnetlink datagram: every generic (AF_UNSPEC) RTM_NEWLINK /
/// RTM_DELLINK message in it, in order. AF_BRIDGE link messages (a bridge's
/// view of its ports) are skipped; other message types and malformed ones (a
/// length that runs past the datagram, a truncated header or attribute) end
/// the parse.
[[nodiscard]] std::vector<link_event> parse_link_messages(std::span<const std::byte> datagram);

}  // namespace unetback::tap
