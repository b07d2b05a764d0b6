// Fuzzes RX processing (TAP -> guest): a frame with any vnet header from the
// TAP, for a frontend with any offload features, goes through
// vnet_to_guest_rx (what the guest is told about checksums and GSO),
// rx_slots_needed and build_rx into RX requests whose ids and grant refs the
// guest chose. Input: a feature byte, a hash byte, a padding byte, the
// 12-byte vnet header, 4 bytes of hash value, then the frame. The frame is
// padded with `padding` KiB of zeros to reach multi-page sizes.
// Checked (docs/protocol.md §3.4, §6.2 items 23-25): the plan uses exactly
// rx_slots_needed slots; the copies cover the frame exactly once, in order,
// each within one page at offset 0; each data response echoes its request's
// id and states its copy's length; more_data links the data slots; extras
// sit right after slot 0 and chain correctly; a frame the frontend cannot
// take is refused, never built. The plan is built over a stale one, as the
// data path reuses its plans.

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <span>
#include <vector>

#include "unetback/rings/rx_builder.hpp"
#include "unetback/rings/vnet_hdr.hpp"

namespace {

using namespace unetback::rings;  // NOLINT(google-build-using-namespace)

void require(bool ok) {
  if (!ok) {
    std::abort();
  }
}

constexpr std::size_t prefix = 3 + sizeof(vnet_header) + 4;

offload_features features_of(std::uint8_t b) {
  offload_features f;
  f.sg = (b & 1U) != 0;
  f.gso_tcpv4 = (b & 2U) != 0;
  f.gso_tcpv6 = (b & 4U) != 0;
  f.ipv6_csum_offload = (b & 8U) != 0;
  f.no_csum_offload = (b & 16U) != 0;
  return f;
}

/// A plan whose every entry holds a previous packet's bytes, as rx_path's
/// reused plans do: whatever build_rx leaves unwritten fails a check below.
rx_plan stale_plan() {
  rx_plan plan;
  plan.slots = 0xA5A5A5A5U;
  plan.copy_count = 0xA5A5A5A5U;
  plan.copies.fill(rx_copy{0xA5A5A5A5U, unetback::grant_ref(0xA5A5A5A5U), 0xA5A5A5A5U, 0xA5A5});
  plan.responses.fill(rx_response{0xA5A5, 0xA5A5, 0xA5A5, -0x5A5B});
  return plan;
}

/// The guest's RX requests: ids and grefs derived from the frame bytes.
std::array<rx_request, rx_max_slots> requests_from(std::span<const std::byte> seed) {
  std::array<rx_request, rx_max_slots> reqs{};
  for (std::size_t i = 0; i < reqs.size(); ++i) {
    const auto b = seed.empty() ? 0U : std::to_integer<unsigned>(seed[i % seed.size()]);
    reqs[i].id = static_cast<std::uint16_t>(b * 257U + i);
    reqs[i].gref = static_cast<std::uint32_t>(b << 16U) + static_cast<std::uint32_t>(i);
  }
  return reqs;
}

void check_extras(const rx_plan& plan, const rx_packet_desc& p, std::uint32_t extras) {
  std::uint32_t slot = 1;
  for (std::uint32_t e = 0; e < extras; ++e, ++slot) {
    extra_info x;
    std::memcpy(&x, &plan.responses[slot], sizeof(x));
    const bool gso_first = p.offload.gso_type != gso_type::none;
    const std::uint8_t want = (e == 0 && gso_first) ? extra_type::gso : extra_type::hash;
    require(x.type == want);
    require(((x.flags & extra_flag_more) != 0) == (e + 1 < extras));
    if (want == extra_type::gso) {
      require(x.u.gso.size == p.offload.gso_size && x.u.gso.type == p.offload.gso_type);
    }
  }
}

void check_plan(const rx_plan& plan, const rx_packet_desc& p, std::uint32_t needed,
                std::span<const rx_request> reqs) {
  require(plan.slots == needed && plan.slots <= rx_max_slots);
  const std::uint32_t extras = needed - plan.copy_count;
  require(extras == (p.offload.gso_type != gso_type::none ? 1U : 0U) + (p.hash.present ? 1U : 0U));
  std::uint32_t covered = 0;
  for (std::uint32_t k = 0; k < plan.copy_count; ++k) {
    const rx_copy& c = plan.copies[k];
    require(c.slot == (k == 0 ? 0 : extras + k) && c.slot < plan.slots);
    require(c.src_offset == covered && c.len >= 1 && c.len <= rx_slot_bytes);
    require(c.gref.value() == reqs[c.slot].gref);
    const rx_response& r = plan.responses[c.slot];
    require(r.id == reqs[c.slot].id && r.offset == 0 && r.status == c.len);
    require(((r.flags & rx_flags::more_data) != 0) == (k + 1 < plan.copy_count));
    require(k == 0 || (r.flags & ~rx_flags::more_data) == 0);
    covered += c.len;
  }
  require(covered == p.length);
  require(((plan.responses[0].flags & rx_flags::extra_info) != 0) == (extras > 0));
  check_extras(plan, p, extras);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < prefix) {
    return 0;
  }
  const offload_features f = features_of(data[0]);
  const std::uint8_t hash_byte = data[1];
  const std::size_t padding = (data[2] % 96U) * 1024U;  // up to 95 KiB: past 18 pages
  vnet_header h;
  std::memcpy(&h, data + 3, sizeof(h));
  std::uint32_t hash_value = 0;
  std::memcpy(&hash_value, data + 3 + sizeof(h), sizeof(hash_value));
  std::vector<std::byte> frame(size - prefix + padding);
  if (size > prefix) {
    std::memcpy(frame.data(), data + prefix, size - prefix);
  }

  const auto off = vnet_to_guest_rx(h, frame, f);
  if (!off) {
    return 0;  // the frame is dropped before any slot is consumed
  }
  rx_packet_desc p;
  p.length = static_cast<std::uint32_t>(frame.size());
  p.offload = off.value();
  p.hash = rx_hash{(hash_byte & 1U) != 0, static_cast<std::uint8_t>(hash_byte >> 1U), hash_value};
  require(p.offload.gso_type == gso_type::none || p.offload.gso_type == gso_type::tcpv4 ||
          p.offload.gso_type == gso_type::tcpv6);

  const auto reqs = requests_from(frame);
  const auto needed = rx_slots_needed(p, f);
  rx_plan plan = stale_plan();
  const auto built = build_rx(p, f, reqs, plan);
  require(static_cast<bool>(needed) == static_cast<bool>(built));
  if (!needed) {
    require(needed.error() == built.error());
    require(p.length == 0 || p.length > rx_slot_bytes || p.offload.gso_type != gso_type::none);
    return 0;
  }
  require(built.value() == plan.slots);
  check_plan(plan, p, needed.value(), reqs);
  return 0;
}
