// Frames through a real TAP: queue fd <-> host stack, with vnet_hdr.

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <linux/if_tun.h>

#include <cstring>
#include <span>

#include "tap_test_util.hpp"
#include "unetback/tap/tap_device.hpp"

namespace unetback::tap {
namespace {

using testing::ether_frame;
using testing::packet_socket;
using testing::packet_vnet_hdr_size;
using testing::unique_name;
using testing::vnet_header;

constexpr std::uint16_t test_ethertype = 0x88b5;  // IEEE local experimental

class TapFrames : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!testing::can_create_taps()) {
      GTEST_SKIP() << "needs root and /dev/net/tun";
    }
    dev_.emplace(tap_device::create({unique_name(), TUN_F_CSUM | TUN_F_TSO4 | TUN_F_TSO6, false}));
    queues_ = dev_->open_queues(2);
    dev_->set_up(true);
  }

  // Reads frames from either queue until one of `ethertype` shows up.
  std::optional<std::vector<std::uint8_t>> read_from_any_queue(std::uint16_t ethertype) {
    std::vector<std::byte> buf(70000);
    for (int round = 0; round < 200; ++round) {
      for (auto& q : queues_) {
        if (!testing::wait_readable(q->fd(), 5)) {
          continue;
        }
        const long n = q->read_frame(buf);
        if (n < static_cast<long>(vnet_hdr_size + 14)) {
          continue;
        }
        std::vector<std::uint8_t> frame(static_cast<std::size_t>(n));
        std::memcpy(frame.data(), buf.data(), frame.size());
        if (frame[vnet_hdr_size + 12] == (ethertype >> 8) &&
            frame[vnet_hdr_size + 13] == (ethertype & 0xff)) {
          return frame;
        }
      }
    }
    return std::nullopt;
  }

  std::optional<tap_device> dev_;
  std::vector<std::unique_ptr<tap_queue>> queues_;
};

TEST_F(TapFrames, FrameWrittenOnAQueueReachesTheInterface) {
  packet_socket sniff(dev_->ifindex(), test_ethertype);
  const auto frame = ether_frame(test_ethertype, std::vector<std::uint8_t>(100, 0xab));
  vnet_header hdr{};  // no offload
  const std::array<iovec, 2> iov{iovec{&hdr, vnet_hdr_size},
                                 iovec{const_cast<std::uint8_t*>(frame.data()), frame.size()}};
  EXPECT_EQ(queues_[1]->write_frame(iov), static_cast<long>(vnet_hdr_size + frame.size()));
  const auto seen = sniff.receive();
  ASSERT_TRUE(seen);
  EXPECT_EQ(*seen, frame);
}

TEST_F(TapFrames, FrameSentToTheInterfaceIsReadFromAQueue) {
  packet_socket sender(dev_->ifindex(), test_ethertype);
  const auto frame = ether_frame(test_ethertype, std::vector<std::uint8_t>(64, 0x5a));
  sender.send(frame);
  const auto got = read_from_any_queue(test_ethertype);
  ASSERT_TRUE(got);
  ASSERT_EQ(got->size(), vnet_hdr_size + frame.size());
  EXPECT_TRUE(std::equal(frame.begin(), frame.end(), got->begin() + vnet_hdr_size));
  EXPECT_EQ((*got)[0], 0);  // flags: nothing to offload
}

TEST_F(TapFrames, EmptyQueueReadsAsZero) {
  std::vector<std::byte> buf(2048);
  // Drain anything the stack sent when the link came up, then expect EAGAIN.
  while (queues_[0]->read_frame(buf) > 0) {
  }
  EXPECT_EQ(queues_[0]->read_frame(buf), 0);
}

// IPv4/TCP frame with a 20-byte TCP header and `payload` bytes of data.
std::vector<std::uint8_t> tcp_frame(std::size_t payload) {
  std::vector<std::uint8_t> ip(40 + payload, 0);
  ip[0] = 0x45;
  const auto total = static_cast<std::uint16_t>(ip.size());
  ip[2] = static_cast<std::uint8_t>(total >> 8);
  ip[3] = static_cast<std::uint8_t>(total & 0xff);
  ip[8] = 64;
  ip[9] = 6;  // TCP
  const std::uint8_t addrs[8] = {10, 0, 0, 1, 10, 0, 0, 2};
  std::memcpy(&ip[12], addrs, 8);
  ip[20 + 12] = 0x50;  // data offset 5
  ip[20 + 13] = 0x18;  // PSH|ACK
  return ether_frame(0x0800, ip);
}

TEST_F(TapFrames, GsoVnetHeaderWrittenOnTheTapReachesTheStackIntact) {
  packet_socket sniff(dev_->ifindex(), 0x0800, packet_socket::header::vnet);
  const auto frame = tcp_frame(3000);
  vnet_header hdr{};
  hdr.flags = testing::needs_csum;
  hdr.gso_type = testing::gso_tcpv4;
  hdr.hdr_len = 54;
  hdr.gso_size = 1000;
  hdr.csum_start = 34;
  hdr.csum_offset = 16;
  const std::array<iovec, 2> iov{iovec{&hdr, vnet_hdr_size},
                                 iovec{const_cast<std::uint8_t*>(frame.data()), frame.size()}};
  ASSERT_EQ(queues_[0]->write_frame(iov), static_cast<long>(vnet_hdr_size + frame.size()));
  const auto seen = sniff.receive();
  ASSERT_TRUE(seen);
  ASSERT_GE(seen->size(), packet_vnet_hdr_size + frame.size());
  vnet_header out{};
  std::memcpy(&out, seen->data(), packet_vnet_hdr_size);
  EXPECT_EQ(out.gso_type, testing::gso_tcpv4);
  EXPECT_EQ(out.gso_size, 1000);
  EXPECT_EQ(out.flags & testing::needs_csum, testing::needs_csum);
  EXPECT_EQ(out.csum_start, 34);
  EXPECT_EQ(out.csum_offset, 16);
  EXPECT_TRUE(std::equal(frame.begin(), frame.end(), seen->begin() + packet_vnet_hdr_size));
}

TEST_F(TapFrames, PartialChecksumFromTheStackIsReportedInTheVnetHeader) {
  packet_socket sender(dev_->ifindex(), 0x0800, packet_socket::header::vnet);
  std::vector<std::uint8_t> ip(28 + 32, 0);  // IPv4 + UDP + 32 bytes
  ip[0] = 0x45;
  ip[3] = static_cast<std::uint8_t>(ip.size());
  ip[8] = 64;
  ip[9] = 17;  // UDP
  const std::uint8_t addrs[8] = {10, 0, 0, 1, 10, 0, 0, 2};
  std::memcpy(&ip[12], addrs, 8);
  ip[20 + 5] = 40;  // UDP length
  vnet_header hdr{};
  hdr.flags = testing::needs_csum;
  hdr.csum_start = 34;
  hdr.csum_offset = 6;
  std::vector<std::uint8_t> msg(packet_vnet_hdr_size);
  std::memcpy(msg.data(), &hdr, packet_vnet_hdr_size);
  const auto frame = ether_frame(0x0800, ip);
  msg.insert(msg.end(), frame.begin(), frame.end());
  sender.send(msg);
  const auto got = read_from_any_queue(0x0800);
  ASSERT_TRUE(got);
  vnet_header out{};
  std::memcpy(&out, got->data(), packet_vnet_hdr_size);
  EXPECT_EQ(out.flags & testing::needs_csum, testing::needs_csum);
  EXPECT_EQ(out.csum_start, 34);
  EXPECT_EQ(out.csum_offset, 6);
  EXPECT_EQ(got->size(), vnet_hdr_size + frame.size());
}

TEST_F(TapFrames, BogusVnetHeaderIsRejectedByTheKernel) {
  const auto frame = ether_frame(test_ethertype, std::vector<std::uint8_t>(60, 1));
  vnet_header hdr{};
  hdr.flags = testing::needs_csum;
  hdr.csum_start = 4000;  // beyond the frame
  hdr.csum_offset = 6;
  const std::array<iovec, 2> iov{iovec{&hdr, vnet_hdr_size},
                                 iovec{const_cast<std::uint8_t*>(frame.data()), frame.size()}};
  EXPECT_EQ(queues_[0]->write_frame(iov), -static_cast<long>(EINVAL));
}

}  // namespace
}  // namespace unetback::tap
