// The steering program on a real multi-queue TAP: every frame the host sends
// to the TAP must come out of the TAP queue that the daemon's own parser and
// hash (rings::build_hash_input, toeplitz_hash, hash_config::select_queue)
// name, so a guest's RSS mapping and the HASH extra the RX path attaches
// always agree. Needs root (CAP_BPF, CAP_NET_ADMIN) and /dev/net/tun.

#include <gtest/gtest.h>
#include <linux/if_packet.h>
#include <net/ethernet.h>
#include <net/if.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <random>
#include <string>
#include <system_error>

#include "test_frames.hpp"
#include "unetback/rings/toeplitz.hpp"
#include "unetback/steering/tap_steering.hpp"
#include "unetback/tap/tap_device.hpp"

namespace unetback::steering {
namespace {

using rings::test::frame;
constexpr unsigned queue_count = 4;

std::array<std::uint8_t, 4> v4(std::mt19937& rng) {
  // 198.18.0.0/15: the benchmarking range (these frames never leave the TAP).
  return {198, static_cast<std::uint8_t>(18 + rng() % 2), static_cast<std::uint8_t>(rng()),
          static_cast<std::uint8_t>(rng())};
}

std::array<std::uint8_t, 16> v6(std::mt19937& rng) {
  std::array<std::uint8_t, 16> a{0x20, 0x01, 0x0d, 0xb8};
  for (std::size_t i = 4; i < a.size(); ++i) {
    a[i] = static_cast<std::uint8_t>(rng());
  }
  return a;
}

// A varied set: TCP and UDP over IPv4/IPv6, fragments, VLAN tags, IPv6
// extension headers, a bad TCP header and a frame that is not IP.
std::vector<frame> sample_frames(std::mt19937& rng) {
  using namespace rings::test;
  std::vector<frame> frames;
  for (int i = 0; i < 16; ++i) {
    const auto sport = static_cast<std::uint16_t>(rng());
    const auto dport = static_cast<std::uint16_t>(rng());
    frames.push_back(ipv4_frame(6, v4(rng), v4(rng), tcp_segment(sport, dport, 0x10, 32)));
    frames.push_back(ipv4_frame(17, v4(rng), v4(rng), udp_datagram(sport, dport, 32)));
    frames.push_back(ipv4_frame(6, v4(rng), v4(rng), tcp_segment(sport, dport, 0x10, 32), true));
    frames.push_back(
        ipv4_frame(6, v4(rng), v4(rng), tcp_segment(sport, dport, 0x10, 32), false, 0x2000));
    frames.push_back(ipv6_frame(6, v6(rng), v6(rng), tcp_segment(sport, dport, 0x10, 32)));
    frames.push_back(ipv6_frame(17, v6(rng), v6(rng), udp_datagram(sport, dport, 32)));
    frames.push_back(ipv6_frame(6, v6(rng), v6(rng), tcp_segment(sport, dport, 0x10, 32), {0, 60}));
  }
  frame bad_tcp = ipv4_frame(6, v4(rng), v4(rng), tcp_segment(1, 2, 0x10, 32));
  bad_tcp[14 + 20 + 12] = std::byte{0x20};  // data offset 2: not a TCP header
  frames.push_back(bad_tcp);
  frame arp = ethernet(0x0806);
  arp.resize(60, std::byte{0});
  frames.push_back(arp);
  return frames;
}

std::uint32_t expected_queue(const rings::hash_config& c, const frame& f) {
  const auto in = rings::build_hash_input(f, c.flags);
  const std::uint32_t hash = in ? rings::toeplitz_hash(c.key, in->data()) : 0;
  return c.select_queue(hash, queue_count);
}

class TapSteering : public ::testing::Test {
 protected:
  void SetUp() override {
    if (::geteuid() != 0 || ::access("/dev/net/tun", R_OK | W_OK) != 0) {
      GTEST_SKIP() << "needs root and /dev/net/tun";
    }
    try {
      program_ = rss_program::load(16);
    } catch (const std::system_error& e) {
      if (e.code().value() == EPERM) {
        GTEST_SKIP() << "the kernel refuses BPF to this process (no CAP_BPF): " << e.what();
      }
      throw;  // anything else (a verifier refusal) is a failure
    }
    name_ = "ubrss" + std::to_string(::getpid() % 100000);
    dev_.emplace(tap::tap_device::create({name_, 0, false}));
    queues_ = dev_->open_queues(queue_count);
    write_sysctl("/proc/sys/net/ipv6/conf/" + name_ + "/disable_ipv6", "1");  // no MLD/RS noise
    dev_->set_up(true);
    sender_ = ::socket(AF_PACKET, SOCK_RAW, 0);
    ASSERT_GE(sender_, 0);
  }
  void TearDown() override {
    if (sender_ >= 0) {
      ::close(sender_);
    }
    queues_.clear();
    if (dev_) {
      dev_->remove();
    }
  }

  static void write_sysctl(const std::string& path, const char* value) {
    if (FILE* f = std::fopen(path.c_str(), "w")) {
      std::fputs(value, f);
      std::fclose(f);
    }
  }

  void send(const frame& f) const {
    sockaddr_ll to{};
    to.sll_family = AF_PACKET;
    to.sll_ifindex = static_cast<int>(dev_->ifindex());
    to.sll_halen = 6;
    ASSERT_EQ(
        ::sendto(sender_, f.data(), f.size(), 0, reinterpret_cast<const sockaddr*>(&to), sizeof to),
        static_cast<ssize_t>(f.size()));
  }

  // The TAP queue the frame came out of (the frames are distinct), or -1.
  int receiving_queue(const frame& f) {
    std::vector<std::byte> buf(2048);
    for (int attempt = 0; attempt < 50; ++attempt) {
      for (unsigned q = 0; q < queue_count; ++q) {
        const long n = queues_[q]->read_frame(buf);
        const std::size_t hdr = queues_[q]->vnet_hdr_size();
        if (n > 0 && static_cast<std::size_t>(n) - hdr == f.size() &&
            std::equal(f.begin(), f.end(), buf.begin() + static_cast<std::ptrdiff_t>(hdr))) {
          return static_cast<int>(q);
        }
      }
      ::usleep(2000);
    }
    return -1;
  }

  void expect_every_frame_on_its_mapped_queue(const rings::hash_config& c, tap_steering& s) {
    s.apply(c);
    std::mt19937 rng(7);
    for (const frame& f : sample_frames(rng)) {
      send(f);
      EXPECT_EQ(receiving_queue(f), static_cast<int>(expected_queue(c, f)));
    }
  }

  static rings::hash_config random_config(std::uint32_t seed, std::uint32_t mapping_size) {
    std::mt19937 rng(seed);
    rings::hash_config c;
    c.algorithm = XEN_NETIF_CTRL_HASH_ALGORITHM_TOEPLITZ;
    c.flags = rings::supported_hash_types;
    for (auto& k : c.key) {
      k = static_cast<std::uint8_t>(rng());
    }
    c.mapping_size = mapping_size;
    for (std::uint32_t i = 0; i < mapping_size; ++i) {
      c.mapping[i] = rng() % queue_count;
    }
    return c;
  }

  std::unique_ptr<rss_program> program_;
  std::string name_;
  std::optional<tap::tap_device> dev_;
  std::vector<std::unique_ptr<tap::tap_queue>> queues_;
  int sender_ = -1;
};

TEST_F(TapSteering, GuestMappingDecidesTheQueueOfEveryFrame) {
  tap_steering s(*program_, queues_[0]->fd());
  expect_every_frame_on_its_mapped_queue(random_config(1, 128), s);
  EXPECT_TRUE(s.attached());
}

TEST_F(TapSteering, OnlyEnabledHashTypesFeedTheHash) {
  tap_steering s(*program_, queues_[0]->fd());
  rings::hash_config c = random_config(2, 16);
  c.flags = XEN_NETIF_CTRL_HASH_TYPE_IPV4 | XEN_NETIF_CTRL_HASH_TYPE_IPV6_TCP;
  expect_every_frame_on_its_mapped_queue(c, s);
}

TEST_F(TapSteering, WithoutMappingTheHashModuloQueuesDecides) {
  tap_steering s(*program_, queues_[0]->fd());
  expect_every_frame_on_its_mapped_queue(random_config(3, 0), s);
}

TEST_F(TapSteering, GuestMappingChangesTakeEffect) {
  tap_steering s(*program_, queues_[0]->fd());
  rings::hash_config c = random_config(4, 1);
  c.mapping[0] = 3;  // everything to queue 3
  expect_every_frame_on_its_mapped_queue(c, s);
  c.mapping[0] = 1;
  expect_every_frame_on_its_mapped_queue(c, s);
}

TEST_F(TapSteering, AlgorithmNoneDetachesTheProgram) {
  tap_steering s(*program_, queues_[0]->fd());
  s.apply(random_config(5, 8));
  ASSERT_TRUE(s.attached());
  rings::hash_config none;
  s.apply(none);
  EXPECT_FALSE(s.attached());
  // The TAP's own flow steering: a flow sticks to one queue.
  std::mt19937 rng(9);
  const frame f =
      rings::test::ipv4_frame(6, v4(rng), v4(rng), rings::test::tcp_segment(5, 6, 0x10, 8));
  send(f);
  const int first = receiving_queue(f);
  ASSERT_GE(first, 0);
  for (int i = 0; i < 5; ++i) {
    send(f);
    EXPECT_EQ(receiving_queue(f), first);
  }
}

}  // namespace
}  // namespace unetback::steering
