#include "unetback/sim/netfront/ring_attack.hpp"

#include <array>
#include <thread>

#include "unetback/sim/netfront/hostile_frontend.hpp"

namespace unetback::sim {
namespace {

struct attack_name {
  ring_attack attack;
  std::string_view name;
};
constexpr std::array<attack_name, 6> attack_names{{
    {ring_attack::req_prod_overflow, "tx-req-prod-overflow"},
    {ring_attack::slot_crossing_page, "tx-slot-crossing-page"},
    {ring_attack::bad_gref, "tx-bad-gref"},
    {ring_attack::twenty_two_slots, "tx-22-slots"},
    {ring_attack::rx_req_prod_overflow, "rx-req-prod-overflow"},
    {ring_attack::kick_storm, "tx-kick-storm"},
}};

constexpr auto kick_storm_length = std::chrono::seconds(2);
constexpr std::uint64_t kick_storm_max = 1'000'000;

// A ref far beyond any guest's grant table (Xen: GNTST_bad_gntref).
constexpr std::uint32_t never_granted_ref = 0x7FFFFFFFU;

rings::tx_request slot(const shared_page& page, std::uint16_t offset, std::uint16_t size,
                       std::uint16_t id, std::uint16_t flags = 0) {
  rings::tx_request r{};
  r.gref = page.ref.value();
  r.offset = offset;
  r.size = size;
  r.id = id;
  r.flags = flags;
  return r;
}

/// Writes the attack's requests; returns how many it wrote (0: it moved
/// req_prod by hand instead).
std::uint32_t write_requests(frontend_device& dev, frontend_queue& q, ring_attack a) {
  rings::tx_front_ring& ring = q.tx_ring();
  const shared_page& page = q.tx_slot(0);
  dev.memory().grant_slot(page);
  switch (a) {
    case ring_attack::req_prod_overflow:
      hostile_frontend(dev).publish_tx_req_prod(
          0, ring.req_prod_pvt() + rings::tx_front_ring::size + 1);
      return 0;
    case ring_attack::slot_crossing_page:
      (void)ring.write_request(slot(page, 4000, 200, 0));
      return 1;
    case ring_attack::bad_gref: {
      rings::tx_request r = slot(page, 0, 60, 0);
      r.gref = never_granted_ref;
      (void)ring.write_request(r);
      return 1;
    }
    case ring_attack::rx_req_prod_overflow:
      hostile_frontend(dev).publish_rx_req_prod(
          0, q.rx_ring().req_prod_pvt() + rings::rx_front_ring::size + 1);
      return 0;
    case ring_attack::kick_storm:
      return 0;
    case ring_attack::twenty_two_slots: {
      constexpr std::uint16_t count = 22;
      for (std::uint16_t i = 0; i < count; ++i) {
        const std::uint16_t flags = i + 1 < count ? rings::tx_flags::more_data : 0;
        (void)ring.write_request(slot(page, 0, i == 0 ? count * 60 : 60, i, flags));
      }
      return count;
    }
  }
  return 0;
}

/// Consumes the responses to what the stopped worker left in flight (waiting
/// up to a second for them), so that later responses answer the attack alone.
void drain_in_flight(rings::tx_front_ring& ring) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(1);
  while (ring.rsp_cons() != ring.req_prod_pvt() && std::chrono::steady_clock::now() < deadline) {
    const auto avail = ring.unconsumed_responses();
    if (!avail) {
      return;
    }
    ring.consume_responses(avail.value());
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

/// One doorbell on the port the attack wrote to.
std::uint64_t kick(frontend_queue& q, ring_attack a) {
  q.events().notify(a == ring_attack::rx_req_prod_overflow ? q.rx_port() : q.tx_port());
  return 1;
}

/// Doorbells without requests, as fast as the platform takes them.
std::uint64_t kick_storm(frontend_queue& q) {
  const auto end = std::chrono::steady_clock::now() + kick_storm_length;
  std::uint64_t kicks = 0;
  while (kicks < kick_storm_max && std::chrono::steady_clock::now() < end) {
    q.events().notify(q.tx_port());
    ++kicks;
  }
  return kicks;
}

}  // namespace

std::optional<ring_attack> parse_ring_attack(std::string_view name) {
  for (const attack_name& n : attack_names) {
    if (n.name == name) {
      return n.attack;
    }
  }
  return std::nullopt;
}

std::string_view to_string(ring_attack a) {
  for (const attack_name& n : attack_names) {
    if (n.attack == a) {
      return n.name;
    }
  }
  return "?";
}

std::vector<std::string_view> ring_attack_names() {
  std::vector<std::string_view> out;
  out.reserve(attack_names.size());
  for (const attack_name& n : attack_names) {
    out.push_back(n.name);
  }
  return out;
}

ring_attack_outcome run_ring_attack(frontend_device& dev, ring_attack a,
                                    std::chrono::milliseconds wait) {
  frontend_queue& q = *dev.queues().at(0);
  q.stop();
  rings::tx_front_ring& ring = q.tx_ring();
  drain_in_flight(ring);
  if (write_requests(dev, q, a) != 0) {
    (void)ring.push_requests_and_check_notify();
  }
  ring_attack_outcome out;
  out.kicks = a == ring_attack::kick_storm ? kick_storm(q) : kick(q, a);
  const auto deadline = std::chrono::steady_clock::now() + wait;
  while (std::chrono::steady_clock::now() < deadline) {
    (void)ring.take_responses(
        [&](const rings::tx_response& rsp, std::uint32_t) { out.statuses.push_back(rsp.status); });
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return out;
}

}  // namespace unetback::sim
