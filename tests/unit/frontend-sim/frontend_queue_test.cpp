// A frontend_queue against a hand-driven backend over the sim platform: the
// guest TAP is a SOCK_SEQPACKET socketpair.
#include <poll.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <array>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <thread>

#include "sim_domains.hpp"
#include "unetback/rings/netif.hpp"
#include "unetback/sim/netfront/frontend_queue.hpp"
#include "unetback/sim/netfront/sim_frontend_memory.hpp"
#include "unetback/sim/sim_platform.hpp"
#include "unetback/test_support/socket_frame_port.hpp"
#include "unetback/test_support/temp_dir.hpp"

namespace unetback::sim {
namespace {

using test_domains::backend;
using test_domains::guest;
constexpr std::size_t hdr = 12;

bool readable(int fd, int ms) {
  pollfd p{fd, POLLIN, 0};
  return ::poll(&p, 1, ms) == 1;
}

class FrontendQueue : public ::testing::Test {
 protected:
  FrontendQueue() {
    domain_config c;
    c.sim_dir = dir_.path();
    c.id = guest;
    c.page_count = 600;
    c.grant_count = 700;
    dom_ = std::make_unique<guest_domain>(c);
    queue_setup s;
    s.index = queue_index{0};
    s.backend_id = backend;
    s.backend.rx_copy = s.backend.sg = s.backend.gso_tcpv4 = s.backend.gso_tcpv6 = true;
    memory_ = std::make_unique<sim_frontend_memory>(*dom_);
    q_ = std::make_unique<frontend_queue>(*memory_, s);
    std::array<int, 2> sv{};
    EXPECT_EQ(::socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv.data()), 0);
    tap_ = std::make_unique<test_support::socket_frame_port>(sv[0], hdr);
    stack_ = sv[1];
    platform_ = std::make_unique<sim_platform>(dir_.path(), backend);
    gt_ = platform_->open_grant_table();
    ev_ = platform_->open_event_channel();
    attach_backend();
  }
  ~FrontendQueue() override {
    q_->stop();
    tx_map_.reset();
    rx_map_.reset();
    ev_.reset();
    q_.reset();
    tap_.reset();
    ::close(stack_);
    dom_.reset();
  }
  void attach_backend() {
    std::error_code ec;
    const auto k = q_->keys();
    tx_map_ = gt_->map(guest, std::array{k.tx_ring_ref}, true, ec);
    rx_map_ = gt_->map(guest, std::array{k.rx_ring_ref}, true, ec);
    ASSERT_TRUE(tx_map_ && rx_map_) << ec.message();
    tx_ = rings::tx_back_ring::attach(page(*tx_map_)).value();
    rx_ = rings::rx_back_ring::attach(page(*rx_map_)).value();
    port_ = ev_->bind_interdomain(guest, k.tx_port, ec);
    ASSERT_FALSE(ec) << ec.message();
  }
  static rings::ring_page page(platform::grant_mapping& m) {
    return rings::ring_page(static_cast<std::byte*>(m.data()), rings::page_size);
  }
  /// Waits until the TX ring holds `n` requests.
  bool wait_tx(std::uint32_t n) {
    for (int i = 0; i < 200; ++i) {
      if (tx_.unconsumed_requests().value() >= n) {
        return true;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    return false;
  }

  test_support::temp_dir dir_{"unbfq-"};
  std::unique_ptr<guest_domain> dom_;
  std::unique_ptr<sim_frontend_memory> memory_;
  std::unique_ptr<frontend_queue> q_;
  std::unique_ptr<test_support::socket_frame_port> tap_;
  int stack_ = -1;
  std::unique_ptr<sim_platform> platform_;
  std::unique_ptr<platform::grant_table> gt_;
  std::unique_ptr<platform::event_channel> ev_;
  std::unique_ptr<platform::grant_mapping> tx_map_, rx_map_;
  rings::tx_back_ring tx_;
  rings::rx_back_ring rx_;
  evtchn_port port_;
};

TEST_F(FrontendQueue, GuestFrameBecomesATxRequestTheBackendCanCopy) {
  q_->fill_rx_ring();
  q_->start(*tap_);
  std::array<std::byte, hdr + 100> frame{};
  for (std::size_t i = 0; i < 100; ++i) {
    frame[hdr + i] = static_cast<std::byte>(i);
  }
  ASSERT_EQ(::send(stack_, frame.data(), frame.size(), 0), static_cast<ssize_t>(frame.size()));
  ASSERT_TRUE(wait_tx(1));
  const rings::tx_request req = tx_.copy_request(tx_.req_cons());
  tx_.consume(1);
  EXPECT_EQ(req.size, 100);
  EXPECT_EQ(req.flags, 0);
  std::array<std::byte, 100> got{};
  platform::grant_copy_segment seg{};
  seg.source.foreign = {req.gref, req.offset, guest.value()};
  seg.dest.virt = got.data();
  seg.len = 100;
  seg.flags = GNTCOPY_source_gref;
  ASSERT_TRUE(gt_->copy(std::span(&seg, 1)));
  ASSERT_EQ(seg.status, GNTST_okay);
  EXPECT_EQ(std::memcmp(got.data(), frame.data() + hdr, 100), 0);
  rings::tx_response rsp{};
  rsp.id = req.id;
  rsp.status = rings::netif_rsp::okay;
  tx_.write_response(rsp);
  if (tx_.push_responses_and_check_notify()) {
    ev_->notify(port_);
  }
  for (int i = 0; i < 200 && q_->counters().tx_packets.load() == 0; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  EXPECT_EQ(q_->counters().tx_packets.load(), 1U);
  EXPECT_EQ(q_->counters().tx_bytes.load(), 100U);
  // The grant ends once the response is seen: a later copy is refused.
  for (int i = 0; i < 200 && seg.status == GNTST_okay; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    ASSERT_TRUE(gt_->copy(std::span(&seg, 1)));
  }
  EXPECT_EQ(seg.status, GNTST_bad_gntref);
}

TEST_F(FrontendQueue, BackendRxResponseReachesTheGuestStack) {
  q_->fill_rx_ring();
  ASSERT_EQ(rx_.unconsumed_requests().value(), rings::rx_back_ring::size);
  q_->start(*tap_);
  const rings::rx_request req = rx_.copy_request(rx_.req_cons());
  rx_.consume(1);
  std::array<std::byte, 64> payload{};
  payload.fill(std::byte{0xab});
  platform::grant_copy_segment seg{};
  seg.source.virt = payload.data();
  seg.dest.foreign = {req.gref, 0, guest.value()};
  seg.len = 64;
  seg.flags = GNTCOPY_dest_gref;
  ASSERT_TRUE(gt_->copy(std::span(&seg, 1)));
  ASSERT_EQ(seg.status, GNTST_okay);
  rings::rx_response rsp{};
  rsp.id = req.id;
  rsp.status = 64;
  rx_.write_response(rsp);
  if (rx_.push_responses_and_check_notify()) {
    ev_->notify(port_);
  }
  ASSERT_TRUE(readable(stack_, 2000));
  std::array<std::byte, 200> got{};
  ASSERT_EQ(::recv(stack_, got.data(), got.size(), 0), static_cast<ssize_t>(hdr + 64));
  EXPECT_EQ(got[hdr], std::byte{0xab});
  EXPECT_EQ(got[0], std::byte{0});  // vnet flags: none
  for (int i = 0; i < 200 && q_->counters().rx_packets.load() == 0; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  EXPECT_EQ(q_->counters().rx_packets.load(), 1U);
}

TEST_F(FrontendQueue, BackendClaimingTooManyResponsesFaultsTheQueue) {
  q_->fill_rx_ring();
  q_->start(*tap_);
  // A broken backend publishes responses for TX requests never sent.
  auto& h = *static_cast<rings::sring_header*>(tx_map_->data());
  std::atomic_ref<std::uint32_t>(h.rsp_prod).store(5);
  ev_->notify(port_);
  for (int i = 0; i < 200 && !q_->faulted(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  EXPECT_TRUE(q_->faulted());
}

}  // namespace
}  // namespace unetback::sim
