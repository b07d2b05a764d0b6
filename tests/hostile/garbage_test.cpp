// Unstructured attacks against the real daemon: whole rings of random
// bytes (a small end-to-end fuzzer, fixed seed), a guest whose memory and
// process vanish while connected (a crashed guest), and a guest that closes
// its event channel under the backend.

#include <random>
#include <thread>

#include "harness/hostile_fixture.hpp"

namespace unetback::hostile {
namespace {

class Garbage : public hostile_test {
 protected:
  // Random rings fault the vif again and again on purpose: no fault backoff
  // (FaultLoop tests it).
  world_options world_config() override { return {{"--fault-backoff-max-ms", "0"}}; }
};

// 40 rounds: 256 random TX slots (random grefs among the guest's real ones
// and garbage), published and kicked. Each round either is answered or
// disables the vif; after a fault the guest reconnects. The daemon must
// survive all of it, answer every slot it consumed, and stay bounded.
TEST_F(Garbage, RandomTxRingContentsNeverHurtTheDaemon) {
  connect_and_drive();
  begin_attack();
  std::mt19937 rng(0x5eed);  // 32-bit results
  int faults = 0;
  int answered_rounds = 0;
  for (int round = 0; round < 40; ++round) {
    tx_driver& t = tx();
    for (std::uint32_t i = 0; i < rings::tx_front_ring::size; ++i) {
      // Mostly plausible slots (so rounds get answered), sometimes anything.
      const bool wild = rng() % 512 == 0;
      rings::tx_request r{};
      r.gref = rng() % 16 != 0 ? t.ref(rng() % tx_driver::data_pages).value()
                               : static_cast<std::uint32_t>(rng());
      r.size = static_cast<std::uint16_t>(wild ? rng() : rng() % 1500);
      r.offset = static_cast<std::uint16_t>(wild ? rng() : rng() % (4097 - r.size));
      r.flags = static_cast<std::uint16_t>(wild ? rng() % 16 : (rng() % 3 == 0 ? 4 : 0));
      if (i + 1 == rings::tx_front_ring::size && !wild) {
        r.flags = 0;  // a chain cut by the end of the ring is the usual fault: not every round
      }
      r.id = static_cast<std::uint16_t>(rng());
      t.put(r);
    }
    t.push();
    std::vector<rings::tx_response> rsp;
    wait_until(
        [&] {
          const auto more =
              t.responses(rings::tx_front_ring::size - rsp.size(), std::chrono::milliseconds(50));
          rsp.insert(rsp.end(), more.begin(), more.end());
          const auto st = guest().backend_state();
          return rsp.size() == rings::tx_front_ring::size || st == 5 || st == 6;
        },
        state_timeout);
    for (const auto& x : rsp) {
      EXPECT_TRUE(x.status >= rings::netif_rsp::dropped && x.status <= rings::netif_rsp::null)
          << "status " << x.status;
    }
    if (rsp.size() == rings::tx_front_ring::size) {
      ++answered_rounds;
      continue;
    }
    // Not all answered: the vif must have been disabled (a fatal slot).
    ASSERT_TRUE(guest().wait_backend_state({5, 6}))
        << "round " << round << ": " << rsp.size() << " answers and the vif still up";
    ++faults;
    reconnect_and_drive();
  }
  std::cerr << "[garbage] " << answered_rounds << " rounds answered, " << faults
            << " faults (each followed by a reconnect)\n";
  EXPECT_TRUE(w().daemon_alive());
  expect_contained();
}

// A crashed guest: its memory file and event-channel endpoints disappear
// while the backend has its rings mapped and frames are arriving for it.
// Then the toolstack destroys the domain. The daemon must neither crash
// (SIGBUS, use after unmap) nor wedge, and must let the device go.
TEST_F(Garbage, GuestThatVanishesWhileConnectedIsContained) {
  isolate_hostile_vif();
  guest().connect();
  raw_port inject(w().host_ns(), hostile_guest::vif);
  begin_attack();
  drop_hostile_guest();  // its memory, grants, ports and XenStore connection go
  const mac_bytes to = parse_mac(hostile_guest::mac);
  const mac_bytes from = parse_mac("02:00:00:00:00:01");
  for (int i = 0; i < 2000; ++i) {
    inject.send(test_frame(to, from, 600, static_cast<std::uint8_t>(i)));
  }
  std::this_thread::sleep_for(std::chrono::seconds(1));
  EXPECT_TRUE(w().daemon_alive());
  ASSERT_EQ(run_command({w().bin("sim-xl").string(), "--xenstore",
                         (w().xs_dir() / "socket").string(), "domain-destroy", "2"},
                        w().logs() / "sim-xl.log", std::chrono::seconds(60)),
            0);
  EXPECT_TRUE(
      wait_until([&] { return !w().read(world::backend_path(hostile_guest::id)); }, state_timeout))
      << "the backend directory of the vanished guest was not removed";
  expect_contained();
}

// The guest closes (EVTCHNOP_close) the port the backend is bound to, then
// allocates a new one nobody binds, and keeps "transmitting".
TEST_F(Garbage, GuestClosingItsEventChannelIsContained) {
  tx_driver& t = connect_and_drive();
  begin_attack();
  sim::frontend_queue& q = *guest().device().queues().at(0);
  q.events().close(q.tx_port());
  for (int i = 0; i < 50; ++i) {
    t.put(t.slot(1, 0, 60));
    (void)t.ring().push_requests_and_check_notify();
    q.events().notify(q.tx_port());  // to a closed port: dropped
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  EXPECT_TRUE(w().daemon_alive());
  expect_contained();
}

}  // namespace
}  // namespace unetback::hostile
