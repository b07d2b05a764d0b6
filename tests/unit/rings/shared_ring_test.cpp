// The generic shared ring: attach rules, index arithmetic, notification and
// final-check idioms, driven from both ends as a netfront and netback would.

#include <gtest/gtest.h>

#include <cstring>
#include <utility>
#include <vector>

#include "test_frames.hpp"
#include "unetback/rings/netif.hpp"

namespace unetback::rings {
namespace {

using test::page_buffer;

tx_request tx_req(std::uint16_t id, std::uint16_t size) {
  tx_request r{};
  r.gref = 100U + id;
  r.id = id;
  r.size = size;
  return r;
}

/// A frontend that wrote `n` one-slot requests (ids 0..n-1) and pushed them.
tx_front_ring posted_tx(page_buffer& p, std::uint16_t n) {
  auto front = tx_front_ring::init(p.page());
  for (std::uint16_t i = 0; i < n; ++i) {
    EXPECT_TRUE(front.write_request(tx_req(i, 60)));
  }
  (void)front.push_requests_and_check_notify();
  return front;
}

sring_header& header(page_buffer& p) {
  return *reinterpret_cast<sring_header*>(p.bytes.data());
}

TEST(SharedRing, RingSizesMatchXenConstRingSize) {
  EXPECT_EQ(tx_back_ring::size, 256U);
  EXPECT_EQ(rx_back_ring::size, 256U);
  EXPECT_EQ(ctrl_back_ring::size, 128U);
  EXPECT_EQ((ring_entry_size<tx_request, tx_response>), 12U);
  EXPECT_EQ((ring_entry_size<rx_request, rx_response>), 8U);
  EXPECT_EQ((ring_entry_size<ctrl_request, ctrl_response>), 16U);
}

TEST(SharedRing, FrontendInitialisesHeaderLikeNetfront) {
  page_buffer p;
  std::memset(p.bytes.data(), 0xAB, p.bytes.size());
  auto front = tx_front_ring::init(p.page());
  const sring_header h = front.header_snapshot();
  EXPECT_EQ(h.req_prod, 0U);
  EXPECT_EQ(h.rsp_prod, 0U);
  EXPECT_EQ(h.req_event, 1U);
  EXPECT_EQ(h.rsp_event, 1U);
  EXPECT_EQ(front.free_requests(), 256U);
}

TEST(SharedRing, BackendAttachKeepsPostedRequests) {
  page_buffer p;
  auto front = rx_front_ring::init(p.page());
  for (std::uint16_t i = 0; i < 10; ++i) {
    rx_request r{};
    r.id = i;
    ASSERT_TRUE(front.write_request(r));
  }
  (void)front.push_requests_and_check_notify();
  auto back = rx_back_ring::attach(p.page());
  ASSERT_TRUE(back);
  EXPECT_EQ(back.value().header_snapshot().req_prod, 10U);  // never re-initialised
  EXPECT_EQ(back.value().unconsumed_requests().value(), 10U);
  EXPECT_EQ(back.value().req_cons(), 0U);
}

TEST(SharedRing, AttachStartsAtRspProd) {
  page_buffer p;
  header(p).req_prod = 0xFFFFFFF0U + 5;
  header(p).rsp_prod = 0xFFFFFFF0U;
  auto back = tx_back_ring::attach(p.page());
  ASSERT_TRUE(back);
  EXPECT_EQ(back.value().req_cons(), 0xFFFFFFF0U);
  EXPECT_EQ(back.value().rsp_prod_pvt(), 0xFFFFFFF0U);
  EXPECT_EQ(back.value().unconsumed_requests().value(), 5U);
}

TEST(SharedRing, AttachRejectsReqProdMoreThanRingAheadOfRspProd) {
  page_buffer p;
  header(p).req_prod = 257;
  header(p).rsp_prod = 0;
  auto back = tx_back_ring::attach(p.page());
  ASSERT_FALSE(back);
  EXPECT_EQ(back.error(), ring_error::attach_overflow);
}

TEST(SharedRing, AttachAcceptsExactlyFullRing) {
  page_buffer p;
  header(p).req_prod = 256;
  EXPECT_TRUE(tx_back_ring::attach(p.page()));
}

TEST(SharedRing, ProducerIndexOverflowIsFatal) {
  page_buffer p;
  auto back = tx_back_ring::attach(p.page()).value();
  header(p).req_prod = 257;  // more requests than the ring holds
  auto n = back.unconsumed_requests();
  ASSERT_FALSE(n);
  EXPECT_EQ(n.error(), ring_error::producer_overflow);
}

TEST(SharedRing, ProducerIndexGoingBackwardsIsFatal) {
  page_buffer p;
  header(p).req_prod = 10;
  auto back = tx_back_ring::attach(p.page()).value();
  back.consume(10);
  header(p).req_prod = 9;  // behind req_cons: u32 difference is huge
  EXPECT_EQ(back.unconsumed_requests().error(), ring_error::producer_overflow);
}

TEST(SharedRing, IndicesWrapAroundU32) {
  page_buffer p;
  header(p).rsp_prod = 0xFFFFFFFEU;
  header(p).req_prod = 0xFFFFFFFEU;
  auto back = tx_back_ring::attach(p.page()).value();
  header(p).req_prod = 3;  // 5 requests across the wrap
  EXPECT_EQ(back.unconsumed_requests().value(), 5U);
  back.consume(5);
  EXPECT_EQ(back.req_cons(), 3U);
  EXPECT_EQ(back.unconsumed_requests().value(), 0U);
}

TEST(SharedRing, ConsumptionIsBoundedByResponseSpace) {
  page_buffer p;
  auto back = tx_back_ring::attach(p.page()).value();
  header(p).req_prod = 200;
  back.consume(200);  // consumed, none answered yet
  for (int i = 0; i < 50; ++i) {
    back.write_response(tx_response{});
  }
  // 150 requests await responses: only 256 - 150 more may be consumed.
  header(p).req_prod = 50 + 256;
  EXPECT_EQ(back.unconsumed_requests().value(), 256U - 150U);
}

TEST(SharedRing, RequestsBeyondUnansweredSlotsAreProducerOverflow) {
  page_buffer p;
  auto back = tx_back_ring::attach(p.page()).value();
  header(p).req_prod = 200;
  back.consume(200);
  for (int i = 0; i < 50; ++i) {
    back.write_response(tx_response{});
  }
  // req_prod - req_cons = 107 looks fine, but req_prod - rsp_prod_pvt = 257:
  // the frontend overwrote a slot whose response it has not seen.
  header(p).req_prod = 50 + 257;
  EXPECT_EQ(back.unconsumed_requests().error(), ring_error::producer_overflow);
}

TEST(SharedRing, CopiedRequestIsNotAffectedByLaterGuestWrites) {
  page_buffer p;
  auto front = tx_front_ring::init(p.page());
  ASSERT_TRUE(front.write_request(tx_req(7, 60)));
  (void)front.push_requests_and_check_notify();
  auto back = tx_back_ring::attach(p.page()).value();
  std::array<tx_request, 1> copy{};
  back.copy_requests(copy);
  // The guest rewrites the slot after our copy (XSA-155 double fetch).
  auto* shared = reinterpret_cast<tx_request*>(p.bytes.data() + sizeof(sring_header));
  shared->size = 4000;
  EXPECT_EQ(copy[0].size, 60);
  EXPECT_EQ(copy[0].id, 7);
}

TEST(SharedRing, PushNotifiesOnlyWhenFrontendAskedForIt) {
  page_buffer p;
  (void)posted_tx(p, 4);
  auto back = tx_back_ring::attach(p.page()).value();
  back.consume(4);
  back.write_response(tx_response{0, 0});
  EXPECT_TRUE(back.push_responses_and_check_notify());  // rsp_event == 1 in (0, 1]
  back.write_response(tx_response{1, 0});
  EXPECT_FALSE(back.push_responses_and_check_notify());  // rsp_event still 1, not in (1, 2]
  header(p).rsp_event = 4;
  back.write_response(tx_response{2, 0});
  EXPECT_FALSE(back.push_responses_and_check_notify());  // 4 not in (2, 3]
  back.write_response(tx_response{3, 0});
  EXPECT_TRUE(back.push_responses_and_check_notify());  // 4 in (3, 4]
}

TEST(SharedRing, FrontendPushNotifiesWhenBackendWaits) {
  page_buffer p;
  auto front = tx_front_ring::init(p.page());
  auto back = tx_back_ring::attach(p.page()).value();
  EXPECT_EQ(back.final_check_for_requests().value(), 0U);
  EXPECT_EQ(back.header_snapshot().req_event, 1U);
  ASSERT_TRUE(front.write_request(tx_req(0, 60)));
  EXPECT_TRUE(front.push_requests_and_check_notify());
  ASSERT_TRUE(front.write_request(tx_req(1, 60)));
  EXPECT_FALSE(front.push_requests_and_check_notify());  // backend not waiting for #2
}

TEST(SharedRing, FinalCheckSetsReqEventAfterLastConsumed) {
  page_buffer p;
  (void)posted_tx(p, 3);
  auto back = tx_back_ring::attach(p.page()).value();
  EXPECT_EQ(back.final_check_for_requests().value(), 3U);  // work pending: no change
  back.consume(3);
  EXPECT_EQ(back.final_check_for_requests().value(), 0U);
  EXPECT_EQ(back.header_snapshot().req_event, 4U);
}

TEST(SharedRing, FinalCheckReportsProducerOverflow) {
  page_buffer p;
  auto back = tx_back_ring::attach(p.page()).value();
  header(p).req_prod = 1000;
  EXPECT_EQ(back.final_check_for_requests().error(), ring_error::producer_overflow);
}

TEST(SharedRing, RxWaitingForSlotsSetsReqEventBeyondReqProd) {
  page_buffer p;
  auto front = rx_front_ring::init(p.page());
  ASSERT_TRUE(front.write_request(rx_request{}));
  (void)front.push_requests_and_check_notify();
  auto back = rx_back_ring::attach(p.page()).value();
  const std::uint32_t prod = back.load_req_prod();
  back.set_req_event(prod + 1);  // wake me on the next buffer (Linux RX)
  EXPECT_EQ(back.header_snapshot().req_event, 2U);
  ASSERT_TRUE(front.write_request(rx_request{}));
  EXPECT_TRUE(front.push_requests_and_check_notify());
}

TEST(SharedRing, ResponseLandsInRequestsOwnSlot) {
  page_buffer p;
  auto front = rx_front_ring::init(p.page());
  for (std::uint16_t i = 0; i < 3; ++i) {
    rx_request r{};
    r.id = static_cast<std::uint16_t>(10 + i);
    ASSERT_TRUE(front.write_request(r));
  }
  (void)front.push_requests_and_check_notify();
  auto back = rx_back_ring::attach(p.page()).value();
  for (std::uint32_t i = 0; i < 3; ++i) {
    const rx_request r = back.copy_request(back.req_cons());
    back.consume(1);
    rx_response rsp{};
    rsp.id = r.id;
    rsp.status = static_cast<std::int16_t>(100 + i);
    back.write_response(rsp);
  }
  (void)back.push_responses_and_check_notify();
  ASSERT_EQ(front.unconsumed_responses().value(), 3U);
  for (std::uint32_t i = 0; i < 3; ++i) {
    const rx_response rsp = front.copy_response(i);
    EXPECT_EQ(rsp.id, 10 + i);
    EXPECT_EQ(rsp.status, static_cast<std::int16_t>(100 + i));
  }
}

TEST(SharedRing, FrontendNeverHasMoreThanRingSizeOutstanding) {
  page_buffer p;
  auto front = tx_front_ring::init(p.page());
  for (std::uint32_t i = 0; i < 256; ++i) {
    ASSERT_TRUE(front.write_request(tx_req(static_cast<std::uint16_t>(i), 60)));
  }
  EXPECT_FALSE(front.write_request(tx_req(0, 60)));
  EXPECT_EQ(front.free_requests(), 0U);
  EXPECT_EQ(front.req_prod_pvt(), 256U);
}

TEST(SharedRing, FrontendDetectsResponsesForUnsentRequests) {
  page_buffer p;
  auto front = posted_tx(p, 1);
  header(p).rsp_prod = 2;  // a hostile backend
  EXPECT_EQ(front.unconsumed_responses().error(), ring_error::response_overflow);
}

TEST(SharedRing, FrontendTakesResponsesInOrderAtMostAsManyAsAsked) {
  page_buffer p;
  auto front = posted_tx(p, 3);
  auto back = tx_back_ring::attach(p.page()).value();
  back.consume(3);
  for (std::uint16_t i = 0; i < 3; ++i) {
    back.write_response(tx_response{i, 0});
  }
  (void)back.push_responses_and_check_notify();
  std::vector<std::pair<std::uint16_t, std::uint32_t>> taken;  // (id, index)
  const auto record = [&](const tx_response& r, std::uint32_t idx) {
    taken.emplace_back(r.id, idx);
    EXPECT_EQ(front.rsp_cons(), idx + 1);  // consumed before it is handed over
  };
  EXPECT_EQ(front.take_responses(record, 2).value(), 2U);
  EXPECT_EQ(front.take_responses(record).value(), 1U);
  EXPECT_EQ(front.take_responses(record).value(), 0U);
  using taken_t = std::vector<std::pair<std::uint16_t, std::uint32_t>>;
  EXPECT_EQ(taken, (taken_t{{0, 0}, {1, 1}, {2, 2}}));
}

TEST(SharedRing, FrontendTakesNothingFromABackendAnsweringUnsentRequests) {
  page_buffer p;
  auto front = posted_tx(p, 1);
  header(p).rsp_prod = 2;  // a hostile backend
  int calls = 0;
  const auto taken = front.take_responses([&](const tx_response&, std::uint32_t) { ++calls; });
  EXPECT_EQ(taken.error(), ring_error::response_overflow);
  EXPECT_EQ(calls, 0);
  EXPECT_EQ(front.rsp_cons(), 0U);
}

TEST(SharedRing, FrontendFinalCheckArmsRspEvent) {
  page_buffer p;
  auto front = posted_tx(p, 1);
  auto back = tx_back_ring::attach(p.page()).value();
  back.consume(1);
  back.write_response(tx_response{0, 0});
  (void)back.push_responses_and_check_notify();
  ASSERT_EQ(front.final_check_for_responses().value(), 1U);
  front.consume_responses(1);
  EXPECT_EQ(front.final_check_for_responses().value(), 0U);
  EXPECT_EQ(front.header_snapshot().rsp_event, 2U);
}

TEST(SharedRing, ExtraInfoSlotWrittenAsTxRequestIsZeroPadded) {
  page_buffer p;
  std::memset(p.bytes.data(), 0xEE, p.bytes.size());
  auto front = tx_front_ring::init(p.page());
  std::memset(p.bytes.data() + sizeof(sring_header), 0xEE, 64);  // stale ring contents
  extra_info e{};
  e.type = extra_type::gso;
  ASSERT_TRUE(front.write_request_as(e));
  const auto* slot = p.bytes.data() + sizeof(sring_header);
  EXPECT_EQ(static_cast<std::uint8_t>(slot[0]), extra_type::gso);
  for (std::size_t i = sizeof(extra_info); i < sizeof(tx_request); ++i) {
    EXPECT_EQ(static_cast<std::uint8_t>(slot[i]), 0U) << i;
  }
}

}  // namespace
}  // namespace unetback::rings
