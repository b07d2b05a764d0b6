// Guest RX through a running queue: frames from the TAP land in the buffers
// the guest posted, with the right responses; no buffers means the TAP is
// left alone.

#include <atomic>
#include <cstring>

#include "queue_fixture.hpp"
#include "unetback/rings/toeplitz.hpp"

namespace unetback::datapath::test {
namespace {

using namespace rings::test;  // NOLINT(google-build-using-namespace): frame builders

class GuestRx : public QueueTest {};

rings::vnet_header needs_csum(std::uint16_t start, std::uint16_t off) {
  rings::vnet_header h{};
  h.flags = rings::vnet_f_needs_csum;
  h.csum_start = start;
  h.csum_offset = off;
  return h;
}

TEST_F(GuestRx, FrameLandsInPostedBufferWithResponse) {
  start_queue();
  post_rx(4);
  frame f = ipv4_frame(rings::ipproto_tcp, ip_a, ip_b, tcp_segment(1, 2, 0x18, 200));
  tap_write(f, needs_csum(34, 16));
  ASSERT_TRUE(wait_rx_responses(1));
  const rings::rx_response& r = rx_rsps_[0];
  EXPECT_EQ(r.id, 100);
  EXPECT_EQ(r.status, static_cast<std::int16_t>(f.size()));
  EXPECT_EQ(r.offset, 0);
  EXPECT_EQ(r.flags, rings::rx_flags::csum_blank | rings::rx_flags::data_validated);
  EXPECT_EQ(std::memcmp(rx_page(0), f.data(), f.size()), 0);
  const auto c = counters();
  EXPECT_EQ(c.rx_packets, 1U);
  EXPECT_EQ(c.rx_bytes, f.size());
  EXPECT_EQ(c.rx_slots, 1U);
  EXPECT_EQ(c.grant_copy_calls, 1U);
  // The worker publishes the responses before it notifies: wait for the kick.
  EXPECT_TRUE(wait_until([&] { return evtchn().notifies_to(tx_port) >= 1; }));
}

TEST_F(GuestRx, NoBuffersPostedMeansTapIsNotRead) {
  start_stepped();
  const frame f = ipv4_frame(rings::ipproto_udp, ip_a, ip_b, udp_datagram(1, 2, 30));
  for (int i = 0; i < 3; ++i) {
    tap_write(f);
  }
  settle();
  EXPECT_TRUE(tap_has_unread_frames());  // backpressure: frames stay in the kernel queue
  EXPECT_EQ(counters().rx_packets, 0U);
  post_rx(3);
  settle();
  ASSERT_EQ(rx_responses().size(), 3U);
  EXPECT_EQ(counters().rx_packets, 3U);
  EXPECT_EQ(rx_rsps_[2].id, 102);
  EXPECT_FALSE(tap_has_unread_frames());
}

TEST_F(GuestRx, LargeFrameSpansBuffersWithMoreData) {
  start_queue();
  post_rx(4);
  const frame f = ipv4_frame(rings::ipproto_udp, ip_a, ip_b, udp_datagram(1, 2, 9000));
  tap_write(f);
  ASSERT_TRUE(wait_rx_responses(3));
  EXPECT_EQ(rx_rsps_[0].status, 4096);
  EXPECT_EQ(rx_rsps_[0].flags & rings::rx_flags::more_data, rings::rx_flags::more_data);
  EXPECT_EQ(rx_rsps_[1].status, 4096);
  EXPECT_EQ(rx_rsps_[2].status, static_cast<std::int16_t>(f.size() - 8192));
  EXPECT_EQ(rx_rsps_[2].flags & rings::rx_flags::more_data, 0);
  EXPECT_EQ(std::memcmp(rx_page(2), f.data() + 8192, f.size() - 8192), 0);
}

TEST_F(GuestRx, FrameNeedingMoreBuffersWaitsForThem) {
  start_stepped();
  post_rx(1);
  const frame f = ipv4_frame(rings::ipproto_udp, ip_a, ip_b, udp_datagram(1, 2, 9000));
  tap_write(f);
  settle();
  EXPECT_TRUE(rx_responses().empty());  // one buffer is not enough: held, not split
  post_rx(2);
  settle();
  ASSERT_EQ(rx_responses().size(), 3U);
  EXPECT_EQ(counters().rx_packets, 1U);
}

TEST_F(GuestRx, FrameTooBigForGuestWithoutSgIsDropped) {
  config_.features.sg = false;
  config_.features.gso_tcpv4 = false;
  config_.features.gso_tcpv6 = false;
  start_queue();
  post_rx(4);
  tap_write(ipv4_frame(rings::ipproto_udp, ip_a, ip_b, udp_datagram(1, 2, 5000)));
  const frame small = ipv4_frame(rings::ipproto_udp, ip_a, ip_b, udp_datagram(1, 2, 50));
  tap_write(small);
  ASSERT_TRUE(wait_rx_responses(1));
  EXPECT_EQ(rx_rsps_[0].status, static_cast<std::int16_t>(small.size()));
  EXPECT_EQ(counters().rx_drops_too_big, 1U);
}

TEST_F(GuestRx, TsoFrameCarriesGsoExtra) {
  start_queue();
  post_rx(4);
  const frame f = ipv4_frame(rings::ipproto_tcp, ip_a, ip_b, tcp_segment(1, 2, 0x10, 3000));
  rings::vnet_header h = needs_csum(34, 16);
  h.gso_type = rings::vnet_gso_tcpv4;
  h.gso_size = 1448;
  tap_write(f, h);
  ASSERT_TRUE(wait_rx_responses(2));
  EXPECT_EQ(rx_rsps_[0].flags & rings::rx_flags::extra_info, rings::rx_flags::extra_info);
  rings::extra_info e{};
  std::memcpy(&e, &rx_rsps_[1], sizeof(e));
  EXPECT_EQ(e.type, rings::extra_type::gso);
  EXPECT_EQ(e.u.gso.size, 1448);
  EXPECT_EQ(e.u.gso.type, rings::gso_type::tcpv4);
}

TEST_F(GuestRx, RevokedBufferGivesErrorStatus) {
  start_queue();
  post_rx(1);
  mem_.revoke(rx_grefs_[0]);
  tap_write(ipv4_frame(rings::ipproto_udp, ip_a, ip_b, udp_datagram(1, 2, 30)));
  ASSERT_TRUE(wait_rx_responses(1));
  EXPECT_EQ(rx_rsps_[0].status, rings::netif_rsp::error);
  EXPECT_EQ(counters().rx_copy_errors, 1U);
  EXPECT_EQ(counters().grant_copy_errors, 1U);
  post_rx(1);
  const frame f = ipv4_frame(rings::ipproto_udp, ip_a, ip_b, udp_datagram(1, 2, 31));
  tap_write(f);
  ASSERT_TRUE(wait_rx_responses(2));
  EXPECT_EQ(rx_rsps_[1].status, static_cast<std::int16_t>(f.size()));
}

TEST_F(GuestRx, ReadOnlyBufferGivesErrorStatus) {
  start_queue();
  post_rx(1);
  mem_.make_readonly(rx_grefs_[0]);
  tap_write(ipv4_frame(rings::ipproto_udp, ip_a, ip_b, udp_datagram(1, 2, 30)));
  ASSERT_TRUE(wait_rx_responses(1));
  EXPECT_EQ(rx_rsps_[0].status, rings::netif_rsp::error);
}

TEST_F(GuestRx, MulticastAddThenFiltering) {
  config_.features.multicast_control = true;
  start_queue();
  // The guest subscribes to 01:00:5e:00:00:01 with a dummy TX request.
  rings::tx_request first{};
  first.flags = rings::tx_flags::extra_info;
  rings::extra_info add{};
  add.type = rings::extra_type::mcast_add;
  const std::uint8_t mac[6] = {0x01, 0x00, 0x5e, 0x00, 0x00, 0x01};
  std::memcpy(add.u.mcast.addr, mac, 6);
  rings::tx_request add_slot{};
  std::memcpy(&add_slot, &add, sizeof(add));
  send_slots({first, add_slot});
  ASSERT_TRUE(wait_tx_responses(2));
  post_rx(4);
  frame wanted = ipv4_frame(rings::ipproto_udp, ip_a, ip_b, udp_datagram(1, 2, 30));
  std::memcpy(wanted.data(), mac, 6);
  frame unwanted = wanted;
  unwanted[5] = std::byte{2};
  frame broadcast = wanted;
  std::memset(broadcast.data(), 0xFF, 6);
  tap_write(unwanted);
  tap_write(wanted);
  tap_write(broadcast);
  ASSERT_TRUE(wait_rx_responses(2));
  EXPECT_EQ(std::memcmp(rx_page(0), wanted.data(), wanted.size()), 0);
  EXPECT_EQ(std::memcmp(rx_page(1), broadcast.data(), 6), 0);
  EXPECT_EQ(counters().rx_drops_multicast_filtered, 1U);
  EXPECT_EQ(counters().rx_packets, 2U);
}

TEST_F(GuestRx, HashExtraWhenControlRingEnabledHashing) {
  shared_ = std::make_shared<vif_shared_state>(1);
  rings::hash_config cfg;
  cfg.algorithm = XEN_NETIF_CTRL_HASH_ALGORITHM_TOEPLITZ;
  cfg.flags = XEN_NETIF_CTRL_HASH_TYPE_IPV4_TCP;
  cfg.key[0] = 0x6d;
  cfg.key[1] = 0x5a;
  shared_->publish_hash(cfg);
  start_queue();
  post_rx(4);
  const frame f = ipv4_frame(rings::ipproto_tcp, ip_a, ip_b, tcp_segment(1, 2, 0x10, 20));
  tap_write(f);
  ASSERT_TRUE(wait_rx_responses(2));
  rings::extra_info e{};
  std::memcpy(&e, &rx_rsps_[1], sizeof(e));
  EXPECT_EQ(e.type, rings::extra_type::hash);
  EXPECT_EQ(e.u.hash.type, _XEN_NETIF_CTRL_HASH_TYPE_IPV4_TCP);
  const auto in = rings::build_hash_input(f, cfg.flags);
  ASSERT_TRUE(in);
  const std::uint32_t expect = rings::toeplitz_hash(cfg.key, in->data());
  EXPECT_EQ(e.u.hash.value[0], expect & 0xFF);
  EXPECT_EQ(e.u.hash.value[3], expect >> 24);
  EXPECT_EQ(counters().rx_hash_extras, 1U);
}

/// A socket port that records the carrier the queue sets (a TAP's TUNSETCARRIER).
class carrier_port final : public platform::frame_port {
 public:
  carrier_port(int fd, std::atomic<int>& carrier) : inner_(fd), carrier_(carrier) {}
  [[nodiscard]] int fd() const override { return inner_.fd(); }
  [[nodiscard]] std::size_t vnet_hdr_size() const override { return 12; }
  long read_frame(std::span<std::byte> buf) override { return inner_.read_frame(buf); }
  long write_frame(std::span<const iovec> iov) override { return inner_.write_frame(iov); }
  long set_carrier(bool on) override {
    carrier_.store(on ? 1 : 0);
    return 0;
  }

 private:
  socket_frame_port inner_;
  std::atomic<int>& carrier_;
};

class GuestRxStall : public GuestRx {
 protected:
  std::unique_ptr<platform::frame_port> make_tap(int fd) override {
    return std::make_unique<carrier_port>(fd, carrier_);
  }
  std::atomic<int> carrier_{-1};  // -1: never set by the queue
};

// Linux's netback: no usable buffers for rx_stall_timeout is a stall, the
// carrier goes off (the host stops queueing), what waits is dropped; buffers
// posted again bring the carrier back.
TEST_F(GuestRxStall, GuestThatNeverPostsEnoughBuffersIsDeclaredStalled) {
  config_.tuning.rx_stall_timeout = std::chrono::milliseconds(50);
  start_queue();
  post_rx(1);
  tap_write(ipv4_frame(rings::ipproto_udp, ip_a, ip_b, udp_datagram(1, 2, 9000)));  // 3 slots
  ASSERT_TRUE(wait_until([&] { return counters().rx_stalls == 1; }));
  EXPECT_TRUE(wait_until([&] { return counters().rx_drops_no_slots == 1; }));
  EXPECT_EQ(carrier_.load(), 0);
  const frame small = ipv4_frame(rings::ipproto_udp, ip_a, ip_b, udp_datagram(1, 2, 30));
  tap_write(small);
  ASSERT_TRUE(wait_rx_responses(1));  // the remaining buffer still serves small frames
  EXPECT_EQ(rx_rsps_[0].status, static_cast<std::int16_t>(small.size()));
  EXPECT_TRUE(wait_until([&] { return carrier_.load() == 1; }));
  EXPECT_EQ(counters().rx_stalls, 1U);
}

// A guest that takes frames until its buffers run out and then posts no more
// (a paused domain, as the lab's rx-stall scenario found on real Xen): the
// sweep that used up the buffers delivered, but the stall clock starts
// there, and the worker wakes to declare the stall without another event.
TEST_F(GuestRxStall, GuestThatStopsPostingAfterTakingFramesIsDeclaredStalled) {
  config_.tuning.rx_stall_timeout = std::chrono::milliseconds(50);
  start_stepped();
  post_rx(2);
  for (std::uint16_t port = 1; port <= 3; ++port) {
    tap_write(ipv4_frame(rings::ipproto_udp, ip_a, ip_b, udp_datagram(port, 2, 30)));
  }
  settle();
  ASSERT_EQ(rx_responses().size(), 2U);  // the third frame waits for a buffer
  const int timeout = stepped_->poll_timeout_ms(now_);
  EXPECT_GE(timeout, 0);  // not "until an fd is ready": no event will come
  EXPECT_LE(timeout, 50);
  now_ += config_.tuning.rx_stall_timeout;
  settle();
  EXPECT_EQ(counters().rx_stalls, 1U);
  EXPECT_EQ(carrier_.load(), 0);
  post_rx(2);
  const frame fresh = ipv4_frame(rings::ipproto_udp, ip_a, ip_b, udp_datagram(9, 2, 31));
  tap_write(fresh);
  settle();
  EXPECT_EQ(rx_responses().size(), 3U);
  EXPECT_EQ(rx_rsps_[2].status, static_cast<std::int16_t>(fresh.size()));
  EXPECT_EQ(carrier_.load(), 1);
}

// Frames that wait while the guest posts nothing are dropped every
// rx_drain_timeout (Linux rx_drain_timeout_msecs): a guest that comes back
// gets what arrived since, not what queued while it was away.
TEST_F(GuestRxStall, FramesWaitingLongerThanTheDrainTimeoutAreDropped) {
  config_.tuning.rx_drain_timeout = std::chrono::milliseconds(40);
  start_stepped();
  for (std::uint16_t port = 1; port <= 3; ++port) {
    tap_write(ipv4_frame(rings::ipproto_udp, ip_a, ip_b, udp_datagram(port, 2, 30)));
  }
  settle();
  EXPECT_EQ(counters().rx_drops_stale, 0U);  // not yet
  now_ += config_.tuning.rx_drain_timeout;
  settle();
  EXPECT_EQ(counters().rx_drops_stale, 3U);
  EXPECT_EQ(counters().rx_stalls, 0U);  // not yet rx_stall_timeout (60 s)
  EXPECT_EQ(carrier_.load(), -1);
  const frame fresh = ipv4_frame(rings::ipproto_udp, ip_a, ip_b, udp_datagram(9, 2, 31));
  post_rx(4);
  tap_write(fresh);
  settle();
  ASSERT_EQ(rx_responses().size(), 1U);
  EXPECT_EQ(rx_rsps_[0].status, static_cast<std::int16_t>(fresh.size()));
  EXPECT_EQ(counters().rx_packets, 1U);
}

// Such a frontend never kicks for RX buffers: while a frame waits, the
// worker's sleep is bounded by the poll interval, so it looks again.
TEST_F(GuestRx, FrontendWithoutRxNotifyIsPolled) {
  config_.features.rx_notify = false;
  start_stepped();
  const frame f = ipv4_frame(rings::ipproto_udp, ip_a, ip_b, udp_datagram(1, 2, 30));
  tap_write(f);
  settle();
  const int timeout = stepped_->poll_timeout_ms(now_);
  EXPECT_GE(timeout, 0);  // not "until an fd is ready"
  EXPECT_LE(timeout, worker::rx_poll_interval.count());
  post_rx(1, guest_kick::never);
  now_ += worker::rx_poll_interval;
  settle();
  ASSERT_EQ(rx_responses().size(), 1U);
  EXPECT_EQ(counters().rx_packets, 1U);
}

// With feature-rx-notify the guest kicks for buffers: only the stall and
// drain timers (seconds) bound the sleep.
TEST_F(GuestRx, FrontendWithRxNotifyIsNotPolled) {
  start_stepped();
  tap_write(ipv4_frame(rings::ipproto_udp, ip_a, ip_b, udp_datagram(1, 2, 30)));
  settle();
  const int timeout = stepped_->poll_timeout_ms(now_);
  EXPECT_TRUE(timeout == -1 || timeout > 100) << timeout;
}

TEST_F(GuestRx, PartialChecksumCompletedForGuestWithoutIpv6Offload) {
  config_.features.ipv6_csum_offload = false;
  start_queue();
  post_rx(1);
  frame f = ipv6_frame(rings::ipproto_udp, ip6_a, ip6_b, udp_datagram(1, 2, 33));
  const auto l3 = rings::parse_l3(f).value();
  rings::store_be16(f, 54 + 6, rings::pseudo_header_sum(f, l3));  // as the kernel leaves it
  tap_write(f, needs_csum(54, 6));
  ASSERT_TRUE(wait_rx_responses(1));
  EXPECT_EQ(rx_rsps_[0].flags, rings::rx_flags::data_validated);
  frame delivered(rx_page(0), rx_page(0) + f.size());
  EXPECT_TRUE(rings::l4_checksum_ok(delivered, l3));
  EXPECT_EQ(counters().rx_checksum_completed, 1U);
}

}  // namespace
}  // namespace unetback::datapath::test
