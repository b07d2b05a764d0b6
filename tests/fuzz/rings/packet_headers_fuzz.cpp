// Fuzzes the L2-L4 header parser through its three users: the guest-TX vnet
// header builder, the TAP-RX vnet header interpreter, and the Toeplitz hash
// input builder. Input: one control byte, a 10-byte vnet header, the frame.

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "unetback/rings/toeplitz.hpp"
#include "unetback/rings/vnet_hdr.hpp"

namespace {

using namespace unetback::rings;  // NOLINT(google-build-using-namespace)

void require(bool ok) {
  if (!ok) {
    std::abort();
  }
}

void fuzz_tx(std::vector<std::byte> frame, std::uint8_t ctl) {
  const tx_offload off{(ctl & 1) != 0, (ctl & 2) != 0, static_cast<std::uint8_t>((ctl >> 2) & 3),
                       static_cast<std::uint16_t>(ctl << 3)};
  const auto r = guest_tx_to_vnet(frame, off);
  if (r && (r.value().hdr.flags & vnet_f_needs_csum) != 0) {
    const vnet_header& h = r.value().hdr;
    require(h.csum_start + static_cast<std::size_t>(h.csum_offset) + 2 <= frame.size());
    require(h.hdr_len <= frame.size());
  }
}

void fuzz_rx(std::vector<std::byte> frame, const vnet_header& h, std::uint8_t ctl) {
  const offload_features f{(ctl & 1) != 0, (ctl & 2) != 0, (ctl & 4) != 0, (ctl & 8) != 0,
                           (ctl & 16) != 0};
  const auto r = vnet_to_guest_rx(h, frame, f);
  require(!r || !r.value().csum_partial || r.value().csum_validated);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 12) {
    return 0;
  }
  const std::uint8_t ctl = data[0];
  vnet_header h{};
  std::memcpy(static_cast<void*>(&h), data + 1, 10);  // a 10-byte TAP header; num_buffers stays 0
  std::vector<std::byte> frame(size - 11);
  std::memcpy(frame.data(), data + 11, frame.size());
  fuzz_tx(frame, ctl);
  fuzz_rx(frame, h, ctl);
  const auto in = build_hash_input(frame, ctl & 0xFU);
  if (in) {
    require(in->length == 8 || in->length == 12 || in->length == 32 || in->length == 36);
    static constexpr std::array<std::uint8_t, 40> key{1, 2, 3};
    (void)toeplitz_hash(key, in->data());
  }
  return 0;
}
