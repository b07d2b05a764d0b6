// netif checksum/GSO flags <-> virtio_net_hdr, and the header parser beneath.

#include "unetback/rings/vnet_hdr.hpp"

#include <gtest/gtest.h>

#include "test_frames.hpp"

namespace unetback::rings {
namespace {

using namespace test;  // NOLINT(google-build-using-namespace): frame builders

tx_offload csum_blank() {
  return tx_offload{true, true, gso_type::none, 0};
}
tx_offload gso(std::uint8_t type, std::uint16_t mss, bool blank = true) {
  return tx_offload{blank, true, type, mss};
}

/// Completes the partial checksum the way the kernel would and checks it.
bool kernel_checksum_ok(frame f, const vnet_header& h) {
  const auto l3 = parse_l3(f);
  if (!l3) {
    return false;
  }
  complete_checksum(f, h.csum_start, h.csum_offset, l3.value().l4_end, false);
  return l4_checksum_ok(f, l3.value());
}

TEST(VnetHdr, CsumBlankIpv4TcpNeedsCsumAtTcpChecksum) {
  frame f = ipv4_frame(ipproto_tcp, ip_a, ip_b, tcp_segment(1000, 80, 0x18, 100));
  const auto r = guest_tx_to_vnet(f, csum_blank());
  ASSERT_TRUE(r) << to_string(r.error());
  const vnet_header& h = r.value().hdr;
  EXPECT_EQ(h.flags, vnet_f_needs_csum);
  EXPECT_EQ(h.csum_start, 34);
  EXPECT_EQ(h.csum_offset, 16);
  EXPECT_EQ(h.gso_type, vnet_gso_none);
  EXPECT_FALSE(r.value().checksum_repaired);
  EXPECT_TRUE(kernel_checksum_ok(f, h));
}

TEST(VnetHdr, GuestPseudoHeaderSeedIsRecomputed) {
  frame f = ipv4_frame(ipproto_udp, ip_a, ip_b, udp_datagram(53, 53, 30));
  f[34 + 6] = std::byte{0xDE};  // garbage where the seed belongs
  f[34 + 7] = std::byte{0xAD};
  const auto r = guest_tx_to_vnet(f, csum_blank());
  ASSERT_TRUE(r);
  EXPECT_EQ(be16(f, 34 + 6), pseudo_header_sum(f, parse_l3(f).value()));
  EXPECT_TRUE(kernel_checksum_ok(f, r.value().hdr));
}

TEST(VnetHdr, CsumBlankVlanIpv6UdpWalksExtensionHeaders) {
  frame f = ipv6_frame(ipproto_udp, ip6_a, ip6_b, udp_datagram(1, 2, 20), {0, 60}, true);
  const auto r = guest_tx_to_vnet(f, csum_blank());
  ASSERT_TRUE(r) << to_string(r.error());
  EXPECT_EQ(r.value().hdr.csum_start, 18 + 40 + 16);
  EXPECT_EQ(r.value().hdr.csum_offset, 6);
  EXPECT_TRUE(kernel_checksum_ok(f, r.value().hdr));
}

TEST(VnetHdr, DataValidatedOnlySetsDataValid) {
  frame f = ipv4_frame(ipproto_tcp, ip_a, ip_b, tcp_segment(1, 2, 0x10, 10));
  const frame before = f;
  const auto r = guest_tx_to_vnet(f, tx_offload{false, true, gso_type::none, 0});
  ASSERT_TRUE(r);
  EXPECT_EQ(r.value().hdr.flags, vnet_f_data_valid);
  EXPECT_EQ(f, before);  // nothing rewritten
}

TEST(VnetHdr, PlainPacketNeedsNoParsing) {
  frame f(60, std::byte{0xFF});  // not even IP: fine without offloads
  const auto r = guest_tx_to_vnet(f, tx_offload{});
  ASSERT_TRUE(r);
  EXPECT_EQ(r.value().hdr.flags, 0);
}

TEST(VnetHdr, GsoTcpv4FillsGsoFields) {
  frame f = ipv4_frame(ipproto_tcp, ip_a, ip_b, tcp_segment(1, 2, 0x10, 3000));
  const auto r = guest_tx_to_vnet(f, gso(gso_type::tcpv4, 1448));
  ASSERT_TRUE(r) << to_string(r.error());
  const vnet_header& h = r.value().hdr;
  EXPECT_EQ(h.gso_type, vnet_gso_tcpv4);
  EXPECT_EQ(h.gso_size, 1448);
  EXPECT_EQ(h.hdr_len, 14 + 20 + 20);
  EXPECT_EQ(h.flags, vnet_f_needs_csum);
}

TEST(VnetHdr, GsoTcpv6WithCwrSetsEcn) {
  frame f = ipv6_frame(ipproto_tcp, ip6_a, ip6_b, tcp_segment(1, 2, 0x90, 3000));
  const auto r = guest_tx_to_vnet(f, gso(gso_type::tcpv6, 1400));
  ASSERT_TRUE(r);
  EXPECT_EQ(r.value().hdr.gso_type, vnet_gso_tcpv6 | vnet_gso_ecn);
  EXPECT_EQ(r.value().hdr.hdr_len, 14 + 40 + 20);
}

TEST(VnetHdr, GsoWithoutCsumBlankIsRepairedLikeLinux) {
  frame f = ipv4_frame(ipproto_tcp, ip_a, ip_b, tcp_segment(1, 2, 0x10, 3000));
  const auto r = guest_tx_to_vnet(f, gso(gso_type::tcpv4, 1448, false));
  ASSERT_TRUE(r);
  EXPECT_TRUE(r.value().checksum_repaired);
  EXPECT_EQ(r.value().hdr.flags, vnet_f_needs_csum);
  EXPECT_TRUE(kernel_checksum_ok(f, r.value().hdr));
}

TEST(VnetHdr, GsoOnUdpIsRejected) {
  frame f = ipv4_frame(ipproto_udp, ip_a, ip_b, udp_datagram(1, 2, 3000));
  EXPECT_EQ(guest_tx_to_vnet(f, gso(gso_type::tcpv4, 1400)).error(), packet_error::gso_not_tcp);
}

TEST(VnetHdr, GsoTypeMismatchingIpVersionIsRejected) {
  frame f = ipv6_frame(ipproto_tcp, ip6_a, ip6_b, tcp_segment(1, 2, 0x10, 3000));
  EXPECT_EQ(guest_tx_to_vnet(f, gso(gso_type::tcpv4, 1400)).error(),
            packet_error::gso_ip_version_mismatch);
}

TEST(VnetHdr, CsumBlankOnNonIpIsRejected) {
  frame f = ethernet(0x0806);
  f.resize(60);
  EXPECT_EQ(guest_tx_to_vnet(f, csum_blank()).error(), packet_error::not_ip);
}

TEST(VnetHdr, CsumBlankOnIcmpIsRejected) {
  frame f = ipv4_frame(1, ip_a, ip_b, udp_datagram(1, 2, 20));
  EXPECT_EQ(guest_tx_to_vnet(f, csum_blank()).error(), packet_error::not_tcp_or_udp);
}

TEST(VnetHdr, Ipv4HeaderLengthBelowFiveIsRejected) {
  frame f = ipv4_frame(ipproto_tcp, ip_a, ip_b, tcp_segment(1, 2, 0x10, 10));
  f[14] = std::byte{0x44};
  EXPECT_EQ(guest_tx_to_vnet(f, csum_blank()).error(), packet_error::bad_ipv4_header);
}

TEST(VnetHdr, Ipv4TotalLengthBeyondFrameIsRejected) {
  frame f = ipv4_frame(ipproto_tcp, ip_a, ip_b, tcp_segment(1, 2, 0x10, 10));
  f.resize(f.size() - 1);
  EXPECT_EQ(guest_tx_to_vnet(f, csum_blank()).error(), packet_error::bad_ipv4_header);
}

TEST(VnetHdr, Ipv4HeaderLengthBeyondFrameIsRejected) {
  frame f = ethernet(0x0800);
  put_bytes(f, {0x4F, 0, 0, 60});  // IHL 15 = 60 bytes, frame much shorter
  f.resize(40);
  EXPECT_EQ(guest_tx_to_vnet(f, csum_blank()).error(), packet_error::bad_ipv4_header);
}

TEST(VnetHdr, TcpDataOffsetBeyondPayloadIsRejected) {
  frame f = ipv4_frame(ipproto_tcp, ip_a, ip_b, tcp_segment(1, 2, 0x10, 0));
  f[34 + 12] = std::byte{0xF0};  // 60-byte TCP header in a 20-byte segment
  EXPECT_EQ(guest_tx_to_vnet(f, csum_blank()).error(), packet_error::bad_tcp_header);
}

TEST(VnetHdr, FragmentCannotBeChecksumOffloaded) {
  frame f = ipv4_frame(ipproto_udp, ip_a, ip_b, udp_datagram(1, 2, 20), false, 0x2000);
  EXPECT_EQ(guest_tx_to_vnet(f, csum_blank()).error(), packet_error::fragment);
}

TEST(VnetHdr, Ipv6FragmentHeaderMarksFragment) {
  frame f = ipv6_frame(ipproto_udp, ip6_a, ip6_b, udp_datagram(1, 2, 20), {44});
  f[14 + 40 + 3] = std::byte{1};  // M flag
  EXPECT_EQ(guest_tx_to_vnet(f, csum_blank()).error(), packet_error::fragment);
}

TEST(VnetHdr, LongIpv6ExtensionChainIsRejected) {
  frame f = ipv6_frame(ipproto_tcp, ip6_a, ip6_b, tcp_segment(1, 2, 0x10, 10),
                       std::vector<std::uint8_t>(9, 60));
  EXPECT_EQ(guest_tx_to_vnet(f, csum_blank()).error(), packet_error::ipv6_ext_chain_too_long);
}

TEST(VnetHdr, Ipv6ExtensionHeaderPastPayloadIsRejected) {
  frame f = ipv6_frame(ipproto_tcp, ip6_a, ip6_b, tcp_segment(1, 2, 0x10, 10), {60});
  f[14 + 40 + 1] = std::byte{200};  // claims 1608 bytes
  EXPECT_EQ(guest_tx_to_vnet(f, csum_blank()).error(), packet_error::ipv6_ext_chain_too_long);
}

TEST(VnetHdr, Ipv6JumbogramIsRejected) {
  frame f = ipv6_frame(ipproto_tcp, ip6_a, ip6_b, tcp_segment(1, 2, 0x10, 10));
  f[18] = std::byte{0};
  f[19] = std::byte{0};
  EXPECT_EQ(guest_tx_to_vnet(f, csum_blank()).error(), packet_error::bad_ipv6_header);
}

TEST(VnetHdr, TruncatedVlanHeaderIsRejected) {
  frame f = ethernet(0x8100);
  f.push_back(std::byte{0});
  EXPECT_EQ(guest_tx_to_vnet(f, csum_blank()).error(), packet_error::truncated_ethernet);
}

offload_features all_features() {
  return offload_features{true, true, true, true, false};
}

vnet_header needs_csum(std::uint16_t start, std::uint16_t off) {
  vnet_header h{};
  h.flags = vnet_f_needs_csum;
  h.csum_start = start;
  h.csum_offset = off;
  return h;
}

TEST(VnetRx, NeedsCsumBecomesPartialForCapableFrontend) {
  frame f = ipv4_frame(ipproto_tcp, ip_a, ip_b, tcp_segment(1, 2, 0x10, 10));
  const auto r = vnet_to_guest_rx(needs_csum(34, 16), f, all_features());
  ASSERT_TRUE(r);
  EXPECT_TRUE(r.value().csum_partial);
  EXPECT_TRUE(r.value().csum_validated);
  EXPECT_FALSE(r.value().checksum_completed);
}

TEST(VnetRx, Ipv6PartialChecksumCompletedWithoutIpv6CsumOffload) {
  frame f = ipv6_frame(ipproto_tcp, ip6_a, ip6_b, tcp_segment(1, 2, 0x10, 33));
  ASSERT_TRUE(guest_tx_to_vnet(f, csum_blank()));  // the kernel's seed
  auto feats = all_features();
  feats.ipv6_csum_offload = false;
  const auto r = vnet_to_guest_rx(needs_csum(54, 16), f, feats);
  ASSERT_TRUE(r);
  EXPECT_FALSE(r.value().csum_partial);
  EXPECT_TRUE(r.value().csum_validated);
  EXPECT_TRUE(r.value().checksum_completed);
  EXPECT_TRUE(l4_checksum_ok(f, parse_l3(f).value()));
}

TEST(VnetRx, Ipv4PartialChecksumCompletedWithNoCsumOffload) {
  frame f = ipv4_frame(ipproto_udp, ip_a, ip_b, udp_datagram(1, 2, 17));
  ASSERT_TRUE(guest_tx_to_vnet(f, csum_blank()));
  auto feats = all_features();
  feats.no_csum_offload = true;
  const auto r = vnet_to_guest_rx(needs_csum(34, 6), f, feats);
  ASSERT_TRUE(r);
  EXPECT_TRUE(r.value().checksum_completed);
  EXPECT_TRUE(l4_checksum_ok(f, parse_l3(f).value()));
}

TEST(VnetRx, DataValidMapsToValidated) {
  frame f(60);
  vnet_header h{};
  h.flags = vnet_f_data_valid;
  const auto r = vnet_to_guest_rx(h, f, all_features());
  ASSERT_TRUE(r);
  EXPECT_TRUE(r.value().csum_validated);
  EXPECT_FALSE(r.value().csum_partial);
}

TEST(VnetRx, TsoBecomesGsoExtra) {
  frame f = ipv6_frame(ipproto_tcp, ip6_a, ip6_b, tcp_segment(1, 2, 0x10, 5000));
  vnet_header h = needs_csum(54, 16);
  h.gso_type = vnet_gso_tcpv6;
  h.gso_size = 1440;
  const auto r = vnet_to_guest_rx(h, f, all_features());
  ASSERT_TRUE(r);
  EXPECT_EQ(r.value().gso_type, gso_type::tcpv6);
  EXPECT_EQ(r.value().gso_size, 1440);
}

TEST(VnetRx, UdpGsoFromTheKernelIsRejected) {
  frame f = ipv4_frame(ipproto_udp, ip_a, ip_b, udp_datagram(1, 2, 5000));
  vnet_header h = needs_csum(34, 6);
  h.gso_type = vnet_gso_udp;
  h.gso_size = 1400;
  EXPECT_EQ(vnet_to_guest_rx(h, f, all_features()).error(), packet_error::bad_gso);
}

TEST(VnetRx, ChecksumLocationOutsideFrameIsRejected) {
  frame f(60);
  EXPECT_EQ(vnet_to_guest_rx(needs_csum(50, 9), f, all_features()).error(),
            packet_error::bad_csum_location);
}

TEST(VnetRx, GsoWhoseChecksumHadToBeCompletedIsRejected) {
  frame f = ipv6_frame(ipproto_tcp, ip6_a, ip6_b, tcp_segment(1, 2, 0x10, 5000));
  vnet_header h = needs_csum(54, 16);
  h.gso_type = vnet_gso_tcpv6;
  h.gso_size = 1440;
  auto feats = all_features();
  feats.ipv6_csum_offload = false;
  EXPECT_EQ(vnet_to_guest_rx(h, f, feats).error(), packet_error::gso_without_partial_csum);
}

TEST(TunOffload, FlagsFollowFrontendFeatures) {
  EXPECT_EQ(tun_offload_flags(all_features()), unsigned{TUN_F_CSUM | TUN_F_TSO4 | TUN_F_TSO6});
  offload_features none{};
  none.no_csum_offload = true;
  EXPECT_EQ(tun_offload_flags(none), 0U);
  offload_features v4_only{};  // IPv4 csum by default, no SG, no GSO
  EXPECT_EQ(tun_offload_flags(v4_only), unsigned{TUN_F_CSUM});
  auto no_sg = all_features();
  no_sg.sg = false;
  EXPECT_EQ(tun_offload_flags(no_sg), unsigned{TUN_F_CSUM});
  auto no_v6csum = all_features();
  no_v6csum.ipv6_csum_offload = false;
  EXPECT_EQ(tun_offload_flags(no_v6csum), unsigned{TUN_F_CSUM | TUN_F_TSO4});
}

}  // namespace
}  // namespace unetback::rings
