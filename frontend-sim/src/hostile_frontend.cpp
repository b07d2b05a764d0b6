#include "unetback/sim/netfront/hostile_frontend.hpp"

#include "unetback/sim/netfront/sim_frontend_memory.hpp"

#include <atomic>
#include <cstring>
#include <stdexcept>
#include <string>

namespace unetback::sim {
namespace {

constexpr std::size_t tx_entry = rings::ring_entry_size<rings::tx_request, rings::tx_response>;
constexpr std::size_t rx_entry = rings::ring_entry_size<rings::rx_request, rings::rx_response>;

std::size_t slot_offset(std::uint32_t ring_index, std::uint32_t size, std::size_t entry) {
  return sizeof(rings::sring_header) + static_cast<std::size_t>(ring_index & (size - 1)) * entry;
}

void store_u32(std::byte* at, std::uint32_t value) {
  std::atomic_ref<std::uint32_t>(*reinterpret_cast<std::uint32_t*>(at))
      .store(value, std::memory_order_release);
}

}  // namespace

frontend_queue& hostile_frontend::queue(std::uint32_t q) {
  return *dev_.queues().at(q);
}

void hostile_frontend::stop_queue(std::uint32_t q) {
  queue(q).stop();
}

std::byte* hostile_frontend::ring_page(const shared_page& page) {
  return dev_.memory().memory(page).data();
}

guest_domain& hostile_frontend::sim_domain() {
  auto* sim = dynamic_cast<sim_frontend_memory*>(&dev_.memory());
  if (sim == nullptr) {
    throw std::logic_error("this hostile hook writes the grant table directly: sim platform only");
  }
  return sim->domain();
}

void hostile_frontend::write_tx_slot(std::uint32_t q, std::uint32_t ring_index,
                                     const rings::tx_request& raw) {
  std::byte* page = ring_page(queue(q).tx_ring_page());
  std::memcpy(page + slot_offset(ring_index, rings::tx_front_ring::size, tx_entry), &raw,
              sizeof raw);
}

void hostile_frontend::write_tx_extra(std::uint32_t q, std::uint32_t ring_index,
                                      const rings::extra_info& raw) {
  std::byte* page = ring_page(queue(q).tx_ring_page());
  std::byte* slot = page + slot_offset(ring_index, rings::tx_front_ring::size, tx_entry);
  std::memset(slot, 0, tx_entry);
  std::memcpy(slot, &raw, sizeof raw);
}

void hostile_frontend::publish_tx_req_prod(std::uint32_t q, std::uint32_t value) {
  store_u32(ring_page(queue(q).tx_ring_page()) + offsetof(rings::sring_header, req_prod), value);
}

void hostile_frontend::write_rx_slot(std::uint32_t q, std::uint32_t ring_index,
                                     const rings::rx_request& raw) {
  std::byte* page = ring_page(queue(q).rx_ring_page());
  std::memcpy(page + slot_offset(ring_index, rings::rx_front_ring::size, rx_entry), &raw,
              sizeof raw);
}

void hostile_frontend::publish_rx_req_prod(std::uint32_t q, std::uint32_t value) {
  store_u32(ring_page(queue(q).rx_ring_page()) + offsetof(rings::sring_header, req_prod), value);
}

void hostile_frontend::write_tx_rsp_event(std::uint32_t q, std::uint32_t value) {
  store_u32(ring_page(queue(q).tx_ring_page()) + offsetof(rings::sring_header, rsp_event), value);
}

grant_ref hostile_frontend::grant(std::uint32_t page, domid grantee, grant_mode mode) {
  return sim_domain().grant_access(page, grantee, mode);
}

void hostile_frontend::revoke(grant_ref ref) {
  shared(sim_domain().raw_grant(ref.value()).flags_domid).store(0);
}

void hostile_frontend::write_grant_entry(grant_ref ref, std::uint16_t flags, domid grantee,
                                         std::uint32_t frame) {
  grant_entry& e = sim_domain().raw_grant(ref.value());
  shared(e.frame).store(frame);
  shared(e.flags_domid).store(grant_word(flags, grantee.value()));
}

void hostile_frontend::kick_storm(std::uint32_t q, std::uint32_t count) {
  frontend_queue& fq = queue(q);
  port_entry& e = sim_domain().raw_port(fq.tx_port().value());
  for (std::uint32_t i = 0; i < count; ++i) {
    shared(e.pending_to_backend).store(0);
    shared(e.masked_backend).store(0);
    fq.events().notify(fq.tx_port());
  }
}

void hostile_frontend::write_key(std::string_view relative, std::string_view value) {
  dev_.xenstore().write(dev_.frontend_path() + "/" + std::string(relative), value);
}

void hostile_frontend::remove_key(std::string_view relative) {
  dev_.xenstore().rm(dev_.frontend_path() + "/" + std::string(relative));
}

}  // namespace unetback::sim
