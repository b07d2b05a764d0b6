// Queue lifecycle and hostile-frontend handling: start failures leave nothing
// behind, faults are reported once and stop the worker, event storms are
// counted and backed off, ring dumps show the indices.

#include <cstring>
#include <stdexcept>

#include "queue_fixture.hpp"
#include "unetback/datapath/queue_counters.hpp"

namespace unetback::datapath::test {
namespace {

using namespace rings::test;  // NOLINT(google-build-using-namespace): frame builders

std::uint64_t event_pump_storm_threshold() {
  return 32;
}  // event_pump::storm_threshold

class QueueLifecycle : public QueueTest {
 protected:
  rings::sring_header& tx_header() { return header(tx_ref_); }
};

TEST_F(QueueLifecycle, ProducerIndexOverflowCallsOnFaultAndStops) {
  start_queue();
  const frame f = ipv4_frame(rings::ipproto_udp, ip_a, ip_b, udp_datagram(1, 2, 30));
  send_slots({one_slot(f, 0, 1)});
  ASSERT_TRUE(wait_tx_responses(1));
  rings::publish(tx_header().req_prod, tx_.req_prod_pvt() + 300);  // more than the ring holds
  evtchn().kick(tx_port);
  ASSERT_TRUE(wait_until([&] { return !faults().empty(); }));
  EXPECT_NE(faults()[0].detail.find("overflow"), std::string::npos);
  EXPECT_EQ(faults()[0].source, fault_source::tx_ring);
  EXPECT_EQ(faults()[0].kind(), fault_kind::frontend);
  EXPECT_EQ(faults()[0].queue, config_.index);
  EXPECT_EQ(counters().faults, 1U);
  evtchn().kick(tx_port);
  queue_->stop();                  // teardown still works
  EXPECT_EQ(faults().size(), 1U);  // reported once: the worker ended with it
  EXPECT_FALSE(evtchn().is_bound(tx_port));
}

// The sweep that finds the overflow consumes and answers nothing, and a
// worker stepped again finds the same fault without touching the ring.
TEST_F(QueueLifecycle, ProducerIndexOverflowLeavesTheRingAlone) {
  start_stepped();
  send_slots({one_slot(ipv4_frame(rings::ipproto_udp, ip_a, ip_b, udp_datagram(1, 2, 30)))});
  settle();
  ASSERT_EQ(tx_responses().size(), 1U);
  const auto rsp_prod = tx_.header_snapshot().rsp_prod;
  rings::publish(tx_header().req_prod, tx_.req_prod_pvt() + 300);
  for (int i = 0; i < 2; ++i) {
    const auto r = stepped_->step(now_);
    ASSERT_TRUE(r.fault);
    EXPECT_EQ(r.fault.source, fault_source::tx_ring);
    EXPECT_EQ(tx_.header_snapshot().rsp_prod, rsp_prod);
    EXPECT_EQ(stepped_->tx_ring().req_cons(), rsp_prod);
  }
}

TEST_F(QueueLifecycle, SlotCrossingPageIsFatal) {
  start_queue();
  const frame f = ipv4_frame(rings::ipproto_udp, ip_a, ip_b, udp_datagram(1, 2, 30));
  rings::tx_request r = one_slot(f, 0, 1);
  r.offset = 4090;
  send_slots({r});
  ASSERT_TRUE(wait_until([&] { return !faults().empty(); }));
  EXPECT_NE(faults()[0].detail.find("page"), std::string::npos);
  EXPECT_EQ(faults()[0].source, fault_source::tx_ring);
  EXPECT_TRUE(tx_responses().empty());
}

TEST_F(QueueLifecycle, TwentyTwoSlotPacketIsFatal) {
  start_queue();
  std::vector<rings::tx_request> slots;
  const frame chunk(10, std::byte{3});
  for (std::uint16_t i = 0; i < 22; ++i) {
    slots.push_back(one_slot(chunk, i + 1 < 22 ? rings::tx_flags::more_data : 0, i));
  }
  slots[0].size = 220;
  send_slots(slots);
  ASSERT_TRUE(wait_until([&] { return !faults().empty(); }));
  EXPECT_EQ(counters().faults, 1U);
}

TEST_F(QueueLifecycle, StartRejectsImpossibleRingIndices) {
  rings::publish(tx_header().req_prod, 300);
  EXPECT_THROW(start_queue(), std::runtime_error);
  EXPECT_FALSE(evtchn().is_bound(tx_port));
  EXPECT_EQ(queue_->ring_dump().find("TX:"), std::string::npos);  // nothing mapped
}

TEST_F(QueueLifecycle, StartFailsCleanlyOnUnknownRingRef) {
  config_.rx_ring_ref = grant_ref{123456};
  EXPECT_THROW(start_queue(), std::system_error);
  EXPECT_FALSE(evtchn().is_bound(tx_port));
}

// The rings are the frontend's grants: naming another domain maps nothing (as
// on Xen, the fake answers only for the guest that owns the memory).
TEST_F(QueueLifecycle, RingsAreMappedFromTheFrontendsDomainOnly) {
  config_.frontend = domid{8};  // the memory is domain 7's
  EXPECT_THROW(start_queue(), std::system_error);
}

TEST_F(QueueLifecycle, StartFailsCleanlyWhenSecondPortCannotBeBound) {
  config_.split_event_channels = true;
  config_.rx_port = evtchn_port{rx_port};
  // The fake refuses rx_port once the queue opened its channel.
  struct refusing_platform : fake_platform {
    using fake_platform::fake_platform;
    std::unique_ptr<::unetback::platform::event_channel> open_event_channel() override {
      auto ch = fake_platform::open_event_channel();
      static_cast<fake_event_channel&>(*ch).refuse_port = rx_port;
      return ch;
    }
  } refusing{mem_};
  int sv[2];
  ASSERT_EQ(::socketpair(AF_UNIX, SOCK_SEQPACKET, 0, sv), 0);
  ::close(sv[1]);
  queue q(refusing, config_, std::make_unique<socket_frame_port>(sv[0]), nullptr, nullptr);
  EXPECT_THROW(q.start(), std::system_error);
  EXPECT_FALSE(refusing.channels.at(0)->is_bound(tx_port));  // the first bind was undone
}

TEST_F(QueueLifecycle, EventStormWithNoWorkCountsSpuriousEventsAndBacksOff) {
  start_stepped();
  // A guest kicking every 100 us with nothing on its rings.
  const std::uint64_t storm = 2 * event_pump_storm_threshold();
  for (int i = 0; i < 10'000 && counters().spurious_events < storm; ++i) {
    evtchn().kick(tx_port);
    settle();
    now_ += std::chrono::microseconds(100);
  }
  EXPECT_GE(counters().spurious_events, storm);
  EXPECT_GE(counters().event_storm_backoffs, 1U);
  EXPECT_EQ(counters().spurious_events, counters().events_received);
  // During a backoff the port stays masked: the sleep ends at the unmask.
  EXPECT_GE(stepped_->poll_timeout_ms(now_), 0);
  // The queue still serves the guest afterwards.
  const frame f = ipv4_frame(rings::ipproto_udp, ip_a, ip_b, udp_datagram(1, 2, 30));
  send_slots({one_slot(f, 0, 1)});
  now_ += event_pump::max_backoff;
  settle();
  EXPECT_EQ(tx_responses().size(), 1U);
}

TEST_F(QueueLifecycle, SplitEventChannelsNotifyTheirOwnPorts) {
  config_.split_event_channels = true;
  config_.rx_port = evtchn_port{rx_port};
  start_queue();
  post_rx(1);
  tap_write(ipv4_frame(rings::ipproto_udp, ip_a, ip_b, udp_datagram(1, 2, 30)));
  ASSERT_TRUE(wait_rx_responses(1));
  EXPECT_TRUE(wait_until([&] { return evtchn().notifies_to(rx_port) == 1; }));
  EXPECT_EQ(evtchn().notifies_to(tx_port), 0);
  send_slots({one_slot(ipv4_frame(rings::ipproto_udp, ip_a, ip_b, udp_datagram(1, 2, 30)))});
  ASSERT_TRUE(wait_tx_responses(1));
  EXPECT_TRUE(wait_until([&] { return evtchn().notifies_to(tx_port) == 1; }));
}

TEST_F(QueueLifecycle, RingDumpShowsIndicesLikeNetbackDebugfs) {
  start_queue();
  const frame f = ipv4_frame(rings::ipproto_udp, ip_a, ip_b, udp_datagram(1, 2, 30));
  send_slots({one_slot(f, 0, 1), one_slot(f, 0, 2)});
  ASSERT_TRUE(wait_tx_responses(2));
  ASSERT_TRUE(wait_until([&] {
    return queue_->ring_dump().find("rsp prod 2 (base) pvt 2 (0)") != std::string::npos;
  })) << queue_->ring_dump();
  const std::string dump = queue_->ring_dump();
  EXPECT_NE(dump.find("TX: nr_ents 256"), std::string::npos);
  EXPECT_NE(dump.find("req prod 2 (0) cons 2 (0)"), std::string::npos);
  EXPECT_NE(dump.find("RX: nr_ents 256"), std::string::npos);
}

TEST_F(QueueLifecycle, StopIsIdempotentAndUnbinds) {
  start_queue();
  queue_->stop();
  queue_->stop();
  EXPECT_FALSE(evtchn().is_bound(tx_port));
  EXPECT_NE(queue_->ring_dump().find("not connected"), std::string::npos);
}

/// A TAP whose writes throw: an exception escaping the worker loop.
class throwing_port final : public platform::frame_port {
 public:
  explicit throwing_port(int fd) : inner_(fd) {}
  [[nodiscard]] int fd() const override { return inner_.fd(); }
  [[nodiscard]] std::size_t vnet_hdr_size() const override { return 12; }
  long read_frame(std::span<std::byte> buf) override { return inner_.read_frame(buf); }
  long write_frame(std::span<const iovec>) override { throw std::runtime_error("tap exploded"); }

 private:
  socket_frame_port inner_;
};

class QueueWithThrowingTap : public QueueTest {
 protected:
  std::unique_ptr<platform::frame_port> make_tap(int fd) override {
    return std::make_unique<throwing_port>(fd);
  }
};

TEST_F(QueueWithThrowingTap, ExceptionInWorkerBecomesFault) {
  start_queue();
  send_slots({one_slot(ipv4_frame(rings::ipproto_udp, ip_a, ip_b, udp_datagram(1, 2, 30)))});
  ASSERT_TRUE(wait_until([&] { return !faults().empty(); }));
  EXPECT_NE(faults()[0].detail.find("tap exploded"), std::string::npos);
  EXPECT_EQ(faults()[0].source, fault_source::thread);
  EXPECT_EQ(faults()[0].kind(), fault_kind::backend);
  EXPECT_EQ(counters().faults, 1U);
}

TEST(QueueCounters, JsonHasEveryCounterByName) {
  queue_counters c;
  bump(c.tx_packets, 3);
  bump(c.rx_stalls);
  const auto j = to_json(snapshot(c));
  EXPECT_EQ(j.at("tx_packets"), 3U);
  EXPECT_EQ(j.at("rx_stalls"), 1U);
  EXPECT_EQ(j.at("spurious_events"), 0U);
  std::size_t fields = 0;
  snapshot(c).for_each_field([&](std::string_view name, std::uint64_t) {
    ++fields;
    EXPECT_FALSE(describe_counter(name).empty()) << name;
  });
  EXPECT_EQ(j.size(), fields);
}

}  // namespace
}  // namespace unetback::datapath::test
