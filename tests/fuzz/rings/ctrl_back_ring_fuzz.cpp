// Fuzzes control-ring processing as a whole (feature-ctrl-ring,
// docs/protocol.md §4, XSA-39/155/270): a hostile frontend owns the shared
// control-ring page and writes any request slot, any req_prod and any event
// index, in any order; the backend runs the pass of
// backend/datapath/src/control_ring.cpp (unconsumed_requests, copy each
// request once, consume, answer with ctrl_handler, push, final check) over
// it. The input is a queue count, the granted page's first bytes, then
// 6-byte operations: {op, slot, 4 bytes}.
// Checked after every pass: a producer overflow is reported and nothing is
// consumed or answered in that pass (the runner then stops); otherwise every
// consumed request is answered in place (req_cons == rsp_prod_pvt), at most
// one ring's worth per pass, rsp_prod is published, every response echoes its
// request's id and type with a known status, and the committed hash mapping
// stays below the queue count.

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <span>

#include "unetback/rings/ctrl_ring.hpp"
#include "unetback/rings/netif.hpp"
#include "unetback/rings/shared_ring.hpp"

namespace {

using namespace unetback::rings;  // NOLINT(google-build-using-namespace)

void require(bool ok) {
  if (!ok) {
    std::abort();
  }
}

constexpr std::size_t grant_bytes = 32;
constexpr std::size_t op_bytes = 6;
constexpr std::size_t entries_offset = 64;  // struct xen_netif_ctrl_sring: 64-byte header

struct backend {
  ctrl_back_ring ring;
  ctrl_handler handler;
  std::uint32_t num_queues;
};

/// One pass of the control-ring runner; false once it faulted.
bool pass(backend& b, std::span<const std::byte> granted, std::span<std::byte, page_size> page) {
  const std::uint32_t cons_before = b.ring.req_cons();
  const auto pending = b.ring.unconsumed_requests();
  if (!pending) {
    require(b.ring.req_cons() == cons_before);
    return false;
  }
  require(pending.value() <= ctrl_back_ring::size);
  const auto reader = [granted](unetback::grant_ref ref, std::span<std::byte> dest) {
    require(dest.size() <= max_hash_mapping_size * 4);
    if ((ref.value() & 1U) != 0) {
      return false;  // a bad or revoked grant
    }
    for (std::size_t i = 0; i < dest.size(); ++i) {
      dest[i] = granted[i % granted.size()];
    }
    return true;
  };
  for (std::uint32_t i = 0; i < pending.value(); ++i) {
    const std::uint32_t idx = b.ring.req_cons();
    const ctrl_request req = b.ring.copy_request(idx);
    b.ring.consume(1);
    const ctrl_response rsp = b.handler.handle(req, reader);
    require(rsp.id == req.id && rsp.type == req.type);
    require(rsp.status <= ctrl_status::buffer_overflow);
    b.ring.write_response(rsp);
    ctrl_response shared;  // answered in the request's own slot
    std::memcpy(&shared, page.data() + entries_offset + (idx % ctrl_back_ring::size) * 16,
                sizeof(shared));
    require(shared.id == rsp.id && shared.status == rsp.status);
  }
  (void)b.ring.push_responses_and_check_notify();
  require(b.ring.req_cons() == b.ring.rsp_prod_pvt());
  require(b.ring.header_snapshot().rsp_prod == b.ring.rsp_prod_pvt());
  const hash_config& cfg = b.handler.config();
  require(cfg.mapping_size <= max_hash_mapping_size);
  require(std::all_of(cfg.mapping.begin(), cfg.mapping.end(),
                      [&b](std::uint32_t q) { return q < b.num_queues; }));
  const auto again = b.ring.final_check_for_requests();
  return static_cast<bool>(again);
}

void store_u32(std::span<std::byte, page_size> page, std::size_t at, std::uint32_t v) {
  std::memcpy(page.data() + at, &v, sizeof(v));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 1 + grant_bytes) {
    return 0;
  }
  alignas(page_size) static std::array<std::byte, page_size> memory;
  const std::span<std::byte, page_size> page(memory);
  (void)ctrl_front_ring::init(page);
  auto attached = ctrl_back_ring::attach(page);
  require(static_cast<bool>(attached));
  backend b{attached.value(), ctrl_handler(1U + data[0] % 16U), 1U + data[0] % 16U};
  const std::span<const std::byte> granted(reinterpret_cast<const std::byte*>(data + 1),
                                           grant_bytes);
  data += 1 + grant_bytes;
  size -= 1 + grant_bytes;
  std::uint32_t req_prod = 0;
  for (; size >= op_bytes; data += op_bytes, size -= op_bytes) {
    std::uint32_t word = 0;
    std::memcpy(&word, data + 2, sizeof(word));
    const std::size_t slot = data[1] % ctrl_back_ring::size;
    switch (data[0] % 6U) {
      case 0:  // the frontend writes a request: type in the low bits, data
      case 1: {
        std::array<std::uint32_t, 4> req{(word & 0xFU) << 16U | data[1], word, word >> 8U,
                                         word >> 16U};
        std::memcpy(page.data() + entries_offset + slot * 16, req.data(), 16);
        break;
      }
      case 2:  // publishes a few more requests
        req_prod += 1U + (word % 8U);
        store_u32(page, 0, req_prod);
        break;
      case 3:  // publishes any req_prod at all
        req_prod = word;
        store_u32(page, 0, req_prod);
        break;
      case 4:  // scribbles on req_event / rsp_event
        store_u32(page, (data[1] & 1U) != 0 ? 4 : 12, word);
        break;
      default:  // the backend wakes up
        if (!pass(b, granted, page)) {
          return 0;  // a fault: the runner stops touching the ring
        }
        break;
    }
  }
  (void)pass(b, granted, page);
  return 0;
}
