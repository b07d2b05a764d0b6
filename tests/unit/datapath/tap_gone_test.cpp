// A TAP deleted under a running queue (`ip link del vifD.N`, issue #7 item
// 4): the kernel detaches every queue fd; reads and writes fail with EBADFD
// (tun_get() finds no device), and poll() reports the fd ready for ever. The worker must stop and
// report one fault for its vif (the control plane then releases it), never
// spin on the dead fd and never crash.

#include <cerrno>
#include <string>

#include "queue_fixture.hpp"
#include "unetback/datapath/queue_counters.hpp"

namespace unetback::datapath::test {
namespace {

using namespace rings::test;  // NOLINT(google-build-using-namespace): frame builders

/// The queue fd of a deleted tun interface: what tun_chr_read_iter /
/// tun_chr_write_iter answer once the queue is detached.
class deleted_tap_port final : public platform::frame_port {
 public:
  explicit deleted_tap_port(int fd) : inner_(fd) {}
  [[nodiscard]] int fd() const override { return inner_.fd(); }
  [[nodiscard]] std::size_t vnet_hdr_size() const override { return 12; }
  long read_frame(std::span<std::byte>) override { return -EBADFD; }
  long write_frame(std::span<const iovec>) override { return -EBADFD; }

 private:
  socket_frame_port inner_;
};

/// The queue fd of a TAP that is down: tun_get_user fails writes with EIO
/// (the vif-bridge hotplug script takes the TAP down and up again while the
/// guest already sends).
class down_tap_port final : public platform::frame_port {
 public:
  explicit down_tap_port(int fd) : inner_(fd) {}
  [[nodiscard]] int fd() const override { return inner_.fd(); }
  [[nodiscard]] std::size_t vnet_hdr_size() const override { return 12; }
  long read_frame(std::span<std::byte> buf) override { return inner_.read_frame(buf); }
  long write_frame(std::span<const iovec>) override { return -EIO; }

 private:
  socket_frame_port inner_;
};

class QueueWithDeletedTap : public QueueTest {
 protected:
  std::unique_ptr<platform::frame_port> make_tap(int fd) override {
    return std::make_unique<deleted_tap_port>(fd);
  }
  bool faulted_with_tap_gone() {
    const auto f = faults();
    return !f.empty() && f[0].source == fault_source::tap && f[0].kind() == fault_kind::host &&
           f[0].detail.find("TAP interface gone") != std::string::npos;
  }
};

TEST_F(QueueWithDeletedTap, GuestPacketForADeletedTapStopsTheQueueWithOneFault) {
  start_queue();
  send_slots({one_slot(ipv4_frame(rings::ipproto_udp, ip_a, ip_b, udp_datagram(1, 2, 30)))});
  ASSERT_TRUE(wait_until([&] { return faulted_with_tap_gone(); }));
  EXPECT_TRUE(wait_tx_responses(1));  // the packet was still answered
  EXPECT_EQ(counters().tx_drops_tap_error, 1U);
  EXPECT_EQ(counters().faults, 1U);
  EXPECT_EQ(faults().size(), 1U);
}

TEST_F(QueueWithDeletedTap, ReadableDeletedTapStopsTheQueueInsteadOfSpinning) {
  start_queue();
  post_rx(4);
  tap_write(ipv4_frame(rings::ipproto_udp, ip_b, ip_a, udp_datagram(2, 1, 30)));  // fd readable
  ASSERT_TRUE(wait_until([&] { return faulted_with_tap_gone(); }));
  EXPECT_EQ(counters().rx_tap_read_errors, 1U);  // one failed read, not a loop of them
  EXPECT_EQ(counters().faults, 1U);
}

class QueueWithDownTap : public QueueTest {
 protected:
  std::unique_ptr<platform::frame_port> make_tap(int fd) override {
    return std::make_unique<down_tap_port>(fd);
  }
};

TEST_F(QueueWithDownTap, GuestPacketWhileTheTapIsDownIsDroppedNotAFault) {
  start_queue();
  send_slots({one_slot(ipv4_frame(rings::ipproto_udp, ip_a, ip_b, udp_datagram(1, 2, 30)))});
  ASSERT_TRUE(wait_tx_responses(1));
  EXPECT_EQ(counters().tx_drops_tap_error, 1U);
  EXPECT_EQ(counters().faults, 0U);
  EXPECT_TRUE(faults().empty());
}

}  // namespace
}  // namespace unetback::datapath::test
