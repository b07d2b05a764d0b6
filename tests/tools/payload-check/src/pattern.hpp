#pragma once
// The payload every payload-check mode sends and expects: a counter-based
// pseudo-random byte stream (splitmix64 of seed and 8-byte block index), so
// any offset can be regenerated independently, plus the FNV-1a 64-bit
// checksum both ends print and the seeded size generator for writes/reads.

#include <cstddef>
#include <cstdint>
#include <span>

namespace unetback::payload_check {

/// The byte stream of one seed: byte i is byte (i % 8) of splitmix64(seed + i / 8).
class pattern {
 public:
  explicit pattern(std::uint64_t seed) : seed_(seed) {}
  /// Fills `out` with the stream's bytes starting at `offset`.
  void fill(std::uint64_t offset, std::span<std::uint8_t> out) const;

 private:
  std::uint64_t seed_;
};

/// FNV-1a, 64 bits, over the stream's 8-byte little-endian words (a last
/// partial word zero-padded): FNV-1a's step applied per word, so the checksum
/// keeps up with the transfer. Independent of how the stream is split.
class fnv1a64 {
 public:
  void update(std::span<const std::uint8_t> bytes);
  /// The checksum of everything passed to update() so far.
  [[nodiscard]] std::uint64_t value() const;

 private:
  void mix(std::uint64_t word) {
    hash_ ^= word;
    hash_ *= 0x100000001b3ULL;
  }
  std::uint64_t hash_ = 0xcbf29ce484222325ULL;
  std::uint8_t partial_[8] = {};
  std::size_t partial_len_ = 0;
};

/// Sizes uniformly drawn from [1, max] by a seeded xorshift64* generator
/// (the sender's write sizes, the receiver's read sizes, datagram sizes).
class size_source {
 public:
  size_source(std::uint64_t seed, std::size_t max);
  [[nodiscard]] std::size_t next();

 private:
  std::uint64_t state_;
  std::size_t max_;
};

/// splitmix64: the block function of `pattern` (exposed for tests/derivations).
[[nodiscard]] std::uint64_t splitmix64(std::uint64_t x);

}  // namespace unetback::payload_check
