// netfront-sim's TX queue selection (--tx-queue-select, a benchmark lever):
// the frames of one flow that the guest stack sends through the guest TAP
// must stay on one TAP queue (so on one netif queue) with `flow`, and be
// spread over the queues with `random`. Real multi-queue TAPs: needs root
// (CAP_NET_ADMIN, CAP_BPF) and /dev/net/tun.

#include <gtest/gtest.h>
#include <linux/if_packet.h>
#include <net/if.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstddef>
#include <memory>
#include <string>
#include <system_error>
#include <vector>

#include "unetback/sim/netfront/guest_tap.hpp"
#include "unetback/sim/netfront/tx_queue_select.hpp"

namespace unetback::sim {
namespace {

constexpr std::uint32_t queue_count = 4;
constexpr int frames_per_flow = 64;

// One UDP/IPv4 frame of the flow 198.18.0.11:40000 -> 198.18.0.1:5201
// (the benchmark range; it never leaves the TAP).
std::vector<std::byte> udp_frame() {
  const std::array<unsigned, 14> eth{0xfe, 0xff, 0xff, 0xff, 0xff, 0xff, 0x00,
                                     0x16, 0x3e, 0x00, 0x00, 0x01, 0x08, 0x00};
  const std::array<unsigned, 20> ip{0x45, 0, 0,   20 + 8 + 18, 0, 0,  0x40, 0,  64, 17,
                                    0,    0, 198, 18,          0, 11, 198,  18, 0,  1};
  const std::array<unsigned, 8> udp{0x9c, 0x40, 0x14, 0x51, 0, 8 + 18, 0, 0};
  std::vector<std::byte> f;
  for (const unsigned b : eth) {
    f.push_back(static_cast<std::byte>(b));
  }
  for (const unsigned b : ip) {
    f.push_back(static_cast<std::byte>(b));
  }
  for (const unsigned b : udp) {
    f.push_back(static_cast<std::byte>(b));
  }
  f.resize(f.size() + 18, std::byte{0x5a});
  return f;
}

TEST(TxQueueSelect, ParsesFlowAndRandomOnly) {
  EXPECT_EQ(parse_tx_queue_select("flow"), tx_queue_select::flow);
  EXPECT_EQ(parse_tx_queue_select("random"), tx_queue_select::random);
  EXPECT_EQ(parse_tx_queue_select("hash"), std::nullopt);
  EXPECT_EQ(parse_tx_queue_select(""), std::nullopt);
}

class GuestTapTxQueues : public ::testing::Test {
 protected:
  void SetUp() override {
    if (::geteuid() != 0 || ::access("/dev/net/tun", R_OK | W_OK) != 0) {
      GTEST_SKIP() << "needs root and /dev/net/tun";
    }
    name_ = "ubtxq" + std::to_string(::getpid() % 100000);
    sender_ = ::socket(AF_PACKET, SOCK_RAW, 0);
    ASSERT_GE(sender_, 0);
  }
  void TearDown() override {
    if (sender_ >= 0) {
      ::close(sender_);
    }
  }

  std::vector<std::unique_ptr<platform::frame_port>> open(tx_queue_select select) {
    guest_tap_options o;
    o.ifname = name_;
    o.queues = queue_count;
    o.tx_select = select;
    return open_guest_tap(o);
  }

  // Sends the same flow's frame frames_per_flow times into the TAP (as the
  // guest stack would transmit it) and returns how many came out of each queue.
  std::array<int, queue_count> send_one_flow(
      const std::vector<std::unique_ptr<platform::frame_port>>& ports) {
    const std::vector<std::byte> f = udp_frame();
    sockaddr_ll to{};
    to.sll_family = AF_PACKET;
    to.sll_ifindex = static_cast<int>(::if_nametoindex(name_.c_str()));
    to.sll_halen = 6;
    for (int i = 0; i < frames_per_flow; ++i) {
      EXPECT_EQ(::sendto(sender_, f.data(), f.size(), 0, reinterpret_cast<const sockaddr*>(&to),
                         sizeof to),
                static_cast<ssize_t>(f.size()));
    }
    std::array<int, queue_count> seen{};
    std::vector<std::byte> buf(2048);
    int total = 0;
    for (int attempt = 0; attempt < 100 && total < frames_per_flow; ++attempt) {
      for (std::uint32_t q = 0; q < queue_count; ++q) {
        for (long n = ports[q]->read_frame(buf); n > 0; n = ports[q]->read_frame(buf)) {
          const std::size_t vnet_hdr = ports[q]->vnet_hdr_size();
          if (static_cast<std::size_t>(n) - vnet_hdr == f.size() &&
              std::equal(f.begin(), f.end(), buf.begin() + static_cast<std::ptrdiff_t>(vnet_hdr))) {
            ++seen[q];
            ++total;
          }
        }
      }
      ::usleep(2000);
    }
    EXPECT_EQ(total, frames_per_flow);
    return seen;
  }

  std::string name_;
  int sender_ = -1;
};

TEST_F(GuestTapTxQueues, FlowSelectionKeepsAFlowOnOneQueue) {
  const auto ports = open(tx_queue_select::flow);
  const auto seen = send_one_flow(ports);
  EXPECT_EQ(std::count(seen.begin(), seen.end(), 0), static_cast<long>(queue_count) - 1);
}

TEST_F(GuestTapTxQueues, RandomSelectionSpreadsAFlowOverTheQueues) {
  std::vector<std::unique_ptr<platform::frame_port>> ports;
  try {
    ports = open(tx_queue_select::random);
  } catch (const std::system_error& e) {
    if (e.code().value() == EPERM) {
      GTEST_SKIP() << "the kernel refuses BPF to this process: " << e.what();
    }
    throw;  // anything else (a verifier refusal) is a failure
  }
  const auto seen = send_one_flow(ports);
  // 64 frames at random over 4 queues: all on one queue has probability 4^-63.
  EXPECT_GE(std::count_if(seen.begin(), seen.end(), [](int n) { return n > 0; }), 2);
}

}  // namespace
}  // namespace unetback::sim
