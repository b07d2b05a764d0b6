#pragma once
// The direct path's hand-off (docs/direct-path.md, stage a): a bounded
// single-producer, single-consumer queue of frames from one queue of vif A to
// one queue of vif B. A's worker pushes a frame it has already copied out of
// A's grants and validated (vnet header + Ethernet frame, gathered from iovecs
// as a TAP write takes them); B's worker pops it into its RX buffer as it
// would read it from its TAP. Records of any length share one byte ring that
// is allocated once: no allocation and no lock per frame.
//
// Waking the consumer: when a pop finds the ring empty it arms the ring; the
// next push that finds it armed disarms it and tells its caller to ring the
// consumer's doorbell (an eventfd the consumer's worker polls); a new ring's
// first push does too. Both sides use sequentially consistent operations on
// the arm and the producer index, so either the consumer's re-check sees the
// new frame or the producer sees the arm: a frame is never left waiting for a
// doorbell nobody rings.

#include <sys/uio.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>

namespace unetback::direct {

/// What a push did.
enum class push_result : std::uint8_t {
  pushed,       ///< queued; the consumer is awake (or will look again)
  pushed_wake,  ///< queued; the consumer armed the ring: ring its doorbell
  full,         ///< no room: the frame was not queued (the caller drops it)
  refused,      ///< empty, or longer than the ring's max_record
};

class handoff_ring {
 public:
  /// A ring holding at least two records of `max_record` bytes in
  /// `capacity` bytes (rounded up to a power of two, at least that).
  /// Throws std::invalid_argument for a max_record of 0 or over 2^32-1.
  handoff_ring(std::size_t capacity, std::size_t max_record);

  handoff_ring(const handoff_ring&) = delete;
  handoff_ring& operator=(const handoff_ring&) = delete;

  /// Producer: queues the bytes of `iov`, in order, as one record (never an
  /// empty one: a pop of 0 bytes means an empty ring).
  [[nodiscard]] push_result push(std::span<const iovec> iov);
  /// Consumer: moves the oldest record into `out` and returns its length; 0
  /// when the ring is empty (the ring is then armed); -EMSGSIZE when `out` is
  /// too small (the record is dropped).
  [[nodiscard]] long pop(std::span<std::byte> out);

  [[nodiscard]] std::size_t capacity() const { return capacity_; }
  [[nodiscard]] std::size_t max_record() const { return max_record_; }

 private:
  /// Bytes a record of `len` takes: its header and the bytes, 8-aligned.
  [[nodiscard]] static std::size_t footprint(std::size_t len);
  void write_header(std::size_t off, std::uint32_t len, std::uint32_t kind);
  void copy_in(std::size_t off, std::span<const iovec> iov);

  std::size_t max_record_;  // (before capacity_, which is computed from it)
  std::size_t capacity_;
  std::unique_ptr<std::byte[]> bytes_;
  alignas(64) std::atomic<std::uint64_t> head_{0};  ///< consumer's position (bytes)
  alignas(64) std::atomic<std::uint64_t> tail_{0};  ///< producer's position (bytes)
  /// The consumer waits for a doorbell. A new ring is armed: its consumer has
  /// not looked at it yet, and may be asleep when the first frame comes.
  alignas(64) std::atomic<bool> armed_{true};
};

}  // namespace unetback::direct
