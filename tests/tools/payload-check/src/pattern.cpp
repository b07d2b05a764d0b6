#include "pattern.hpp"

#include <algorithm>
#include <bit>
#include <cstring>

namespace unetback::payload_check {

std::uint64_t splitmix64(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30U)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27U)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31U);
}

void pattern::fill(std::uint64_t offset, std::span<std::uint8_t> out) const {
  std::size_t done = 0;
  // Whole aligned blocks: one splitmix64 per 8 bytes, stored little-endian.
  if (offset % 8 == 0) {
    for (; out.size() - done >= 8; done += 8) {
      std::uint64_t block = splitmix64(seed_ + (offset + done) / 8);
      if constexpr (std::endian::native == std::endian::big) {
        block = __builtin_bswap64(block);
      }
      std::memcpy(out.data() + done, &block, 8);
    }
  }
  while (done < out.size()) {
    const std::uint64_t pos = offset + done;
    const std::uint64_t block = splitmix64(seed_ + pos / 8);
    std::uint8_t bytes[8];
    for (unsigned i = 0; i < 8; ++i) {
      bytes[i] = static_cast<std::uint8_t>(block >> (8U * i));
    }
    const std::size_t skip = static_cast<std::size_t>(pos % 8);
    const std::size_t n = std::min<std::size_t>(8 - skip, out.size() - done);
    std::memcpy(out.data() + done, bytes + skip, n);
    done += n;
  }
}

namespace {

std::uint64_t load_le(const std::uint8_t* p) {
  std::uint64_t v = 0;
  for (unsigned i = 0; i < 8; ++i) {
    v |= std::uint64_t{p[i]} << (8U * i);
  }
  return v;
}

}  // namespace

void fnv1a64::update(std::span<const std::uint8_t> bytes) {
  std::size_t i = 0;
  while (partial_len_ > 0 && partial_len_ < 8 && i < bytes.size()) {
    partial_[partial_len_++] = bytes[i++];
  }
  if (partial_len_ == 8) {
    mix(load_le(partial_));
    partial_len_ = 0;
  }
  for (; bytes.size() - i >= 8; i += 8) {
    mix(load_le(bytes.data() + i));
  }
  for (; i < bytes.size(); ++i) {
    partial_[partial_len_++] = bytes[i];
  }
}

std::uint64_t fnv1a64::value() const {
  if (partial_len_ == 0) {
    return hash_;
  }
  std::uint8_t last[8] = {};
  std::memcpy(last, partial_, partial_len_);
  fnv1a64 copy = *this;
  copy.mix(load_le(last));
  return copy.hash_;
}

size_source::size_source(std::uint64_t seed, std::size_t max)
    : state_(splitmix64(seed) | 1U), max_(std::max<std::size_t>(max, 1)) {}

std::size_t size_source::next() {
  state_ ^= state_ >> 12U;
  state_ ^= state_ << 25U;
  state_ ^= state_ >> 27U;
  const std::uint64_t r = state_ * 0x2545f4914f6cdd1dULL;
  return 1 + static_cast<std::size_t>(r % max_);
}

}  // namespace unetback::payload_check
