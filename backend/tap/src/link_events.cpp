#include "unetback/tap/link_events.hpp"

#include <linux/if_link.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>

#include <sys/socket.h>

#include <algorithm>
#include <cstring>

namespace unetback::tap {
namespace {

constexpr std::size_t align4(std::size_t n) {
  return (n + 3U) & ~std::size_t{3};
}

template <class T>
T read_at(std::span<const std::byte> bytes, std::size_t off) {
  T v{};
  std::memcpy(&v, bytes.data() + off, sizeof(T));
  return v;
}

// The attributes after struct ifinfomsg: IFLA_IFNAME and IFLA_MASTER.
void parse_attributes(std::span<const std::byte> attrs, link_event& e) {
  std::size_t off = 0;
  while (off + sizeof(rtattr) <= attrs.size()) {
    const auto a = read_at<rtattr>(attrs, off);
    if (a.rta_len < sizeof(rtattr) || a.rta_len > attrs.size() - off) {
      return;
    }
    const auto payload = attrs.subspan(off + sizeof(rtattr), a.rta_len - sizeof(rtattr));
    if (a.rta_type == IFLA_IFNAME && !payload.empty()) {
      const auto* chars = reinterpret_cast<const char*>(payload.data());
      e.name.assign(chars, ::strnlen(chars, payload.size()));
    } else if (a.rta_type == IFLA_MASTER && payload.size() >= sizeof(int)) {
      e.master = read_at<int>(payload, 0);
    }
    off += align4(a.rta_len);
  }
}

}  // namespace

std::vector<link_event> parse_link_messages(std::span<const std::byte> datagram) {
  std::vector<link_event> events;
  std::size_t off = 0;
  while (off + sizeof(nlmsghdr) <= datagram.size()) {
    const auto h = read_at<nlmsghdr>(datagram, off);
    if (h.nlmsg_len < sizeof(nlmsghdr) || h.nlmsg_len > datagram.size() - off) {
      break;
    }
    const bool link = h.nlmsg_type == RTM_NEWLINK || h.nlmsg_type == RTM_DELLINK;
    const std::size_t body = NLMSG_HDRLEN;
    const auto msg =
        datagram.subspan(off, std::min<std::size_t>(h.nlmsg_len, datagram.size() - off));
    // AF_BRIDGE messages are the bridge's view of its ports (a port leaving
    // is an RTM_DELLINK there): only the generic ones describe the interface.
    if (link && h.nlmsg_len >= body + sizeof(ifinfomsg) &&
        read_at<ifinfomsg>(msg, body).ifi_family == AF_UNSPEC) {
      const auto info = read_at<ifinfomsg>(msg, body);
      link_event e;
      e.index = info.ifi_index;
      e.deleted = h.nlmsg_type == RTM_DELLINK;
      const std::size_t attrs = body + NLMSG_ALIGN(sizeof(ifinfomsg));
      if (attrs <= msg.size()) {
        parse_attributes(msg.subspan(attrs), e);
      }
      events.push_back(std::move(e));
    } else if (!link) {
      break;
    }
    off += align4(h.nlmsg_len);
  }
  return events;
}

}  // namespace unetback::tap
