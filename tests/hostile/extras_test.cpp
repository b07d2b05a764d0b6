// Extra-info attacks (docs/protocol.md §3.3, §6.2 items 12, 16, 20): invalid
// types, FLAG_MORE chains past req_prod, duplicate extras, bogus GSO sizes and
// types, GSO on a frame that is not TCP, and a multicast-filter flood; and the
// multicast list across request-multicast-control toggles.

#include "harness/hostile_fixture.hpp"

namespace unetback::hostile {
namespace {

using rings::extra_flag_more;
using rings::netif_rsp::error;
using rings::netif_rsp::okay;
using rings::tx_flags::extra_info;
using rings::tx_flags::more_data;
constexpr std::int16_t null_rsp = rings::netif_rsp::null;

class Extras : public hostile_test {};

/// One packet: a 60-byte first slot with extra_info, then `e`.
void put_with_extra(tx_driver& t, const rings::extra_info& e) {
  t.put(t.slot(1, 0, 60, extra_info));
  t.put_extra(e);
}

TEST_F(Extras, ExtraTypeNoneDisablesVif) {
  tx_driver& t = connect_and_drive();
  begin_attack();
  put_with_extra(t, raw_extra(rings::extra_type::none));
  t.push();
  expect_vif_disabled("invalid extra info type");
  expect_contained();
}

TEST_F(Extras, ExtraTypesBeyondTheMaximumDisableVif) {
  connect_and_drive();
  begin_attack();
  for (const std::uint8_t type : {std::uint8_t{5}, std::uint8_t{6}, std::uint8_t{0xFF}}) {
    SCOPED_TRACE(testing::Message() << "extra type " << int(type));
    put_with_extra(tx(), raw_extra(type));
    tx().push();
    expect_vif_disabled("invalid extra info type");
    reconnect_and_drive();
  }
  expect_contained();
}

TEST_F(Extras, ExtraChainRunningPastTheProducerDisablesVif) {
  tx_driver& t = connect_and_drive();
  begin_attack();
  put_with_extra(t, gso_extra(rings::gso_type::tcpv4, 1400, extra_flag_more));  // more: none
  t.push();
  expect_vif_disabled("missing extra info");
  expect_contained();
}

TEST_F(Extras, GsoWithSizeZeroDisablesVif) {
  tx_driver& t = connect_and_drive();
  begin_attack();
  put_with_extra(t, gso_extra(rings::gso_type::tcpv4, 0));
  t.push();
  expect_vif_disabled("invalid GSO size or type");
  expect_contained();
}

TEST_F(Extras, GsoWithUnknownTypesDisablesVif) {
  connect_and_drive();
  begin_attack();
  for (const std::uint8_t type : {std::uint8_t{0}, std::uint8_t{3}, std::uint8_t{0xFF}}) {
    SCOPED_TRACE(testing::Message() << "GSO type " << int(type));
    put_with_extra(tx(), gso_extra(type, 1400));
    tx().push();
    expect_vif_disabled("invalid GSO size or type");
    reconnect_and_drive();
  }
  expect_contained();
}

TEST_F(Extras, DuplicateExtraIsDropped) {
  tx_driver& t = connect_and_drive();
  const auto before = counter("tx_drops_duplicate_extra");
  begin_attack();
  t.put(t.slot(1, 0, 60, extra_info));
  t.put_extra(raw_extra(rings::extra_type::hash, extra_flag_more));
  t.put_extra(raw_extra(rings::extra_type::hash));
  t.push();
  EXPECT_EQ(statuses(t.responses(3)), (std::vector<std::int16_t>{error, null_rsp, null_rsp}));
  EXPECT_EQ(counter("tx_drops_duplicate_extra"), before + 1);
  EXPECT_TRUE(w().wait_log("duplicate extra info"));
  expect_vif_connected();
  expect_contained();
}

// A valid GSO extra on a frame that is not TCP: the daemon must not hand the
// kernel a GSO header it cannot honour (§3.6, item 19).
TEST_F(Extras, GsoOnAFrameThatIsNotTcpIsDropped) {
  tx_driver& t = connect_and_drive();
  const auto before = counter("tx_drops_bad_headers");
  begin_attack();
  t.put(t.slot(1, 0, 1400, extra_info | rings::tx_flags::csum_blank));
  t.put_extra(gso_extra(rings::gso_type::tcpv4, 1000));
  t.push();
  EXPECT_EQ(statuses(t.responses(2)), (std::vector<std::int16_t>{error, null_rsp}));
  EXPECT_EQ(counter("tx_drops_bad_headers"), before + 1);
  expect_vif_connected();
  expect_contained();
}

// §6.2 item 20: the multicast list is bounded (64); more additions are
// answered ERROR, no frame is emitted for these dummy packets.
TEST_F(Extras, MulticastFilterFloodIsBounded) {
  tx_driver& t = connect_and_drive();
  const auto packets = counter("tx_packets");
  begin_attack();
  std::vector<std::int16_t> expected;
  constexpr int additions = 100;
  for (int i = 0; i < additions; ++i) {
    const mac_bytes mac{
        0x01, 0x00, 0x5e, 0x00, static_cast<std::uint8_t>(i >> 8), static_cast<std::uint8_t>(i)};
    t.put(t.slot(1, 0, 0, extra_info));
    t.put_extra(mcast_extra(rings::extra_type::mcast_add, mac));
    expected.push_back(i < 64 ? okay : error);
    expected.push_back(null_rsp);
  }
  t.push();
  EXPECT_EQ(statuses(t.responses(2 * additions)), expected);
  EXPECT_EQ(counter("tx_mcast_add"), 64U);
  EXPECT_EQ(counter("tx_mcast_list_full"), std::uint64_t{additions - 64});
  EXPECT_EQ(counter("tx_packets"), packets);
  expect_vif_connected();
  expect_contained();
}

// netif.h: the filter list may be amended while filtering is off, and is
// applied while it is on; turning it off does not empty it. Windows XenVif
// toggles request-multicast-control when NDIS goes to all-multicast and back
// and never re-sends its addresses (IPv6 neighbour discovery among them).
TEST_F(Extras, MulticastListSurvivesFilteringOffAndOn) {
  isolate_hostile_vif();
  tx_driver& t = connect_and_drive();
  raw_port inject(w().host_ns(), hostile_guest::vif);
  const mac_bytes listed{0x33, 0x33, 0xff, 0x00, 0x00, 0x02};
  const mac_bytes other{0x01, 0x00, 0x5e, 0x00, 0x00, 0x63};
  const mac_bytes from = parse_mac("02:00:00:00:00:01");
  begin_attack();
  t.put(t.slot(1, 0, 0, extra_info));
  t.put_extra(mcast_extra(rings::extra_type::mcast_add, listed));
  t.push();
  ASSERT_EQ(statuses(t.responses(2)), (std::vector<std::int16_t>{okay, null_rsp}));
  const std::string key = guest().frontend_path() + "/request-multicast-control";
  // Sends frames to `to` until `name` moves: the daemon saw the key's value.
  auto send_until_counted = [&](const mac_bytes& to, const std::string& name) {
    const auto before = counter(name);
    return wait_until(
        [&] {
          (void)inject.send(test_frame(to, from, 100, 7));
          return counter(name) > before;
        },
        state_timeout, 100ms);
  };
  guest().xs().write(key, "1");
  ASSERT_TRUE(send_until_counted(other, "rx_drops_multicast_filtered")) << "filtering never on";
  guest().xs().write(key, "0");
  ASSERT_TRUE(send_until_counted(other, "rx_packets")) << "filtering never off";
  guest().xs().write(key, "1");
  ASSERT_TRUE(send_until_counted(other, "rx_drops_multicast_filtered")) << "not on again";
  // Filtering is on: only the listed address gets through (the host's own
  // IPv6 multicast on the isolated TAP is filtered).
  const auto delivered = counter("rx_packets");
  for (int i = 0; i < 5; ++i) {
    ASSERT_TRUE(inject.send(test_frame(listed, from, 100, static_cast<std::uint8_t>(i))));
  }
  EXPECT_TRUE(wait_counter("rx_packets", delivered + 5)) << "the listed address was lost";
  expect_vif_connected();
  expect_contained();
}

}  // namespace
}  // namespace unetback::hostile
