#include "unetback/sim/netfront/tx_slots.hpp"

#include <algorithm>
#include <cstring>

namespace unetback::sim {
namespace {

/// netif flags for the vnet header's checksum state (Linux netfront:
/// CHECKSUM_PARTIAL => csum_blank | data_validated; validated => data_validated).
std::uint16_t checksum_flags(const rings::vnet_header& vnet) {
  if ((vnet.flags & rings::vnet_f_needs_csum) != 0) {
    return rings::tx_flags::csum_blank | rings::tx_flags::data_validated;
  }
  if ((vnet.flags & rings::vnet_f_data_valid) != 0) {
    return rings::tx_flags::data_validated;
  }
  return 0;
}

}  // namespace

const char* to_string(tx_plan_error e) {
  switch (e) {
    case tx_plan_error::too_short:
      return "frame shorter than an Ethernet header";
    case tx_plan_error::too_large:
      return "frame larger than 65535 bytes";
    case tx_plan_error::needs_sg:
      return "multi-page frame but the backend lacks feature-sg";
    case tx_plan_error::gso_unsupported:
      return "GSO type not offered by the backend";
    case tx_plan_error::bad_gso:
      return "GSO frame with size 0";
  }
  return "unknown tx plan error";
}

rings::result<tx_plan, tx_plan_error> plan_tx(std::size_t frame_len, const rings::vnet_header& vnet,
                                              const backend_tx_features& backend,
                                              std::uint32_t slot_bytes) {
  if (frame_len < rings::eth_hlen) {
    return tx_plan_error::too_short;
  }
  if (frame_len > rings::max_tx_size) {
    return tx_plan_error::too_large;
  }
  slot_bytes = std::clamp<std::uint32_t>(slot_bytes, min_tx_slot_bytes, rings::page_size);
  tx_plan plan;
  plan.total = static_cast<std::uint16_t>(frame_len);
  plan.slot_bytes = static_cast<std::uint16_t>(slot_bytes);
  plan.first_flags = checksum_flags(vnet);
  plan.data_slots = static_cast<std::uint32_t>((frame_len + slot_bytes - 1) / slot_bytes);
  if (plan.data_slots > 1 && !backend.sg) {
    return tx_plan_error::needs_sg;
  }
  for (std::uint32_t i = 0; i < plan.data_slots; ++i) {
    const std::size_t left = frame_len - std::size_t{i} * slot_bytes;
    plan.data_len[i] = static_cast<std::uint16_t>(left < slot_bytes ? left : slot_bytes);
  }
  const unsigned type = vnet.gso_type & ~static_cast<unsigned>(rings::vnet_gso_ecn);
  if (type == rings::vnet_gso_none) {
    return plan;
  }
  const bool v4 = type == rings::vnet_gso_tcpv4;
  if ((!v4 && type != rings::vnet_gso_tcpv6) || (v4 && !backend.gso_tcpv4) ||
      (!v4 && !backend.gso_tcpv6)) {
    return tx_plan_error::gso_unsupported;
  }
  if (vnet.gso_size == 0) {
    return tx_plan_error::bad_gso;
  }
  plan.has_gso = true;
  plan.gso.type = rings::extra_type::gso;
  plan.gso.u.gso.size = vnet.gso_size;
  plan.gso.u.gso.type = v4 ? rings::gso_type::tcpv4 : rings::gso_type::tcpv6;
  return plan;
}

tx_slots build_tx_slots(const tx_plan& plan, const std::array<grant_ref, max_tx_data_slots>& grefs,
                        const std::array<std::uint16_t, max_tx_data_slots>& ids) {
  tx_slots out;
  for (std::uint32_t i = 0; i < plan.data_slots; ++i) {
    rings::tx_request r{};
    r.gref = grefs[i].value();
    r.offset = 0;
    r.id = ids[i];
    r.size = i == 0 ? plan.total : plan.data_len[i];
    r.flags = i + 1 < plan.data_slots ? rings::tx_flags::more_data : 0;
    if (i == 0) {
      r.flags = static_cast<std::uint16_t>(r.flags | plan.first_flags |
                                           (plan.has_gso ? rings::tx_flags::extra_info : 0));
    }
    out.entries[out.count++] = r;
    if (i == 0 && plan.has_gso) {
      rings::tx_request slot{};
      std::memcpy(&slot, &plan.gso, sizeof plan.gso);
      out.entries[out.count++] = slot;
    }
  }
  return out;
}

}  // namespace unetback::sim
