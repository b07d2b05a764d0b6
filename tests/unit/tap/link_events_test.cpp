// rtnetlink link messages as the daemon reads them: names, masters,
// deletions, and datagrams whose lengths lie.

#include "unetback/tap/link_events.hpp"

#include <gtest/gtest.h>
#include <linux/if_link.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <sys/socket.h>

#include <cstring>
#include <string>
#include <vector>

namespace unetback::tap {
namespace {

/// Builds one RTM_NEWLINK/DELLINK message with IFLA_IFNAME and, if
/// master != 0, IFLA_MASTER.
std::vector<std::byte> link_message(std::uint16_t type, int index, const std::string& name,
                                    int master, unsigned char family = AF_UNSPEC) {
  std::vector<std::byte> m(NLMSG_HDRLEN + NLMSG_ALIGN(sizeof(ifinfomsg)));
  const auto add_attr = [&](std::uint16_t attr, const void* data, std::size_t len) {
    rtattr a{};
    a.rta_len = static_cast<std::uint16_t>(RTA_LENGTH(len));
    a.rta_type = attr;
    const std::size_t off = m.size();
    m.resize(off + RTA_SPACE(len));
    std::memcpy(m.data() + off, &a, sizeof(a));
    std::memcpy(m.data() + off + RTA_LENGTH(0), data, len);
  };
  ifinfomsg info{};
  info.ifi_index = index;
  info.ifi_family = family;
  std::memcpy(m.data() + NLMSG_HDRLEN, &info, sizeof(info));
  add_attr(IFLA_IFNAME, name.c_str(), name.size() + 1);
  if (master != 0) {
    add_attr(IFLA_MASTER, &master, sizeof(master));
  }
  nlmsghdr h{};
  h.nlmsg_len = static_cast<std::uint32_t>(m.size());
  h.nlmsg_type = type;
  std::memcpy(m.data(), &h, sizeof(h));
  return m;
}

TEST(LinkEvents, NewLinkGivesNameIndexAndMaster) {
  const auto m = link_message(RTM_NEWLINK, 7, "vif1.0", 3);
  const auto events = parse_link_messages(m);
  ASSERT_EQ(events.size(), 1U);
  EXPECT_EQ(events[0].name, "vif1.0");
  EXPECT_EQ(events[0].index, 7);
  EXPECT_EQ(events[0].master, 3);
  EXPECT_FALSE(events[0].deleted);
}

TEST(LinkEvents, NoMasterAttributeMeansNoBridgeAndDelLinkIsADeletion) {
  auto d = link_message(RTM_NEWLINK, 7, "vif1.0", 0);
  const auto del = link_message(RTM_DELLINK, 7, "vif1.0", 0);
  d.insert(d.end(), del.begin(), del.end());
  const auto events = parse_link_messages(d);
  ASSERT_EQ(events.size(), 2U);
  EXPECT_EQ(events[0].master, 0);
  EXPECT_FALSE(events[0].deleted);
  EXPECT_TRUE(events[1].deleted);
}

// A port leaving a bridge is an AF_BRIDGE RTM_DELLINK: not the interface's end.
TEST(LinkEvents, BridgePortMessagesAreSkipped) {
  auto d = link_message(RTM_DELLINK, 7, "vif1.0", 3, AF_BRIDGE);
  const auto generic = link_message(RTM_NEWLINK, 7, "vif1.0", 0);
  d.insert(d.end(), generic.begin(), generic.end());
  const auto events = parse_link_messages(d);
  ASSERT_EQ(events.size(), 1U);
  EXPECT_FALSE(events[0].deleted);
  EXPECT_EQ(events[0].master, 0);
}

TEST(LinkEvents, ALengthRunningPastTheDatagramEndsTheParse) {
  auto m = link_message(RTM_NEWLINK, 7, "vif1.0", 3);
  const auto good = m;
  nlmsghdr h{};
  std::memcpy(&h, m.data(), sizeof(h));
  h.nlmsg_len += 100;
  std::memcpy(m.data(), &h, sizeof(h));
  std::vector<std::byte> d = good;
  d.insert(d.end(), m.begin(), m.end());
  const auto events = parse_link_messages(d);
  ASSERT_EQ(events.size(), 1U);  // the good one only
  EXPECT_EQ(events[0].master, 3);
}

TEST(LinkEvents, AnAttributeLongerThanItsMessageIsIgnored) {
  auto m = link_message(RTM_NEWLINK, 7, "vif1.0", 3);
  rtattr a{};
  const std::size_t first_attr = NLMSG_HDRLEN + NLMSG_ALIGN(sizeof(ifinfomsg));
  std::memcpy(&a, m.data() + first_attr, sizeof(a));
  a.rta_len = 4000;
  std::memcpy(m.data() + first_attr, &a, sizeof(a));
  const auto events = parse_link_messages(m);
  ASSERT_EQ(events.size(), 1U);
  EXPECT_TRUE(events[0].name.empty());
  EXPECT_EQ(events[0].master, 0);
}

TEST(LinkEvents, AnUnterminatedNameStopsAtTheAttribute) {
  auto m = link_message(RTM_NEWLINK, 7, "vif1.0", 0);
  const std::size_t name_at = NLMSG_HDRLEN + NLMSG_ALIGN(sizeof(ifinfomsg)) + RTA_LENGTH(0);
  m[name_at + 6] = std::byte{'x'};  // overwrite the terminating NUL
  const auto events = parse_link_messages(m);
  ASSERT_EQ(events.size(), 1U);
  EXPECT_EQ(events[0].name, "vif1.0x");
}

TEST(LinkEvents, TruncatedHeadersGiveNothing) {
  const auto m = link_message(RTM_NEWLINK, 7, "vif1.0", 3);
  for (std::size_t n = 0; n < NLMSG_HDRLEN + sizeof(ifinfomsg); ++n) {
    EXPECT_TRUE(parse_link_messages(std::span(m).first(n)).empty()) << n;
  }
}

}  // namespace
}  // namespace unetback::tap
