// Control-ring attacks (XSA-270; docs/protocol.md §4, §6.2 items 26-27):
// SET_HASH_MAPPING with overflowing offset/length and entries >= num_queues,
// keys and tables that are too large, unknown message types, bad grant refs
// in requests, a producer-index overflow, requests rewritten while the
// backend reads them, and a request flood.

#include <atomic>
#include <chrono>
#include <cstring>
#include <iostream>
#include <thread>

#include "harness/hostile_fixture.hpp"
#include "unetback/rings/ctrl_ring.hpp"

namespace unetback::hostile {
namespace {

constexpr std::uint32_t success = rings::ctrl_status::success;
constexpr std::uint32_t not_supported = rings::ctrl_status::not_supported;
constexpr std::uint32_t invalid = rings::ctrl_status::invalid_parameter;
constexpr std::uint32_t overflow = rings::ctrl_status::buffer_overflow;
constexpr std::uint32_t timed_out = 0xDEADU;
constexpr std::uint32_t num_queues = 2;

class CtrlRing : public hostile_test {
 protected:
  void SetUp() override {
    hostile_test::SetUp();
    if (IsSkipped()) {
      return;
    }
    m_ = std::make_unique<manual_frontend>(guest(), num_queues, false, true);
    m_->connect();
    ASSERT_TRUE(guest().wait_backend_state({4}));
  }
  void TearDown() override {
    m_.reset();
    hostile_test::TearDown();
  }
  raw_ctrl_ring& ctrl() { return m_->ctrl(); }
  /// Sends one request; its status (timed_out if unanswered).
  std::uint32_t call(std::uint16_t type, std::uint32_t d0 = 0, std::uint32_t d1 = 0,
                     std::uint32_t d2 = 0) {
    const auto r = ctrl().call(type, d0, d1, d2);
    return r ? r->status : timed_out;
  }
  /// A page granted to the backend holding `words` (a key or a table).
  grant_ref table(const std::vector<std::uint32_t>& words,
                  sim::grant_mode mode = sim::grant_mode::read_only, domid to = domid{0}) {
    sim::guest_domain& d = guest().domain();
    const std::uint32_t page = d.alloc_page();
    std::memcpy(d.page(page).data(), words.data(), words.size() * sizeof(std::uint32_t));
    return d.grant_access(page, to, mode);
  }
  void enable_toeplitz_with_table() {
    ASSERT_EQ(call(XEN_NETIF_CTRL_TYPE_SET_HASH_ALGORITHM, XEN_NETIF_CTRL_HASH_ALGORITHM_TOEPLITZ),
              success);
    ASSERT_EQ(call(XEN_NETIF_CTRL_TYPE_SET_HASH_MAPPING_SIZE, 128), success);
  }

  std::unique_ptr<manual_frontend> m_;
};

TEST_F(CtrlRing, HashMappingWithOverflowingOffsetOrLengthIsRejected) {
  enable_toeplitz_with_table();
  const grant_ref t = table(std::vector<std::uint32_t>(1024, 1));
  const auto rejected = counter("invalid_parameter");
  begin_attack();
  const std::uint16_t set = XEN_NETIF_CTRL_TYPE_SET_HASH_MAPPING;
  EXPECT_EQ(call(set, t.value(), 2, 0xFFFFFFFFU), invalid);  // offset + len wraps
  EXPECT_EQ(call(set, t.value(), 0xFFFFFFFFU, 1), invalid);  // len wraps
  EXPECT_EQ(call(set, t.value(), 1, 128), invalid);          // offset == size
  EXPECT_EQ(call(set, t.value(), 128, 1), invalid);          // offset + len = 129
  EXPECT_EQ(call(set, t.value(), 1024, 0), invalid);         // len > size, len * 4 == 4096
  EXPECT_EQ(call(set, t.value(), 0x40000001U, 0), invalid);  // len * 4 wraps to 4
  EXPECT_EQ(call(set, t.value(), 128, 0), success);          // the whole table: fine
  EXPECT_EQ(counter("invalid_parameter"), rejected + 6);     // unetbackctl stats: "ctrl"
  EXPECT_TRUE(w().wait_log("control ring request type 6 rejected (status 2)"));
  expect_vif_connected();
  expect_contained();
}

TEST_F(CtrlRing, HashMappingEntriesNotBelowNumQueuesAreRejected) {
  enable_toeplitz_with_table();
  begin_attack();
  const std::uint16_t set = XEN_NETIF_CTRL_TYPE_SET_HASH_MAPPING;
  EXPECT_EQ(call(set, table({0, 1, num_queues}).value(), 3, 0), invalid);
  EXPECT_EQ(call(set, table({0, 0xFFFFFFFFU}).value(), 2, 10), invalid);
  EXPECT_EQ(call(set, table({1, 0, 1}).value(), 3, 125), success);
  expect_vif_connected();
  expect_contained();
}

TEST_F(CtrlRing, OversizedKeysAndTablesAreRejected) {
  const grant_ref key = table(std::vector<std::uint32_t>(1024, 0x6d5a6d5aU));
  const auto overflows = counter("buffer_overflow");
  begin_attack();
  const std::uint16_t set_key = XEN_NETIF_CTRL_TYPE_SET_HASH_KEY;
  EXPECT_EQ(call(set_key, key.value(), 41), overflow);
  EXPECT_EQ(call(set_key, key.value(), 4096), overflow);
  EXPECT_EQ(call(set_key, key.value(), 0xFFFFFFFFU), overflow);
  EXPECT_EQ(call(set_key, key.value(), 40), success);
  EXPECT_EQ(call(set_key, key.value(), 0), success);  // clears the key
  EXPECT_EQ(call(XEN_NETIF_CTRL_TYPE_SET_HASH_MAPPING_SIZE, 129), invalid);
  EXPECT_EQ(call(XEN_NETIF_CTRL_TYPE_SET_HASH_MAPPING_SIZE, 0xFFFFFFFFU), invalid);
  EXPECT_EQ(call(XEN_NETIF_CTRL_TYPE_SET_HASH_ALGORITHM, 2), invalid);
  EXPECT_EQ(call(XEN_NETIF_CTRL_TYPE_SET_HASH_FLAGS, 0x10), invalid);  // no algorithm yet, bad bit
  EXPECT_EQ(counter("buffer_overflow"), overflows + 3);
  expect_vif_connected();
  expect_contained();
}

TEST_F(CtrlRing, UnknownMessageTypesAreNotSupported) {
  const auto unsupported = counter("not_supported");
  begin_attack();
  for (const std::uint16_t type :
       {std::uint16_t{0}, std::uint16_t{8}, std::uint16_t{9}, std::uint16_t{10}, std::uint16_t{11},
        std::uint16_t{0x7FFF}, std::uint16_t{0xFFFF}}) {
    EXPECT_EQ(call(type, 0xFFFFFFFFU, 0xFFFFFFFFU, 0xFFFFFFFFU), not_supported) << "type " << type;
  }
  EXPECT_EQ(call(XEN_NETIF_CTRL_TYPE_GET_HASH_FLAGS), not_supported);  // algorithm NONE
  EXPECT_EQ(counter("not_supported"), unsupported + 8);
  expect_vif_connected();
  expect_contained();
}

TEST_F(CtrlRing, BadGrantRefsInRequestsAreRejected) {
  enable_toeplitz_with_table();
  const grant_ref foreign = table({0, 1}, sim::grant_mode::read_only, domid{7});
  const grant_ref revoked = table({0, 1});
  sim::shared(guest().domain().raw_grant(revoked.value()).flags_domid).store(0);
  begin_attack();
  for (const std::uint32_t ref : {0xFFFFFFFFU, 3U, foreign.value(), revoked.value()}) {
    EXPECT_EQ(call(XEN_NETIF_CTRL_TYPE_SET_HASH_KEY, ref, 40), invalid) << "gref " << ref;
    EXPECT_EQ(call(XEN_NETIF_CTRL_TYPE_SET_HASH_MAPPING, ref, 2, 0), invalid) << "gref " << ref;
  }
  expect_vif_connected();
  expect_contained();
}

TEST_F(CtrlRing, ProducerIndexOverflowDisablesVif) {
  begin_attack();
  ctrl().publish_req_prod(ctrl().ring().req_prod_pvt() + 1000);
  expect_vif_disabled("producer index overflow", fault_at::control_ring);
  expect_contained();
}

// Each change of the guest's hash configuration costs the control plane a
// file write (the state directory), a table rebuild and a BPF map update. A
// guest alternating two mappings as fast as the ring answers changes it
// thousands of times per second; the control plane applies at most ten per
// second (paced_call), and the last one always. Without pacing it applied
// one per control-thread wake-up.
TEST_F(CtrlRing, HashConfigurationChangesArePacedOnTheControlPlane) {
  enable_toeplitz_with_table();
  const grant_ref zeros = table(std::vector<std::uint32_t>(128, 0));
  const grant_ref ones = table(std::vector<std::uint32_t>(128, 1));
  const auto applied = [&] { return w().hash(hostile_guest::id).value("applied", 0ULL); };
  ASSERT_TRUE(wait_until([&] { return applied() >= 1; }, state_timeout));
  std::this_thread::sleep_for(std::chrono::milliseconds(200));  // the first change settles
  const std::uint64_t before = applied();
  begin_attack();
  const auto start = std::chrono::steady_clock::now();
  std::uint32_t changes = 0;
  while (std::chrono::steady_clock::now() - start < std::chrono::seconds(2)) {
    const grant_ref t = changes % 2 == 0 ? ones : zeros;
    ASSERT_EQ(call(XEN_NETIF_CTRL_TYPE_SET_HASH_MAPPING, t.value(), 128, 0), success);
    ++changes;
  }
  const auto elapsed_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                              std::chrono::steady_clock::now() - start)
                              .count();
  const std::uint32_t last = changes % 2 == 1 ? 1 : 0;  // the value the last change wrote
  nlohmann::json h;
  EXPECT_TRUE(wait_until(
      [&] {
        h = w().hash(hostile_guest::id);
        return h.contains("mapping") && h["mapping"].size() == 128 && h["mapping"][0] == last;
      },
      std::chrono::seconds(2)))
      << "the last configuration was not applied: " << h.dump();
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  const std::uint64_t count = applied() - before;
  std::cerr << "[ctrl-pacing] " << changes << " mapping changes in " << elapsed_ms
            << " ms; the control plane applied " << count << "\n";
  EXPECT_GE(changes, 200U) << "the guest could not change its mapping fast: nothing was tested";
  EXPECT_LE(count, static_cast<std::uint64_t>(elapsed_ms) / 100 + 4);
  expect_vif_connected();
  expect_contained();
}

// XSA-155 on the control ring: a SET_HASH_MAPPING whose length/offset flip
// between valid and overflowing values while the backend reads it. Every
// answer is SUCCESS or INVALID_PARAMETER; the daemon (ASan) never reads or
// writes out of bounds.
TEST_F(CtrlRing, RequestRewrittenWhileTheBackendReadsItIsContained) {
  enable_toeplitz_with_table();
  const grant_ref t = table(std::vector<std::uint32_t>(1024, 1));
  begin_attack();
  std::size_t answered = 0;
  for (int round = 0; round < 200; ++round) {
    const rings::ctrl_request req = rings::make_ctrl_request(
        static_cast<std::uint16_t>(round), XEN_NETIF_CTRL_TYPE_SET_HASH_MAPPING, t.value(), 4, 0);
    const std::uint32_t idx = ctrl().ring().req_prod_pvt();
    ctrl().put(req);
    std::atomic<bool> stop{false};
    std::thread flipper([&] {
      rings::ctrl_request* s = ctrl().slot(idx);
      std::atomic_ref<std::uint32_t> len(s->data[1]);
      std::atomic_ref<std::uint32_t> off(s->data[2]);
      for (std::uint32_t i = 0; !stop.load(std::memory_order_relaxed); ++i) {
        len.store((i & 1) != 0 ? 0xFFFFFFF0U : 4U, std::memory_order_relaxed);
        off.store((i & 2) != 0 ? 0xFFFFFFFEU : 124U, std::memory_order_relaxed);
      }
    });
    const std::uint32_t rsp_before = ctrl().ring().header_snapshot().rsp_prod;
    ctrl().push();
    // The response lands in the slot being flipped: stop flipping once it is
    // published, then read it (only its status matters; data may be clobbered
    // by the guest's own late writes).
    wait_until([&] { return ctrl().ring().header_snapshot().rsp_prod != rsp_before; },
               std::chrono::seconds(5), std::chrono::milliseconds(1));
    stop = true;
    flipper.join();
    const auto rsp = ctrl().responses(1, std::chrono::seconds(1));
    if (rsp.size() == 1 && (rsp[0].status == success || rsp[0].status == invalid)) {
      ++answered;
    }
  }
  EXPECT_EQ(answered, 200U);
  expect_vif_connected();
  expect_contained();
}

TEST_F(CtrlRing, RequestFloodIsAnsweredAndBounded) {
  begin_attack();
  std::size_t answered = 0;
  for (int round = 0; round < 100; ++round) {
    for (std::uint32_t i = 0; i < rings::ctrl_front_ring::size; ++i) {
      rings::ctrl_request req{};
      req.id = static_cast<std::uint16_t>(i);
      req.type = XEN_NETIF_CTRL_TYPE_GET_HASH_MAPPING_SIZE;
      ctrl().put(req);
    }
    ctrl().push();
    for (const auto& r : ctrl().responses(rings::ctrl_front_ring::size, std::chrono::seconds(10))) {
      answered += r.status == success && r.data == rings::max_hash_mapping_size ? 1 : 0;
    }
  }
  EXPECT_EQ(answered, 100U * rings::ctrl_front_ring::size);
  expect_vif_connected();
  expect_contained();
}

}  // namespace
}  // namespace unetback::hostile
