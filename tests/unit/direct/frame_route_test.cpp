// Which guest TX frames may take the direct path to a peer vif (frame_route.hpp).

#include "unetback/direct/frame_route.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <string>
#include <vector>

#include "reason_names.hpp"
#include "test_frames.hpp"
#include "test_guests.hpp"

namespace unetback::direct {
namespace {

using rings::test::frame;

using test::guest_a;
using test::guest_b;
using test::guest_c;

rings::offload_features all_offloads() {
  return rings::offload_features{true, true, true, true, false};
}

direct_peer peer(tap::mac_address mac, std::uint16_t pair, std::uint32_t mtu = 1500) {
  return direct_peer{mac, mtu, all_offloads(), pair};
}

frame tcp4(std::size_t payload) {
  return rings::test::ipv4_frame(rings::ipproto_tcp, rings::test::ip_a, rings::test::ip_b,
                                 rings::test::tcp_segment(1, 2, 0x10, payload));
}

frame tcp6(std::size_t payload) {
  return rings::test::ipv6_frame(rings::ipproto_tcp, rings::test::ip6_a, rings::test::ip6_b,
                                 rings::test::tcp_segment(1, 2, 0x10, payload));
}

rings::tx_offload gso(std::uint8_t type, std::uint16_t mss) {
  return rings::tx_offload{true, true, type, mss};
}

frame_route route(const frame& f, std::span<const direct_peer> peers,
                  rings::tx_offload offload = {}) {
  return route_tx_frame(tx_frame{f, offload}, guest_a, peers);
}

TEST(FrameRoute, UnicastToAPeerGoesDirectToThatPeer) {
  const std::array peers{peer(guest_c, 7), peer(guest_b, 9)};
  const auto r = route(tcp4(100), peers);
  EXPECT_TRUE(r.direct()) << to_string(r.why);
  EXPECT_EQ(r.peer, 1);
  EXPECT_EQ(peers[r.peer].pair, 9);
}

TEST(FrameRoute, WithoutPeersEverythingGoesToTheHost) {
  EXPECT_EQ(route(tcp4(100), {}).why, route_reason::no_peer_on_bridge);
}

TEST(FrameRoute, ShorterThanAnEthernetHeaderGoesToTheHost) {
  const std::array peers{peer(guest_b, 0)};
  EXPECT_EQ(route(frame(13, std::byte{0}), peers).why, route_reason::truncated);
}

TEST(FrameRoute, BroadcastAndMulticastGoToTheHost) {
  const std::array peers{peer(guest_b, 0)};
  frame broadcast = tcp4(10);
  std::fill_n(broadcast.begin(), 6, std::byte{0xFF});
  EXPECT_EQ(route(broadcast, peers).why, route_reason::group_destination);
  frame multicast = tcp4(10);
  const std::array<std::byte, 3> ipv4_multicast{std::byte{0x01}, std::byte{0x00}, std::byte{0x5E}};
  std::copy(ipv4_multicast.begin(), ipv4_multicast.end(), multicast.begin());
  EXPECT_EQ(route(multicast, peers).why, route_reason::group_destination);
}

TEST(FrameRoute, ASpoofedSourceMacGoesToTheHost) {
  const std::array peers{peer(guest_b, 0)};
  frame f = tcp4(10);
  f[11] = std::byte{0x77};
  EXPECT_EQ(route(f, peers).why, route_reason::spoofed_source);
}

TEST(FrameRoute, VlanTaggedFramesGoToTheHost) {
  const std::array peers{peer(guest_b, 0)};
  const frame tagged =
      rings::test::ipv4_frame(rings::ipproto_tcp, rings::test::ip_a, rings::test::ip_b,
                              rings::test::tcp_segment(1, 2, 0x10, 10), true);
  EXPECT_EQ(route(tagged, peers).why, route_reason::vlan_tagged);
  frame qinq = tagged;
  qinq[12] = std::byte{0x88};
  qinq[13] = std::byte{0xA8};
  EXPECT_EQ(route(qinq, peers).why, route_reason::vlan_tagged);
}

TEST(FrameRoute, AnUnpairedDestinationGoesToTheHost) {
  const std::array peers{peer(guest_c, 0)};
  EXPECT_EQ(route(tcp4(10), peers).why, route_reason::not_a_peer);
}

TEST(FrameRoute, AFrameToTheSendersOwnMacIsNoPeersUnlessPaired) {
  // The control plane never pairs a vif with itself (pair_policy), so the
  // sender's own MAC is not in its peer list and the frame goes to the host.
  const std::array peers{peer(guest_b, 0)};
  frame f = tcp4(10);
  std::transform(guest_a.begin(), guest_a.end(), f.begin(), [](auto b) { return std::byte{b}; });
  EXPECT_EQ(route(f, peers).why, route_reason::not_a_peer);
}

TEST(FrameRoute, PlainFramesMustFitThePeersMtu) {
  const std::array peers{peer(guest_b, 0, 1500)};
  EXPECT_TRUE(route(tcp4(1460), peers).direct());  // 1500 bytes of IP packet
  EXPECT_EQ(route(tcp4(1461), peers).why, route_reason::exceeds_peer_mtu);
  const std::array small{peer(guest_b, 0, 1400)};
  EXPECT_EQ(route(tcp4(1400), small).why, route_reason::exceeds_peer_mtu);
}

TEST(FrameRoute, NonIpFramesAreMeasuredByTheirLength) {
  const std::array peers{peer(guest_b, 0, 100)};
  frame arp = rings::test::ethernet(0x0806);
  arp.resize(14 + 100);
  EXPECT_TRUE(route(arp, peers).direct());
  arp.resize(14 + 101);
  EXPECT_EQ(route(arp, peers).why, route_reason::exceeds_peer_mtu);
}

TEST(FrameRoute, GsoFramesAreMeasuredBySegment) {
  const std::array peers{peer(guest_b, 0, 1500)};
  const frame big = tcp4(60000);
  EXPECT_TRUE(route(big, peers, gso(rings::gso_type::tcpv4, 1460)).direct());
  EXPECT_EQ(route(big, peers, gso(rings::gso_type::tcpv4, 1461)).why,
            route_reason::exceeds_peer_mtu);
  const frame big6 = tcp6(60000);
  EXPECT_TRUE(route(big6, peers, gso(rings::gso_type::tcpv6, 1440)).direct());
  EXPECT_EQ(route(big6, peers, gso(rings::gso_type::tcpv6, 1441)).why,
            route_reason::exceeds_peer_mtu);
}

TEST(FrameRoute, GsoNeedsThePeerToHaveNegotiatedIt) {
  std::array peers{peer(guest_b, 0)};
  const frame big = tcp4(60000);
  peers[0].rx.gso_tcpv4 = false;
  EXPECT_EQ(route(big, peers, gso(rings::gso_type::tcpv4, 1460)).why,
            route_reason::offload_refused);
  peers[0].rx = all_offloads();
  peers[0].rx.sg = false;  // GSO needs SG, and so does any frame over a page
  EXPECT_EQ(route(big, peers, gso(rings::gso_type::tcpv4, 1460)).why,
            route_reason::offload_refused);
  EXPECT_EQ(route(tcp4(5000), peers).why, route_reason::offload_refused);
}

TEST(FrameRoute, BlankChecksumsNeedThePeerToAcceptThemForTheFamily) {
  std::array peers{peer(guest_b, 0)};
  const rings::tx_offload blank{true, true, rings::gso_type::none, 0};
  peers[0].rx.no_csum_offload = true;
  EXPECT_EQ(route(tcp4(100), peers, blank).why, route_reason::offload_refused);
  EXPECT_TRUE(route(tcp6(100), peers, blank).direct());
  peers[0].rx = all_offloads();
  peers[0].rx.ipv6_csum_offload = false;
  EXPECT_EQ(route(tcp6(100), peers, blank).why, route_reason::offload_refused);
  EXPECT_TRUE(route(tcp4(100), peers, blank).direct());
  EXPECT_TRUE(route(tcp6(100), peers).direct());  // a complete checksum needs nothing
}

TEST(FrameRoute, AnOffloadOnAFrameThatIsNotIpGoesToTheHost) {
  const std::array peers{peer(guest_b, 0)};
  frame arp = rings::test::ethernet(0x0806);
  arp.resize(60);
  const rings::tx_offload blank{true, true, rings::gso_type::none, 0};
  EXPECT_EQ(route(arp, peers, blank).why, route_reason::offload_refused);
}

TEST(FrameRoute, EveryReasonHasItsOwnDescription) {
  test::expect_distinct_names(route_reason::direct, route_reason::offload_refused,
                              "unknown route reason");
}

TEST(FrameRoute, EveryReasonHasItsOwnLabel) {
  test::expect_distinct(route_reason::direct, route_reason::offload_refused, "unknown",
                        [](route_reason r) { return std::string(label_of(r)); });
}

}  // namespace
}  // namespace unetback::direct
