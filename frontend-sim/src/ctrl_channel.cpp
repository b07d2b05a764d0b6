#include "unetback/sim/netfront/ctrl_channel.hpp"

#include <poll.h>

#include <algorithm>
#include <array>
#include <cstring>

#include <spdlog/spdlog.h>

#include "unetback/rings/ctrl_ring.hpp"

namespace unetback::sim {
namespace {

/// The RSS verification key from Microsoft's documentation (also used by
/// the rings/ Toeplitz tests).
constexpr std::array<std::uint8_t, 40> rss_key = {
    0x6d, 0x5a, 0x56, 0xda, 0x25, 0x5b, 0x0e, 0xc2, 0x41, 0x67, 0x25, 0x3d, 0x43, 0xa3,
    0x8f, 0xb0, 0xd0, 0xca, 0x2b, 0xcb, 0xae, 0x7b, 0x30, 0xb4, 0x77, 0xcb, 0x2d, 0xa3,
    0x80, 0x30, 0xf2, 0x0c, 0x6a, 0x42, 0xb7, 0x3b, 0xbe, 0xac, 0x01, 0xfa};

constexpr std::uint32_t default_mapping_size = 128;

}  // namespace

ctrl_channel::ctrl_channel(frontend_memory& memory, domid backend)
    : memory_(memory), backend_(backend), ev_(memory.open_events()) {
  page_ = memory_.share_page(backend, grant_mode::read_write);
  ring_ = rings::ctrl_front_ring::init(memory_.memory(page_));
  port_ = ev_->alloc_unbound(backend);
}

ctrl_channel::~ctrl_channel() {
  ev_.reset();
  (void)memory_.release(page_);  // EBUSY: left shared, as Linux defers it
}

std::optional<rings::ctrl_response> ctrl_channel::call(std::uint16_t type, std::uint32_t d0,
                                                       std::uint32_t d1, std::uint32_t d2,
                                                       std::chrono::milliseconds timeout) {
  const rings::ctrl_request req = rings::make_ctrl_request(next_id_++, type, d0, d1, d2);
  if (!ring_.write_request(req)) {
    return std::nullopt;
  }
  if (ring_.push_requests_and_check_notify()) {
    ev_->notify(port_);
  }
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    const auto n = ring_.final_check_for_responses();
    if (!n) {
      return std::nullopt;
    }
    if (n.value() > 0) {
      const rings::ctrl_response rsp = ring_.copy_response(ring_.rsp_cons());
      ring_.consume_responses(1);
      if (rsp.id != req.id || rsp.type != req.type) {
        return std::nullopt;
      }
      return rsp;
    }
    pollfd p{ev_->fd(), POLLIN, 0};
    if (::poll(&p, 1, 50) == 1) {
      while (const auto port = ev_->pending()) {
        ev_->unmask(*port);
      }
    }
  }
  return std::nullopt;
}

bool ctrl_channel::configure_toeplitz(std::uint32_t queues,
                                      std::span<const std::uint32_t> mapping) {
  const shared_page key_page = memory_.share_page(backend_, grant_mode::read_only);
  std::memcpy(memory_.memory(key_page).data(), rss_key.data(), rss_key.size());
  const shared_page map_page = memory_.share_page(backend_, grant_mode::read_only);
  const auto entries = static_cast<std::uint32_t>(
      mapping.empty() ? default_mapping_size
                      : std::min<std::size_t>(mapping.size(), rings::page_size / 4));
  for (std::uint32_t i = 0; i < entries; ++i) {
    const std::uint32_t q = !mapping.empty() ? mapping[i] : (queues == 0 ? 0 : i % queues);
    std::memcpy(memory_.memory(map_page).data() + i * sizeof q, &q, sizeof q);
  }
  const auto ok = [](const std::optional<rings::ctrl_response>& r) {
    return r && r->status == rings::ctrl_status::success;
  };
  const bool done =
      ok(call(XEN_NETIF_CTRL_TYPE_SET_HASH_ALGORITHM, XEN_NETIF_CTRL_HASH_ALGORITHM_TOEPLITZ)) &&
      ok(call(XEN_NETIF_CTRL_TYPE_SET_HASH_FLAGS, rings::supported_hash_types)) &&
      ok(call(XEN_NETIF_CTRL_TYPE_SET_HASH_KEY, key_page.ref.value(),
              static_cast<std::uint32_t>(rss_key.size()))) &&
      ok(call(XEN_NETIF_CTRL_TYPE_SET_HASH_MAPPING_SIZE, entries)) &&
      ok(call(XEN_NETIF_CTRL_TYPE_SET_HASH_MAPPING, map_page.ref.value(), entries, 0));
  (void)memory_.release(key_page);
  (void)memory_.release(map_page);
  spdlog::info("control ring: Toeplitz configuration {}", done ? "accepted" : "REFUSED");
  return done;
}

}  // namespace unetback::sim
