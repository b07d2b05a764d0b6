// Fuzzes the control-ring state machine: the input is a queue count, the
// contents of one granted page, then a sequence of 16-byte requests. Grants
// with an odd ref fail to copy. After every request the committed
// configuration must still be valid (XSA-270).

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <span>

#include "unetback/rings/ctrl_ring.hpp"

namespace {

using namespace unetback::rings;  // NOLINT(google-build-using-namespace)

void require(bool ok) {
  if (!ok) {
    std::abort();
  }
}

constexpr std::size_t grant_bytes = 64;

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 1 + grant_bytes) {
    return 0;
  }
  const std::uint32_t num_queues = 1U + (data[0] % 16U);
  std::array<std::byte, 4096> page{};
  std::memcpy(page.data(), data + 1, grant_bytes);
  data += 1 + grant_bytes;
  size -= 1 + grant_bytes;
  ctrl_handler handler(num_queues);
  const auto reader = [&page](unetback::grant_ref ref, std::span<std::byte> dest) {
    require(dest.size() <= page.size() && dest.size() <= max_hash_mapping_size * 4);
    if ((ref.value() & 1U) != 0) {
      return false;
    }
    std::memcpy(dest.data(), page.data(), dest.size());
    return true;
  };
  for (; size >= sizeof(ctrl_request); data += sizeof(ctrl_request), size -= sizeof(ctrl_request)) {
    ctrl_request req;
    std::memcpy(&req, data, sizeof(req));
    const ctrl_response rsp = handler.handle(req, reader);
    require(rsp.id == req.id && rsp.type == req.type && rsp.status <= ctrl_status::buffer_overflow);
    const hash_config& cfg = handler.config();
    require(cfg.mapping_size <= max_hash_mapping_size);
    require(std::all_of(cfg.mapping.begin(), cfg.mapping.end(),
                        [&](std::uint32_t q) { return q < num_queues; }));
    require(cfg.select_queue(req.data[0], num_queues) < num_queues);
  }
  return 0;
}
