#include "unetback/direct/handoff_ring.hpp"

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cstring>
#include <limits>
#include <stdexcept>

namespace unetback::direct {
namespace {

/// A record's header: its length and kind, 8 bytes, before its bytes.
struct record_header {
  std::uint32_t len = 0;
  std::uint32_t kind = 0;
};
static_assert(sizeof(record_header) == 8);

constexpr std::uint32_t kind_frame = 0;
/// The rest of the ring up to its end is unused: the record is at offset 0.
constexpr std::uint32_t kind_pad = 1;

}  // namespace

std::size_t handoff_ring::footprint(std::size_t len) {
  return (sizeof(record_header) + len + 7) & ~std::size_t{7};
}

namespace {

/// A record's length is stored in 32 bits.
std::size_t checked_max_record(std::size_t max_record) {
  if (max_record == 0 || max_record > std::numeric_limits<std::uint32_t>::max()) {
    throw std::invalid_argument("handoff_ring: max_record must be 1 to 2^32-1 bytes");
  }
  return max_record;
}

}  // namespace

handoff_ring::handoff_ring(std::size_t capacity, std::size_t max_record)
    : max_record_(checked_max_record(max_record)),
      capacity_(std::bit_ceil(std::max(capacity, 2 * footprint(max_record_)))),
      bytes_(std::make_unique_for_overwrite<std::byte[]>(capacity_)) {}

void handoff_ring::write_header(std::size_t off, std::uint32_t len, std::uint32_t kind) {
  const record_header h{len, kind};
  std::memcpy(bytes_.get() + off, &h, sizeof h);
}

void handoff_ring::copy_in(std::size_t off, std::span<const iovec> iov) {
  for (const iovec& v : iov) {
    std::memcpy(bytes_.get() + off, v.iov_base, v.iov_len);
    off += v.iov_len;
  }
}

push_result handoff_ring::push(std::span<const iovec> iov) {
  std::size_t len = 0;
  for (const iovec& v : iov) {
    len += v.iov_len;
  }
  if (len == 0 || len > max_record_) {
    return push_result::refused;
  }
  const std::size_t need = footprint(len);
  const std::uint64_t tail = tail_.load(std::memory_order_relaxed);  // ours alone
  const std::uint64_t head = head_.load(std::memory_order_acquire);
  const std::size_t off = tail & (capacity_ - 1);
  // A record never wraps: one that would is placed at offset 0 after a pad.
  const std::size_t pad = off + need > capacity_ ? capacity_ - off : 0;
  if (capacity_ - (tail - head) < pad + need) {
    return push_result::full;
  }
  if (pad != 0) {
    write_header(off, 0, kind_pad);
  }
  const std::size_t at = pad != 0 ? 0 : off;
  write_header(at, static_cast<std::uint32_t>(len), kind_frame);
  copy_in(at + sizeof(record_header), iov);
  tail_.store(tail + pad + need, std::memory_order_seq_cst);
  if (armed_.load(std::memory_order_seq_cst) && armed_.exchange(false, std::memory_order_seq_cst)) {
    return push_result::pushed_wake;
  }
  return push_result::pushed;
}

long handoff_ring::pop(std::span<std::byte> out) {
  std::uint64_t head = head_.load(std::memory_order_relaxed);  // ours alone
  if (tail_.load(std::memory_order_acquire) == head) {
    armed_.store(true, std::memory_order_seq_cst);
    if (tail_.load(std::memory_order_seq_cst) == head) {
      return 0;  // the next push rings the doorbell
    }
    armed_.store(false, std::memory_order_relaxed);  // we look again before we sleep
  }
  std::size_t off = head & (capacity_ - 1);
  record_header h;
  std::memcpy(&h, bytes_.get() + off, sizeof h);
  if (h.kind == kind_pad) {
    head += capacity_ - off;
    off = 0;
    std::memcpy(&h, bytes_.get(), sizeof h);
  }
  const std::uint64_t next = head + footprint(h.len);
  if (h.len > out.size()) {
    head_.store(next, std::memory_order_release);
    return -EMSGSIZE;
  }
  std::memcpy(out.data(), bytes_.get() + off + sizeof h, h.len);
  head_.store(next, std::memory_order_release);
  return static_cast<long>(h.len);
}

}  // namespace unetback::direct
