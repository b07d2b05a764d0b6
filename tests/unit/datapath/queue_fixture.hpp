#pragma once
// A queue under test with the guest side played as a netfront would: it
// initialises the rings with front_ring, grants data pages, posts requests,
// kicks the event channel when the ring says so, and reads responses. The
// TAP is one end of a SOCK_SEQPACKET socketpair; the test holds the other.

#include <gtest/gtest.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "test_frames.hpp"
#include "unetback/datapath/queue.hpp"
#include "unetback/datapath/vif_shared_state.hpp"
#include "unetback/rings/netif.hpp"
#include "unetback/rings/vnet_hdr.hpp"
#include "unetback/test_support/fake_platform.hpp"
#include "unetback/test_support/socket_frame_port.hpp"
#include "unetback/test_support/stepped_worker.hpp"

namespace unetback::datapath::test {

using rings::test::frame;
using test_support::fake_event_channel;
using test_support::fake_grant_table;
using test_support::fake_guest_memory;
using test_support::fake_platform;
using test_support::socket_frame_port;
using test_support::stepped_worker;

/// Polls `pred` until true or `timeout`; returns its last value.
inline bool wait_until(const std::function<bool()>& pred,
                       std::chrono::milliseconds timeout = std::chrono::milliseconds(3000)) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (!pred()) {
    if (std::chrono::steady_clock::now() > deadline) {
      return pred();
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return true;
}

/// Plays a control ring's frontend: writes `req`, notifies `port` when the
/// ring asks for it, waits for the response, consumes and returns it.
inline rings::ctrl_response ctrl_call(rings::ctrl_front_ring& front, fake_event_channel& channel,
                                      std::uint32_t port, const rings::ctrl_request& req) {
  EXPECT_TRUE(front.write_request(req));
  if (front.push_requests_and_check_notify()) {
    channel.kick(port);
  }
  EXPECT_TRUE(wait_until([&] { return front.unconsumed_responses().value_or(0) > 0; }));
  const rings::ctrl_response rsp = front.copy_response(front.rsp_cons());
  front.consume_responses(1);
  EXPECT_EQ(rsp.id, req.id);
  return rsp;
}

/// One data slot a test guest sends.
struct tx_slot {
  std::uint32_t gref = 0;
  std::uint16_t offset = 0;
  std::uint16_t size = 0;  ///< slot 0: total size (filled by send_frame)
  std::uint16_t flags = 0;
  std::uint16_t id = 0;
};

class QueueTest : public ::testing::Test {
 protected:
  static constexpr std::uint32_t tx_port = 5;
  static constexpr std::uint32_t rx_port = 6;

  QueueTest() {
    tx_ref_ = mem_.grant_page();
    rx_ref_ = mem_.grant_page();
    tx_ = rings::tx_front_ring::init(ring_page(tx_ref_));
    rx_ = rings::rx_front_ring::init(ring_page(rx_ref_));
    config_.name = "vif7.0-q0";
    config_.frontend = domid{7};
    config_.index = queue_index{0};
    config_.tx_ring_ref = grant_ref{tx_ref_};
    config_.rx_ring_ref = grant_ref{rx_ref_};
    config_.tx_port = evtchn_port{tx_port};
    config_.rx_port = evtchn_port{tx_port};
    config_.features = frontend_features{true, true, true, true, true, false, false};
  }

  ~QueueTest() override {
    if (queue_) {
      queue_->stop();
    }
    stepped_.reset();
    if (tap_peer_ >= 0) {
      ::close(tap_peer_);
    }
  }

  rings::ring_page ring_page(std::uint32_t ref) {
    return rings::ring_page(mem_.raw_page(ref), rings::page_size);
  }

  /// Creates and starts the queue (TAP = socketpair end 0).
  void start_queue() {
    queue_ = std::make_unique<queue>(platform_, config_, open_tap(), shared_state(),
                                     [this](const fault& f) {
                                       std::lock_guard lock(fault_mu_);
                                       faults_.push_back(f);
                                     });
    queue_->start();
  }
  /// The worker without its thread (stepped_worker.hpp): nothing happens
  /// until the test calls settle().
  void start_stepped() {
    stepped_ = std::make_unique<stepped_worker>(platform_, config_, open_tap(), shared_state());
  }
  /// Steps the worker until it would sleep, at `now_`. A fault ends it, and
  /// is recorded as the queue's thread would report it.
  void settle() {
    const auto f = stepped_->settle(now_);
    if (f) {
      std::lock_guard lock(fault_mu_);
      faults_.push_back(fault{f->source, f->detail, config_.index});
      return;
    }
    ASSERT_TRUE(stepped_->settled()) << "the worker kept finding work";
  }
  virtual std::unique_ptr<platform::frame_port> make_tap(int fd) {
    return std::make_unique<socket_frame_port>(fd, 12);
  }
  /// A socketpair: the worker's end through make_tap(), the test keeps the other.
  std::unique_ptr<platform::frame_port> open_tap() {
    int sv[2];
    EXPECT_EQ(::socketpair(AF_UNIX, SOCK_SEQPACKET, 0, sv), 0);
    tap_peer_ = sv[1];
    tap_fd_ = sv[0];
    return make_tap(sv[0]);
  }
  std::shared_ptr<vif_shared_state> shared_state() {
    if (!shared_) {
      shared_ = std::make_shared<vif_shared_state>(1);
      shared_->credit().set_rate(config_.tuning.rate_bytes, config_.tuning.rate_interval);
    }
    return shared_;
  }

  /// A ring page's shared header, as the guest sees it.
  rings::sring_header& header(std::uint32_t ref) {
    return *reinterpret_cast<rings::sring_header*>(mem_.raw_page(ref));
  }
  /// How a restarted queue takes over the rings (queue_config::resume).
  enum class restart : std::uint8_t {
    resume,  ///< a daemon restart: the rings were served before
    fresh,   ///< a new connection over the same pages
  };
  /// The old worker goes away (its handles closed, as on process exit), a
  /// new queue object serves the same rings.
  void restart_queue(restart how) {
    queue_->stop();
    queue_.reset();
    ::close(tap_peer_);
    tap_peer_ = -1;
    config_.resume = how == restart::resume;
    start_queue();
  }

  /// The event channel of the newest queue (a restarted queue opens another).
  fake_event_channel& evtchn() { return *platform_.channels.back(); }
  queue_counters_snapshot counters() const {
    return stepped_ ? snapshot(stepped_->counters()) : queue_->counters();
  }
  std::vector<fault> faults() {
    std::lock_guard lock(fault_mu_);
    return faults_;
  }

  // ---- guest TX -----------------------------------------------------------

  /// Grants a page holding `bytes` at `offset`; returns its ref.
  std::uint32_t put_data(std::span<const std::byte> bytes, std::uint16_t offset = 0) {
    const std::uint32_t ref = mem_.grant_page();
    std::memcpy(mem_.raw_page(ref) + offset, bytes.data(), bytes.size());
    return ref;
  }
  /// Writes raw request slots (already including extras), publishes, kicks.
  void send_slots(const std::vector<rings::tx_request>& slots) {
    for (const auto& s : slots) {
      ASSERT_TRUE(tx_.write_request(s));
    }
    if (tx_.push_requests_and_check_notify()) {
      evtchn().kick(tx_port);
    }
  }
  /// A one-slot packet with `flags`.
  rings::tx_request one_slot(std::span<const std::byte> f, std::uint16_t flags = 0,
                             std::uint16_t id = 1) {
    rings::tx_request r{};
    r.gref = put_data(f);
    r.size = static_cast<std::uint16_t>(f.size());
    r.flags = flags;
    r.id = id;
    return r;
  }
  /// Collects every TX response published so far.
  std::vector<rings::tx_response> tx_responses() {
    EXPECT_TRUE(tx_.take_responses(
        [&](const rings::tx_response& rsp, std::uint32_t) { tx_rsps_.push_back(rsp); }));
    return tx_rsps_;
  }
  bool wait_tx_responses(std::size_t n) {
    return wait_until([&] { return tx_responses().size() >= n; });
  }

  /// `f` reached the TAP unchanged and its request was the `n`th answered,
  /// with OKAY.
  void expect_sent_and_answered(const frame& f, std::size_t n) {
    rings::vnet_header h{};
    frame got;
    ASSERT_TRUE(tap_read(h, got));
    EXPECT_EQ(got, f);
    ASSERT_TRUE(wait_tx_responses(n));
    EXPECT_EQ(tx_rsps_[n - 1].status, rings::netif_rsp::okay);
  }

  // ---- TAP ----------------------------------------------------------------

  /// Reads one frame the queue wrote to the TAP: vnet header + frame.
  bool tap_read(rings::vnet_header& hdr, frame& f, int timeout_ms = 3000) {
    pollfd p{tap_peer_, POLLIN, 0};
    if (::poll(&p, 1, timeout_ms) <= 0) {
      return false;
    }
    std::vector<std::byte> buf(70000);
    const ssize_t n = ::recv(tap_peer_, buf.data(), buf.size(), 0);
    if (n < 12) {
      return false;
    }
    std::memcpy(static_cast<void*>(&hdr), buf.data(), 12);
    f.assign(buf.begin() + 12, buf.begin() + n);
    return true;
  }
  /// Writes one frame into the TAP towards the guest.
  void tap_write(const frame& f, rings::vnet_header hdr = {}) {
    std::array<std::byte, 12> h{};
    std::memcpy(h.data(), &hdr, h.size());
    iovec iov[2] = {{h.data(), h.size()}, {const_cast<std::byte*>(f.data()), f.size()}};
    msghdr msg{};
    msg.msg_iov = iov;
    msg.msg_iovlen = 2;
    ASSERT_GT(::sendmsg(tap_peer_, &msg, 0), 0);
  }
  /// True while the queue has left at least one frame unread in the TAP.
  bool tap_has_unread_frames() {
    std::byte b{};
    return ::recv(tap_fd_, &b, 1, MSG_PEEK | MSG_DONTWAIT) > 0;
  }

  // ---- guest RX -----------------------------------------------------------

  /// Whether a test guest notifies the backend when the ring asks it to.
  enum class guest_kick : std::uint8_t { when_asked, never };
  /// Posts `n` RX buffers (new pages); kicks if the backend asked for it.
  void post_rx(std::size_t n, guest_kick kick = guest_kick::when_asked) {
    for (std::size_t i = 0; i < n; ++i) {
      rings::rx_request r{};
      r.id = static_cast<std::uint16_t>(rx_ids_++);
      r.gref = mem_.grant_page();
      rx_grefs_.push_back(r.gref);
      ASSERT_TRUE(rx_.write_request(r));
    }
    if (rx_.push_requests_and_check_notify() && kick == guest_kick::when_asked) {
      evtchn().kick(config_.split_event_channels ? rx_port : tx_port);
    }
  }
  /// Collects every RX response published so far (raw 8-byte slots).
  std::vector<rings::rx_response> rx_responses() {
    EXPECT_TRUE(rx_.take_responses(
        [&](const rings::rx_response& rsp, std::uint32_t) { rx_rsps_.push_back(rsp); }));
    return rx_rsps_;
  }
  bool wait_rx_responses(std::size_t n) {
    return wait_until([&] { return rx_responses().size() >= n; });
  }
  /// The bytes the backend copied into RX buffer number `i`.
  std::byte* rx_page(std::size_t i) { return mem_.raw_page(rx_grefs_.at(i)); }

  fake_guest_memory mem_;
  fake_platform platform_{mem_};
  std::uint32_t tx_ref_ = 0;
  std::uint32_t rx_ref_ = 0;
  rings::tx_front_ring tx_;
  rings::rx_front_ring rx_;
  queue_config config_;
  std::shared_ptr<vif_shared_state> shared_;
  std::unique_ptr<queue> queue_;
  std::unique_ptr<stepped_worker> stepped_;  ///< instead of queue_: start_stepped()
  clock::time_point now_ = clock::now();     ///< the stepped worker's time
  int tap_fd_ = -1;                          // the queue's end (owned by the queue's frame_port)
  int tap_peer_ = -1;                        // ours
  std::vector<rings::tx_response> tx_rsps_;
  std::vector<rings::rx_response> rx_rsps_;
  std::vector<std::uint32_t> rx_grefs_;
  std::uint32_t rx_ids_ = 100;
  std::mutex fault_mu_;
  std::vector<fault> faults_;
};

}  // namespace unetback::datapath::test
