#include "unetback/sim/netfront/rx_assembler.hpp"

#include <cstring>

namespace unetback::sim {

const char* to_string(rx_error e) {
  switch (e) {
    case rx_error::slot_status:
      return "slot with an error status";
    case rx_error::slot_overrun:
      return "slot data overruns its page";
    case rx_error::too_many_slots:
      return "too many slots in one packet";
    case rx_error::bad_extra:
      return "bad extra-info slot";
    case rx_error::too_large:
      return "packet larger than 65535 bytes";
  }
  return "unknown rx error";
}

void rx_assembler::reset() {
  pkt_ = rx_packet{};
  expect_extra_ = false;
  more_data_ = false;
  extras_ = 0;
  failed_ = false;
}

rx_assembler::state rx_assembler::fail(rx_error e) {
  if (!failed_) {
    error_ = e;
    failed_ = true;
  }
  // Keep consuming the packet's slots: the chain flags still tell its end.
  return (expect_extra_ || more_data_) ? state::need_more : state::failed;
}

rx_assembler::state rx_assembler::feed(std::uint32_t idx, const rings::rx_response& slot) {
  ++pkt_.slots;
  if (expect_extra_) {
    return feed_extra(slot);
  }
  return feed_data(idx, slot);
}

rx_assembler::state rx_assembler::feed_extra(const rings::rx_response& slot) {
  rings::extra_info extra{};
  std::memcpy(&extra, &slot, sizeof extra);
  expect_extra_ = (extra.flags & rings::extra_flag_more) != 0;
  if (++extras_ > max_rx_extras || extra.type == rings::extra_type::none ||
      extra.type >= rings::extra_type::max) {
    return fail(rx_error::bad_extra);
  }
  if (extra.type == rings::extra_type::gso) {
    pkt_.has_gso = true;
    pkt_.gso = extra;
  }
  if (expect_extra_ || more_data_) {
    return state::need_more;
  }
  return failed_ ? state::failed : state::complete;
}

rx_assembler::state rx_assembler::feed_data(std::uint32_t idx, const rings::rx_response& slot) {
  const bool first = pkt_.fragments == 0 && pkt_.slots == 1;
  if (first) {
    pkt_.flags = slot.flags;
    expect_extra_ = (slot.flags & rings::rx_flags::extra_info) != 0;
  }
  more_data_ = (slot.flags & rings::rx_flags::more_data) != 0;
  if (slot.status < 0) {
    return fail(rx_error::slot_status);
  }
  const auto len = static_cast<std::uint32_t>(slot.status);
  if (std::uint32_t{slot.offset} + len > rings::page_size) {
    return fail(rx_error::slot_overrun);
  }
  if (pkt_.fragments >= max_rx_data_slots) {
    return fail(rx_error::too_many_slots);
  }
  pkt_.total += len;
  if (pkt_.total > rings::max_tx_size) {
    return fail(rx_error::too_large);
  }
  pkt_.frag[pkt_.fragments++] = rx_fragment{idx, slot.offset, static_cast<std::uint16_t>(len)};
  if (expect_extra_ || more_data_) {
    return state::need_more;
  }
  return failed_ ? state::failed : state::complete;
}

}  // namespace unetback::sim
