// Producer-index attacks (XSA-39; docs/protocol.md §2.1-2.2, §6.2 items 6-8):
// a req_prod far ahead of the consumer, moved backwards, on the TX, RX and
// (see ctrl_ring_test) control rings, and a ring that is already overfull
// when the backend attaches.

#include <atomic>

#include "harness/hostile_fixture.hpp"

namespace unetback::hostile {
namespace {

class RingIndices : public hostile_test {};

TEST_F(RingIndices, TxProducerFarAheadDisablesVif) {
  tx_driver& t = connect_and_drive();
  begin_attack();
  t.publish_req_prod(t.ring().req_prod_pvt() + rings::tx_front_ring::size + 1);
  t.kick();
  expect_vif_disabled("producer index overflow");
  expect_contained();
}

TEST_F(RingIndices, TxProducerHalfwayAroundTheIndexSpaceDisablesVif) {
  tx_driver& t = connect_and_drive();
  begin_attack();
  t.publish_req_prod(t.ring().req_prod_pvt() + 0x80000000U);
  t.kick();
  expect_vif_disabled("producer index overflow");
  expect_contained();
}

TEST_F(RingIndices, TxProducerMovedBackwardsDisablesVif) {
  tx_driver& t = connect_and_drive();  // one packet consumed: req_cons = 1
  begin_attack();
  t.publish_req_prod(t.ring().req_prod_pvt() - 1);
  t.kick();
  expect_vif_disabled("producer index overflow");
  expect_contained();
}

TEST_F(RingIndices, TxRingExactlyFullIsServed) {
  tx_driver& t = connect_and_drive();
  const auto packets = counter("tx_packets");
  begin_attack();
  for (std::uint32_t i = 0; i < rings::tx_front_ring::size; ++i) {  // 256 one-slot packets
    t.put(t.slot(i % tx_driver::data_pages, 0, 60));
  }
  t.push();
  const auto r = t.responses(rings::tx_front_ring::size);
  EXPECT_EQ(r.size(), rings::tx_front_ring::size);
  EXPECT_EQ(statuses(r), std::vector<std::int16_t>(r.size(), rings::netif_rsp::okay));
  EXPECT_EQ(counter("tx_packets"), packets + rings::tx_front_ring::size);
  expect_vif_connected();
  expect_contained();
}

TEST_F(RingIndices, RxProducerFarAheadDisablesVif) {
  guest().connect();
  rx_driver rx(guest(), guest().stopped_queue(0));
  raw_port inject(w().host_ns(), hostile_guest::vif);
  begin_attack();
  rx.publish_req_prod(rx.ring().req_prod_pvt() + 1000);
  // A frame for the guest makes the RX path look at the ring, whatever it
  // does on a bare kick.
  inject.send(test_frame(parse_mac(hostile_guest::mac), parse_mac("02:00:00:00:00:01"), 100, 1));
  expect_vif_disabled("producer index overflow");
  expect_contained();
}

// §2.1: the backend attaches to the indices the frontend left, and refuses a
// ring whose req_prod is already more than a ring ahead of rsp_prod.
TEST_F(RingIndices, OverfullRingAtConnectIsRefused) {
  manual_frontend m(guest(), 1, false, false);
  std::byte* tx_page = guest().domain().page(m.queue(0).tx_ring_page().page).data();
  std::atomic_ref<std::uint32_t>(
      *reinterpret_cast<std::uint32_t*>(tx_page + offsetof(rings::sring_header, req_prod)))
      .store(300, std::memory_order_release);
  begin_attack();
  m.connect();
  expect_connect_refused("ring");
  expect_contained();
}

}  // namespace
}  // namespace unetback::hostile
