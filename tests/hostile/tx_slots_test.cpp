// Guest TX slot attacks (docs/protocol.md §3.3, §6.2 items 11-15, 17-18;
// XSA-423, XSA-432, XSA-448): page-crossing slots, chains whose sizes do not
// add up, chains running past req_prod, 19/21/22/hundreds of slots,
// zero-length and one-byte slots.

#include <algorithm>
#include <cstring>

#include "harness/hostile_fixture.hpp"

namespace unetback::hostile {
namespace {

using rings::netif_rsp::error;
using rings::netif_rsp::okay;
using rings::tx_flags::more_data;

class TxSlots : public hostile_test {};

/// A chain of `n` data slots: the first announces `total`, the others carry
/// `each` bytes from offset 0 of successive data pages.
void put_chain(tx_driver& tx, std::uint16_t total, std::uint32_t n, std::uint16_t each) {
  for (std::uint32_t i = 0; i < n; ++i) {
    const std::uint16_t flags = i + 1 < n ? more_data : 0;
    tx.put(tx.slot(i % tx_driver::data_pages, 0, i == 0 ? total : each, flags));
  }
}

std::vector<std::int16_t> all(std::size_t n, std::int16_t s) {
  return std::vector<std::int16_t>(n, s);
}

TEST_F(TxSlots, FirstSlotCrossingPageDisablesVif) {
  tx_driver& t = connect_and_drive();
  begin_attack();
  t.put(t.slot(1, 4000, 200));  // 4000 + 200 > 4096
  t.push();
  expect_vif_disabled("slot crosses a page boundary");
  expect_contained();
}

TEST_F(TxSlots, FollowingSlotCrossingPageDisablesVif) {
  tx_driver& t = connect_and_drive();
  begin_attack();
  t.put(t.slot(1, 0, 300, more_data));
  t.put(t.slot(2, 4090, 100));
  t.push();
  expect_vif_disabled("slot crosses a page boundary");
  expect_contained();
}

TEST_F(TxSlots, OffsetFarBeyondThePageDisablesVif) {
  tx_driver& t = connect_and_drive();
  begin_attack();
  t.put(t.slot(1, 0xFFFF, 60));
  t.push();
  expect_vif_disabled("slot crosses a page boundary");
  expect_contained();
}

TEST_F(TxSlots, FollowingSlotLargerThanRemainingIsDropped) {
  tx_driver& t = connect_and_drive();
  const auto before = counter("tx_drops_slot_size");
  begin_attack();
  t.put(t.slot(1, 0, 100, more_data));
  t.put(t.slot(2, 0, 200));  // 200 > what remains of 100
  t.push();
  EXPECT_EQ(statuses(t.responses(2)), all(2, error));
  EXPECT_EQ(counter("tx_drops_slot_size"), before + 1);
  EXPECT_TRUE(w().wait_log("slot size exceeds remaining packet size"));
  t.send_valid();
  EXPECT_EQ(statuses(t.responses(1)), all(1, okay));
  expect_vif_connected();
  expect_contained();
}

TEST_F(TxSlots, SizesAddingUpPastSixtyFourKibAreDropped) {
  tx_driver& t = connect_and_drive();
  const auto before = counter("tx_drops_slot_size");
  begin_attack();
  // 17 full pages announce 65535 bytes in total: the following slots alone
  // exceed it (a wrapped >= 64 KiB frame, as a buggy frontend sends).
  put_chain(t, 0xFFFF, 17, 4096);
  t.push();
  EXPECT_EQ(statuses(t.responses(17)), all(17, error));
  EXPECT_EQ(counter("tx_drops_slot_size"), before + 1);
  expect_vif_connected();
  expect_contained();
}

TEST_F(TxSlots, ChainShorterThanTotalLeavesTheRestToTheFirstSlot) {
  tx_driver& t = connect_and_drive();
  const auto packets = counter("tx_packets");
  const auto bytes = counter("tx_bytes");
  begin_attack();
  t.put(t.slot(1, 0, 200, more_data));  // first slot's own bytes: 200 - 50 - 50
  t.put(t.slot(2, 0, 50, more_data));
  t.put(t.slot(3, 0, 50));
  t.push();
  EXPECT_EQ(statuses(t.responses(3)), all(3, okay));
  EXPECT_EQ(counter("tx_packets"), packets + 1);
  EXPECT_EQ(counter("tx_bytes"), bytes + 200);
  expect_vif_connected();
  expect_contained();
}

TEST_F(TxSlots, ChainRunningPastTheProducerDisablesVif) {
  tx_driver& t = connect_and_drive();
  begin_attack();
  t.put(t.slot(1, 0, 100, more_data));  // more_data, and nothing after it
  t.push();
  expect_vif_disabled("packet asked for more slots than published");
  expect_contained();
}

TEST_F(TxSlots, NineteenSlotPacketIsAccepted) {
  tx_driver& t = connect_and_drive();
  const auto packets = counter("tx_packets");
  begin_attack();
  // XEN_NETIF_NR_SLOTS_MIN after the first, as Linux counts: old netfronts and
  // GPLPV send such TSO packets.
  put_chain(t, 19 * 100, 19, 100);
  t.push();
  EXPECT_EQ(statuses(t.responses(19)), all(19, okay));
  EXPECT_EQ(counter("tx_packets"), packets + 1);
  expect_vif_connected();
  expect_contained();
}

TEST_F(TxSlots, TwentyOneSlotPacketIsDroppedWithAnErrorForEverySlot) {
  tx_driver& t = connect_and_drive();
  const auto before = counter("tx_drops_too_many_slots");
  begin_attack();
  put_chain(t, 21 * 100, 21, 100);
  t.push();
  EXPECT_EQ(statuses(t.responses(21)), all(21, error));
  EXPECT_EQ(counter("tx_drops_too_many_slots"), before + 1);
  EXPECT_TRUE(w().wait_log("dropping guest TX packet: too many slots"));
  t.send_valid();
  EXPECT_EQ(statuses(t.responses(1)), all(1, okay));
  expect_vif_connected();
  expect_contained();
}

TEST_F(TxSlots, TwentyTwoSlotPacketDisablesVif) {
  tx_driver& t = connect_and_drive();
  begin_attack();
  put_chain(t, 22 * 100, 22, 100);
  t.push();
  expect_vif_disabled("malicious number of slots");
  expect_contained();
}

TEST_F(TxSlots, HundredsOfSlotsDisableVif) {
  tx_driver& t = connect_and_drive();
  begin_attack();
  put_chain(t, 250, 250, 1);
  t.push();
  expect_vif_disabled("malicious number of slots");
  expect_contained();
}

// XSA-423 / XSA-432: 18 one-byte slots (the most slots, each far shorter than
// any header) must come out as one contiguous, correct frame.
TEST_F(TxSlots, EighteenOneByteSlotsAreCoalescedIntoOneFrame) {
  tx_driver& t = connect_and_drive();
  raw_port capture(w().host_ns(), hostile_guest::vif);
  const auto packets = counter("tx_packets");
  begin_attack();
  for (std::uint16_t i = 0; i < 18; ++i) {  // byte i of page 0 in slot i
    t.put(t.slot(0, i, i == 0 ? 18 : 1, i + 1 < 18 ? more_data : 0));
  }
  t.push();
  EXPECT_EQ(statuses(t.responses(18)), all(18, okay));
  EXPECT_EQ(counter("tx_packets"), packets + 1);
  const auto expected =
      std::vector<std::uint8_t>(reinterpret_cast<const std::uint8_t*>(t.page(0).data()),
                                reinterpret_cast<const std::uint8_t*>(t.page(0).data()) + 18);
  bool seen = false;
  while (auto frame = capture.receive(std::chrono::seconds(3))) {
    if (frame->size() == 18) {
      EXPECT_EQ(*frame, expected) << "the coalesced frame is not the guest's 18 bytes";
      seen = true;
      break;
    }
  }
  EXPECT_TRUE(seen) << "the 18-byte frame never reached vif2.0";
  expect_contained();
}

// XSA-448: zero-length following slots are answered OKAY without any grant
// operation (their grant refs are garbage on purpose) and never become
// empty fragments.
TEST_F(TxSlots, ZeroLengthSlotsAreAnsweredWithoutGrantCopies) {
  isolate_hostile_vif();  // grant_copy_segments also counts RX: no RX traffic here
  tx_driver& t = connect_and_drive();
  const auto packets = counter("tx_packets");
  const auto segments = counter("grant_copy_segments");
  begin_attack();
  t.put(t.slot(1, 0, 60, more_data));
  for (int i = 0; i < 10; ++i) {
    rings::tx_request z = t.slot(2, 0, 0, i + 1 < 10 ? more_data : 0);
    z.gref = 0xFFFFFFF0U;  // would fail if the daemon copied it
    t.put(z);
  }
  t.push();
  EXPECT_EQ(statuses(t.responses(11)), all(11, okay));
  EXPECT_EQ(counter("tx_packets"), packets + 1);
  EXPECT_EQ(counter("grant_copy_segments"), segments + 1);
  expect_vif_connected();
  expect_contained();
}

TEST_F(TxSlots, AllZeroLengthPacketIsDroppedAsRunt) {
  tx_driver& t = connect_and_drive();
  const auto before = counter("tx_drops_runt");
  begin_attack();
  put_chain(t, 0, 6, 0);
  t.push();
  EXPECT_EQ(statuses(t.responses(6)), all(6, error));
  EXPECT_EQ(counter("tx_drops_runt"), before + 1);
  EXPECT_TRUE(w().wait_log("packet smaller than an Ethernet header"));
  expect_vif_connected();
  expect_contained();
}

TEST_F(TxSlots, PacketShorterThanAnEthernetHeaderIsDropped) {
  tx_driver& t = connect_and_drive();
  const auto before = counter("tx_drops_runt");
  begin_attack();
  t.put(t.slot(1, 0, 13));
  t.push();
  EXPECT_EQ(statuses(t.responses(1)), all(1, error));
  EXPECT_EQ(counter("tx_drops_runt"), before + 1);
  expect_vif_connected();
  expect_contained();
}

}  // namespace
}  // namespace unetback::hostile
