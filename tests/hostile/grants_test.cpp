// Grant attacks (XSA-362/367; docs/protocol.md §6.2 item 28): TX data slots
// and RX buffers with invalid, reserved, revoked, foreign or read-only grant
// refs, a guest revoking grants while the backend copies, and revoking the
// ring page's grant while it is mapped. Every bad grant is a per-packet error,
// never a crash, never a vif-wide failure.

#include <atomic>
#include <thread>

#include "harness/hostile_fixture.hpp"

namespace unetback::hostile {
namespace {

using rings::netif_rsp::error;
using rings::netif_rsp::okay;
constexpr domid other_guest{7};

class Grants : public hostile_test {};

/// Sends one 60-byte packet through `gref`; the status it got.
std::int16_t send_through(tx_driver& t, std::uint32_t gref) {
  rings::tx_request r = t.slot(1, 0, 60);
  r.gref = gref;
  t.put(r);
  t.push();
  const auto rsp = t.responses(1);
  return rsp.empty() ? std::int16_t{99} : rsp.front().status;
}

TEST_F(Grants, BadTxGrantRefsAreDroppedPerPacket) {
  tx_driver& t = connect_and_drive();
  const auto before = counter("tx_drops_grant_copy");
  begin_attack();
  // beyond the grant table, the reserved refs, a free (never granted) ref
  const std::vector<std::uint32_t> bad{0xFFFFFFFFU, 0x7FFFFFFFU, 0, 7,
                                       guest().domain().grant_count() - 1};
  for (const std::uint32_t gref : bad) {
    EXPECT_EQ(send_through(t, gref), error) << "gref " << gref;
  }
  EXPECT_EQ(counter("tx_drops_grant_copy"), before + bad.size());
  EXPECT_TRUE(w().wait_log("TX grant copy failed"));
  EXPECT_EQ(send_through(t, t.ref(1).value()), okay);
  expect_vif_connected();
  expect_contained();
}

TEST_F(Grants, RevokedTxGrantIsDroppedPerPacket) {
  tx_driver& t = connect_and_drive();
  const auto before = counter("tx_drops_grant_copy");
  begin_attack();
  guest().hostile().revoke(t.ref(3));
  EXPECT_EQ(send_through(t, t.ref(3).value()), error);
  EXPECT_EQ(counter("tx_drops_grant_copy"), before + 1);
  expect_vif_connected();
  expect_contained();
}

TEST_F(Grants, GrantForAnotherDomainIsDroppedPerPacket) {
  tx_driver& t = connect_and_drive();
  const auto before = counter("tx_drops_grant_copy");
  begin_attack();
  const std::uint32_t page = guest().domain().alloc_page();
  const grant_ref foreign = guest().hostile().grant(page, other_guest, sim::grant_mode::read_only);
  EXPECT_EQ(send_through(t, foreign.value()), error);
  // A grant entry with garbage flags and an out-of-range frame.
  guest().hostile().write_grant_entry(foreign, 0xFFFF, domid{0}, 0xFFFFFFFFU);
  EXPECT_EQ(send_through(t, foreign.value()), error);
  EXPECT_EQ(counter("tx_drops_grant_copy"), before + 2);
  expect_vif_connected();
  expect_contained();
}

// The guest flips a data grant between granted and revoked while the backend
// copies from it: every packet is answered (OKAY or ERROR), nothing else.
TEST_F(Grants, GrantRevokedWhileTheBackendCopiesIsContained) {
  tx_driver& t = connect_and_drive();
  begin_attack();
  const grant_ref ref = t.ref(2);
  sim::grant_entry& entry = guest().domain().raw_grant(ref.value());
  const std::uint32_t granted = std::atomic_ref<std::uint32_t>(entry.flags_domid).load();
  std::atomic<bool> stop{false};
  std::thread flipper([&] {
    std::atomic_ref<std::uint32_t> word(entry.flags_domid);
    for (std::uint32_t i = 0; !stop.load(std::memory_order_relaxed); ++i) {
      word.store((i & 1) != 0 ? granted : 0U);
    }
  });
  std::size_t answered = 0;
  for (int round = 0; round < 100; ++round) {
    rings::tx_request r = t.slot(2, 0, 1000);
    t.put(r);
    t.push();
    const auto rsp = t.responses(1);
    if (rsp.size() == 1 && (rsp[0].status == okay || rsp[0].status == error)) {
      ++answered;
    }
  }
  stop = true;
  flipper.join();
  std::atomic_ref<std::uint32_t>(entry.flags_domid).store(granted);
  EXPECT_EQ(answered, 100U);
  expect_vif_connected();
  expect_contained();
}

// The ring page's grant is revoked under the backend's mapping: the
// mapping stays valid (as a gntdev mapping would); the vif keeps working and
// tears down cleanly later.
TEST_F(Grants, RingGrantRevokedWhileMappedIsContained) {
  tx_driver& t = connect_and_drive();
  begin_attack();
  const auto keys = guest().device().queues().at(0)->keys();
  guest().hostile().revoke(keys.tx_ring_ref);
  guest().hostile().revoke(keys.rx_ring_ref);
  t.send_valid();
  const auto rsp = t.responses(1);
  EXPECT_EQ(statuses(rsp), std::vector<std::int16_t>{okay});
  expect_contained();
}

TEST_F(Grants, BadRxBufferGrantsGiveErrorSlots) {
  isolate_hostile_vif();
  manual_frontend m(guest(), 1, false, false);  // no RX buffer posted yet
  m.connect();
  ASSERT_TRUE(guest().wait_backend_state({4}));
  rx_driver rx(guest(), m.queue(0));
  raw_port inject(w().host_ns(), hostile_guest::vif);
  const mac_bytes to = parse_mac(hostile_guest::mac);
  const mac_bytes from = parse_mac("02:00:00:00:00:01");
  const auto before = counter("rx_copy_errors");
  begin_attack();
  sim::guest_domain& d = guest().domain();
  const grant_ref read_only = d.grant_access(d.alloc_page(), domid{0}, sim::grant_mode::read_only);
  const grant_ref foreign =
      d.grant_access(d.alloc_page(), other_guest, sim::grant_mode::read_write);
  const std::vector<grant_ref> bad{grant_ref(0xFFFFFFFFU), grant_ref(3), read_only, foreign};
  std::uint8_t seed = 0;
  for (const grant_ref gref : bad) {
    rx.post(gref);
    inject.send(test_frame(to, from, 200, seed++));
    const auto rsp = rx.responses(1);
    ASSERT_EQ(rsp.size(), 1U) << "no RX response for gref " << gref.value();
    EXPECT_EQ(rsp[0].status, error) << "gref " << gref.value();
  }
  EXPECT_EQ(counter("rx_copy_errors"), before + bad.size());
  rx.post_buffer();
  inject.send(test_frame(to, from, 200, seed++));
  const auto good_rsp = rx.responses(1);
  ASSERT_EQ(good_rsp.size(), 1U);
  EXPECT_EQ(good_rsp[0].status, 200);
  expect_vif_connected();
  expect_contained();
}

}  // namespace
}  // namespace unetback::hostile
