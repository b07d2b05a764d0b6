// The direct path with a hostile guest on either end (issue #20;
// docs/direct-path.md): the hostile guest (vif2.0) is paired with the good
// guest (vif1.0).
// - As a sender it floods the good guest past the TAPs and the bridge: the
//   flood goes direct and stays bounded (a full ring drops, as a full TAP queue
//   would), and the good guest's own traffic with the host keeps passing. Here
//   the good guest keeps up with the flood, so the ring never fills, and the
//   rule that a queue reads its TAP after every burst of ring frames is not
//   what keeps its echoes alive (DirectPort.TheTapIsReadAfterABurstOfRingFrames
//   holds that rule).
// - A sender that faults mid-flood is unpaired with frames in flight, and the
//   good guest is served on.
// - As a receiver, its bad RX grants give error slots, as for TAP frames.
// - With a second vif of its own (vif2.1: A and B the same domain), it pairs
//   like any two vifs, its flood reaches the other vif intact, and closing that
//   vif mid-flood unpairs it while the sender is served on through the host.

#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <cstring>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "harness/hostile_fixture.hpp"
#include "unetback/test_support/socket_frame_port.hpp"

namespace unetback::hostile {
namespace {

constexpr const char* good_mac = "00:16:3e:00:00:01";  // good_guest's vif1.0
constexpr std::size_t flood_page = 1;                  // tx_driver's page 0 goes to the host
constexpr std::uint16_t flood_frame_bytes = 1400;
constexpr std::size_t flood_batch = 64;

/// A field of a vif's `direct` stats, summed over its queues; 0 without them.
std::uint64_t direct_sum(const nlohmann::json& stats, const std::string& field) {
  if (!stats.is_array() || stats.empty() || !stats[0].contains("direct")) {
    return 0;
  }
  return sum_field(stats[0]["direct"]["queues"], field);
}

/// The hostile guest's second vif (vif2.1), well behaved: netfront-sim's
/// frontend device runs its handshake and its queue's worker, whose "TAP" is
/// a socketpair; the test holds the far end (12-byte vnet header + frame).
class sibling_vif {
 public:
  static constexpr const char* mac = "00:16:3e:00:00:21";
  static constexpr const char* name = "vif2.1";
  static constexpr std::uint32_t devid = 1;
  static constexpr std::size_t vnet_hdr_bytes = 12;

  explicit sibling_vif(hostile_guest& g) : g_(g) {
    g.host().network_attach(hostile_guest::id, mac, devid);
    sim::device_options d;
    d.self = hostile_guest::id;
    d.devid = devid;
    d.request = {1, false, true, true, true, false};
    auto opener = [this](std::uint32_t queues, const sim::backend_features&,
                         const std::optional<std::string>&) {
      std::vector<std::unique_ptr<platform::frame_port>> ports;
      for (std::uint32_t q = 0; q < queues; ++q) {
        std::array<int, 2> sv{};
        if (::socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv.data()) != 0) {
          throw std::runtime_error("socketpair failed");
        }
        ports.push_back(std::make_unique<test_support::socket_frame_port>(sv[0]));
        peers_.push_back(sv[1]);
      }
      return ports;
    };
    device_ = std::make_unique<sim::frontend_device>(g.memory(), g.xs(), d, opener);
    device_->write_state(sim::xenbus_state::initialising);
  }
  ~sibling_vif() {
    device_.reset();
    for (const int fd : peers_) {
      ::close(fd);
    }
  }
  sibling_vif(const sibling_vif&) = delete;
  sibling_vif& operator=(const sibling_vif&) = delete;

  /// Runs the handshake until both ends are Connected.
  bool connect() {
    return wait_until(
        [&] {
          try {
            (void)device_->on_backend_changed();
          } catch (const std::exception&) {
            // a transient XenStore error: the next round retries
          }
          return device_->connected() && backend_state() == 4;
        },
        state_timeout);
  }
  /// The frontend closes the vif (state 5, then 6), as a guest unplugging it.
  void close() { device_->close(); }
  [[nodiscard]] std::optional<int> backend_state() {
    const auto s = g_.host().read(fmt::format("{}/state", backend_path()));
    return s ? std::optional<int>(std::stoi(*s)) : std::nullopt;
  }
  /// The guest transmits `frame` (its queue's worker puts it on the TX ring).
  bool send(std::span<const std::uint8_t> frame) {
    std::vector<std::uint8_t> msg(vnet_hdr_bytes, 0);
    msg.insert(msg.end(), frame.begin(), frame.end());
    return ::send(peers_.at(0), msg.data(), msg.size(), 0) == static_cast<ssize_t>(msg.size());
  }
  /// The next frame the guest received within `timeout`, without its vnet header.
  std::optional<std::vector<std::uint8_t>> receive(std::chrono::milliseconds timeout) {
    pollfd p{peers_.at(0), POLLIN, 0};
    if (::poll(&p, 1, static_cast<int>(timeout.count())) != 1) {
      return std::nullopt;
    }
    std::vector<std::uint8_t> msg(vnet_hdr_bytes + 65536);
    const ssize_t n = ::recv(peers_.at(0), msg.data(), msg.size(), 0);
    if (n < static_cast<ssize_t>(vnet_hdr_bytes)) {
      return std::nullopt;
    }
    return std::vector<std::uint8_t>(msg.begin() + vnet_hdr_bytes, msg.begin() + n);
  }

 private:
  [[nodiscard]] static std::string backend_path() {
    return fmt::format("/local/domain/0/backend/vif/{}/{}", hostile_guest::id.value(), devid);
  }

  hostile_guest& g_;
  std::unique_ptr<sim::frontend_device> device_;
  std::vector<int> peers_;
};

class DirectPath : public hostile_test {
 protected:
  world_options world_config() override { return {{"--direct-path", "true"}}; }

  /// Connects the hostile guest (its check packet to the host teaches the
  /// bridge its MAC), waits for the pair to go direct and puts a frame for
  /// the good guest in the flood page.
  tx_driver& pair_with_good_guest() {
    no_bridge_netfilter();
    tx_driver& t = connect_and_drive();
    EXPECT_TRUE(w().wait_log("direct path vif1.0 <-> vif2.0: on")) << "the pair never went direct";
    (void)aim_flood(t, good_mac);
    return t;
  }

  /// Connects the hostile guest and its second vif, teaches the bridge both
  /// MACs and waits for the two to go direct.
  tx_driver& pair_with_sibling(sibling_vif& sibling) {
    no_bridge_netfilter();
    tx_driver& t = connect_and_drive();
    EXPECT_TRUE(sibling.connect()) << "vif2.1 did not connect";
    EXPECT_TRUE(sibling.send(test_frame(bridge_mac(), parse_mac(sibling_vif::mac), 60, 0)));
    EXPECT_TRUE(w().wait_log("direct path vif2.0 <-> vif2.1: on"))
        << "the domain's two vifs never paired";
    return t;
  }

  /// Puts a frame to `to` from the hostile guest in the flood page; returns it.
  static std::vector<std::uint8_t> aim_flood(tx_driver& t, const char* to) {
    auto f = test_frame(parse_mac(to), parse_mac(hostile_guest::mac), flood_frame_bytes, 0x3C);
    std::memcpy(t.page(flood_page).data(), f.data(), f.size());
    return f;
  }

  mac_bytes bridge_mac() {
    const auto link = w().host_link_stats(world::bridge());
    return parse_mac(link.is_object() ? link.value("address", std::string()) : std::string());
  }

  /// br_netfilter, where its module is loaded, would keep every pair on the
  /// TAP path: switch it off for this world's host namespace.
  void no_bridge_netfilter() {
    const std::string switch_off =
        R"(for f in /proc/sys/net/bridge/bridge-nf-call-*; do [ ! -e "$f" ] || echo 0 > "$f"; done)";
    run_command({"ip", "netns", "exec", w().host_ns(), "sh", "-c", switch_off},
                w().logs() / "world.log");
  }

  /// Sends batches of frames to the good guest for `duration`; the frames
  /// the backend answered, each of them OKAY (a frame dropped on a full ring
  /// is answered OKAY too: the guest did nothing wrong).
  std::uint64_t flood(tx_driver& t, std::chrono::milliseconds duration) {
    std::uint64_t answered = 0;
    const auto end = std::chrono::steady_clock::now() + duration;
    while (std::chrono::steady_clock::now() < end) {
      for (std::size_t i = 0; i < flood_batch; ++i) {
        t.put(t.slot(flood_page, 0, flood_frame_bytes));
      }
      t.push();
      const auto r = t.responses(flood_batch);
      for (const auto status : statuses(r)) {
        EXPECT_EQ(status, rings::netif_rsp::okay);
      }
      answered += r.size();
      if (r.size() < flood_batch) {
        break;  // the backend stopped answering: the assertions say why
      }
    }
    return answered;
  }

  /// Bytes the host received from vif2.0's guest through its TAP.
  std::uint64_t hostile_tap_rx_bytes() {
    const auto s = w().host_link_stats(hostile_guest::vif);
    return s.is_object() && s.contains("stats64")
               ? s["stats64"]["rx"].value("bytes", std::uint64_t{0})
               : 0;
  }
};

TEST_F(DirectPath, AFloodToAPairedGuestGoesDirectAndLeavesItsHostTrafficAlive) {
  tx_driver& t = pair_with_good_guest();
  const std::uint64_t tap_before = hostile_tap_rx_bytes();
  begin_attack();
  const std::uint64_t sent = flood(t, std::chrono::seconds(3));
  ASSERT_GT(sent, 0U);
  const auto hostile = w().stats(hostile_guest::id);
  const std::uint64_t moved = direct_sum(hostile, "tx_packets");
  const std::uint64_t dropped = direct_sum(hostile, "tx_drops_full");
  std::printf("flood: %llu frames sent, %llu moved direct, %llu dropped on a full ring\n",
              static_cast<unsigned long long>(sent), static_cast<unsigned long long>(moved),
              static_cast<unsigned long long>(dropped));
  EXPECT_EQ(moved + dropped, sent) << "every frame of the flood goes direct or is dropped";
  EXPECT_GT(direct_sum(w().stats(good_guest::id), "rx_packets"), 0U)
      << "the good guest's queue took nothing from the ring";
  EXPECT_LT(hostile_tap_rx_bytes() - tap_before, sent * flood_frame_bytes / 10)
      << "the flood went through the TAP";
  expect_vif_connected();
  expect_contained();
}

TEST_F(DirectPath, ASenderThatFaultsMidFloodIsUnpairedAndItsPeerServedOn) {
  tx_driver& t = pair_with_good_guest();
  begin_attack();
  ASSERT_GT(flood(t, std::chrono::seconds(1)), 0U);
  // The next batch is in the ring when the producer index jumps.
  for (std::size_t i = 0; i < flood_batch; ++i) {
    t.put(t.slot(flood_page, 0, flood_frame_bytes));
  }
  t.push();
  t.publish_req_prod(t.ring().req_prod_pvt() + rings::tx_front_ring::size + 1);
  t.kick();
  expect_vif_disabled("producer index overflow");
  EXPECT_TRUE(wait_until(
      [&] {
        const auto good = w().stats(good_guest::id);
        return good.is_array() && !good.empty() && good[0].contains("direct") &&
               good[0]["direct"]["peers"].empty();
      },
      state_timeout))
      << "the good guest still lists the faulted vif as its peer";
  expect_contained();
}

// The receiving side: the hostile guest is the paired receiver and posts RX
// buffers with bad grant refs while the good guest sends to it directly. Each
// bad buffer gets an error slot, as when the frame came through the TAP, the
// vif stays up, and the good guest is served on.
TEST_F(DirectPath, BadRxGrantsOfAPairedReceiverGiveErrorSlots) {
  no_bridge_netfilter();
  // Only direct frames reach the hostile guest's RX ring: the bridge floods
  // nothing to its port (no broadcast of the good guest eats a posted buffer).
  for (const char* flood : {"flood", "mcast_flood", "bcast_flood"}) {
    ASSERT_EQ(w().ip_host(
                  {"link", "set", "dev", hostile_guest::vif, "type", "bridge_slave", flood, "off"}),
              0)
        << flood;
  }
  manual_frontend m(guest(), 1, false, false);  // no RX buffer posted yet
  m.connect();
  ASSERT_TRUE(guest().wait_backend_state({4}));
  tx_driver tx(guest(), m.queue(0));
  tx.send_valid();  // to the host: the bridge learns the hostile guest's MAC
  ASSERT_EQ(statuses(tx.responses(1)), std::vector<std::int16_t>{rings::netif_rsp::okay});
  ASSERT_TRUE(w().wait_log("direct path vif1.0 <-> vif2.0: on")) << "the pair never went direct";
  rx_driver rx(guest(), m.queue(0));
  raw_port good_sends(good().netns(), "eth0");  // the good guest's own interface
  const mac_bytes to = parse_mac(hostile_guest::mac);
  const mac_bytes from = parse_mac(good_mac);
  const auto before = counter("rx_copy_errors");
  begin_attack();
  sim::guest_domain& d = guest().domain();
  const grant_ref read_only = d.grant_access(d.alloc_page(), domid{0}, sim::grant_mode::read_only);
  const grant_ref foreign = d.grant_access(d.alloc_page(), domid{7}, sim::grant_mode::read_write);
  const std::vector<grant_ref> bad{grant_ref(0xFFFFFFFFU), grant_ref(3), read_only, foreign};
  std::uint8_t seed = 0;
  for (const grant_ref gref : bad) {
    rx.post(gref);
    ASSERT_TRUE(good_sends.send(test_frame(to, from, 200, seed++)));
    const auto rsp = rx.responses(1);
    ASSERT_EQ(rsp.size(), 1U) << "no RX response for gref " << gref.value();
    EXPECT_EQ(rsp[0].status, rings::netif_rsp::error) << "gref " << gref.value();
  }
  EXPECT_EQ(counter("rx_copy_errors"), before + bad.size());
  rx.post_buffer();
  ASSERT_TRUE(good_sends.send(test_frame(to, from, 200, seed++)));
  const auto good_rsp = rx.responses(1);
  ASSERT_EQ(good_rsp.size(), 1U);
  EXPECT_EQ(good_rsp[0].status, 200);
  EXPECT_EQ(direct_sum(w().stats(hostile_guest::id), "rx_packets"), bad.size() + 1)
      << "the frames did not all come over the direct path";
  expect_vif_connected();
  expect_contained();
}

/// True for a frame of the flood (from the hostile guest's vif2.0); the good
/// guest's broadcasts reach vif2.1 too.
bool from_vif2_0(const std::vector<std::uint8_t>& f) {
  const mac_bytes src = parse_mac(hostile_guest::mac);
  return f.size() >= 12 && std::equal(src.begin(), src.end(), f.begin() + 6);
}

// A and B the same domain: the hostile guest's two vifs pair like any two
// (only a vif and itself never do), and what vif2.0 floods arrives at vif2.1
// byte for byte, or is dropped on a full ring and counted.
TEST_F(DirectPath, TwoVifsOfOneDomainPairAndItsFloodArrivesIntact) {
  sibling_vif sibling(guest());
  tx_driver& t = pair_with_sibling(sibling);
  const std::vector<std::uint8_t> frame = aim_flood(t, sibling_vif::mac);
  begin_attack();
  std::uint64_t sent = 0;
  std::uint64_t arrived = 0;
  std::uint64_t mangled = 0;
  const auto drain = [&](std::chrono::milliseconds quiet) {
    while (const auto f = sibling.receive(quiet)) {
      if (from_vif2_0(*f)) {
        ++arrived;
        if (*f != frame) {
          ++mangled;
        }
      }
    }
  };
  for (int batch = 0; batch < 8; ++batch) {
    for (std::size_t i = 0; i < flood_batch; ++i) {
      t.put(t.slot(flood_page, 0, flood_frame_bytes));
    }
    t.push();
    const auto r = t.responses(flood_batch);
    ASSERT_EQ(r.size(), flood_batch) << "the backend stopped answering vif2.0";
    for (const auto status : statuses(r)) {
      EXPECT_EQ(status, rings::netif_rsp::okay);
    }
    sent += r.size();
    drain(std::chrono::milliseconds(200));
  }
  drain(std::chrono::milliseconds(1000));
  // The workers publish their counters a moment after the frames move.
  std::uint64_t moved = 0;
  std::uint64_t dropped = 0;
  std::uint64_t received = 0;
  EXPECT_TRUE(wait_until(
      [&] {
        const auto a = w().stats(hostile_guest::id);
        moved = direct_sum(a, "tx_packets");
        dropped = direct_sum(a, "tx_drops_full");
        received = direct_sum(w().stats(sibling_vif::name), "rx_packets");
        return moved + dropped >= sent && received >= moved;
      },
      state_timeout))
      << "the direct counters of vif2.0 and vif2.1 never accounted for the flood";
  std::printf("same domain: %llu frames sent, %llu moved direct, %llu dropped, %llu arrived\n",
              static_cast<unsigned long long>(sent), static_cast<unsigned long long>(moved),
              static_cast<unsigned long long>(dropped), static_cast<unsigned long long>(arrived));
  EXPECT_EQ(moved + dropped, sent) << "every frame of the flood goes direct or is dropped";
  EXPECT_GT(moved, sent / 2) << "most of the flood did not go direct";
  EXPECT_EQ(arrived, moved) << "frames moved direct did not all reach vif2.1's guest";
  EXPECT_EQ(mangled, 0U) << "frames reached vif2.1 changed";
  EXPECT_EQ(received, moved) << "vif2.1's direct rx_packets";
  expect_vif_connected();
  expect_contained();
}

// The domain unplugs its receiving vif mid-flood, its guest queue backed up
// (nothing reads it): the pair goes, and vif2.0's frames to that MAC go to the
// host from then on, each answered OKAY.
TEST_F(DirectPath, ADomainUnpluggingItsPairedVifMidFloodIsServedOnThroughTheHost) {
  sibling_vif sibling(guest());
  tx_driver& t = pair_with_sibling(sibling);
  (void)aim_flood(t, sibling_vif::mac);
  begin_attack();
  ASSERT_GT(flood(t, std::chrono::seconds(1)), 0U);
  sibling.close();
  EXPECT_TRUE(wait_until(
      [&] {
        const auto a = w().stats(hostile_guest::id);
        if (!a.is_array() || a.empty() || !a[0].contains("direct")) {
          return false;
        }
        const nlohmann::json& peers = a[0]["direct"]["peers"];
        return std::find(peers.begin(), peers.end(), sibling_vif::name) == peers.end();
      },
      state_timeout))
      << "vif2.0 still lists the unplugged vif2.1 as its peer";
  const std::uint64_t tap_before = hostile_tap_rx_bytes();
  const std::uint64_t sent = flood(t, std::chrono::seconds(1));
  ASSERT_GT(sent, 0U);
  EXPECT_GE(hostile_tap_rx_bytes() - tap_before, sent * flood_frame_bytes / 2)
      << "after the unplug the frames did not go through vif2.0's TAP";
  expect_vif_connected();
  expect_contained();
}

}  // namespace
}  // namespace unetback::hostile
