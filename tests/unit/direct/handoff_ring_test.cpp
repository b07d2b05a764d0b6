// The direct path's frame hand-off between two workers (handoff_ring.hpp).

#include "unetback/direct/handoff_ring.hpp"

#include <gtest/gtest.h>

#include <array>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <semaphore>
#include <thread>
#include <vector>

namespace unetback::direct {
namespace {

/// A record of `len` bytes whose every byte says which record (`seq`) it is.
std::vector<std::byte> numbered_record(std::uint32_t seq, std::size_t len) {
  std::vector<std::byte> r(len);
  for (std::size_t i = 0; i < len; ++i) {
    r[i] = static_cast<std::byte>((std::size_t{seq} * 31 + i) & 0xFF);
  }
  if (len >= sizeof seq) {
    std::memcpy(r.data(), &seq, sizeof seq);
  }
  return r;
}

push_result push_record(handoff_ring& ring, std::vector<std::byte> r) {
  const std::array<iovec, 1> iov{iovec{r.data(), r.size()}};
  return ring.push(iov);
}

TEST(HandoffRing, GathersIovecsIntoOneRecordAndKeepsOrder) {
  handoff_ring ring(4096, 1600);
  std::array<std::byte, 12> hdr{};
  hdr.fill(std::byte{0x11});
  auto payload = numbered_record(7, 60);
  const std::array<iovec, 2> iov{iovec{hdr.data(), hdr.size()},
                                 iovec{payload.data(), payload.size()}};
  ASSERT_NE(ring.push(iov), push_result::full);
  const auto second = numbered_record(8, 100);
  ASSERT_NE(push_record(ring, second), push_result::full);

  std::array<std::byte, 1600> out{};
  ASSERT_EQ(ring.pop(out), 72);
  EXPECT_EQ(out[0], std::byte{0x11});
  EXPECT_EQ(out[11], std::byte{0x11});
  EXPECT_EQ(std::memcmp(out.data() + 12, payload.data(), payload.size()), 0);
  ASSERT_EQ(ring.pop(out), 100);
  EXPECT_EQ(std::memcmp(out.data(), second.data(), second.size()), 0);
  EXPECT_EQ(ring.pop(out), 0);
}

TEST(HandoffRing, ANewRingAndAnEmptyPopArmTheRingAndOnlyTheNextPushRingsTheDoorbell) {
  handoff_ring ring(4096, 256);
  const auto r = numbered_record(1, 64);
  // A new ring is armed (its consumer has not looked at it yet): the first push rings.
  EXPECT_EQ(push_record(ring, r), push_result::pushed_wake);
  EXPECT_EQ(push_record(ring, r), push_result::pushed);
  std::array<std::byte, 256> out{};
  ASSERT_EQ(ring.pop(out), 64);
  ASSERT_EQ(ring.pop(out), 64);
  EXPECT_EQ(ring.pop(out), 0);  // empty: armed
  EXPECT_EQ(push_record(ring, r), push_result::pushed_wake);
  EXPECT_EQ(push_record(ring, r), push_result::pushed);  // the consumer is awake now
}

TEST(HandoffRing, RefusesWhatDoesNotFitAndLosesNothingQueued) {
  handoff_ring ring(1024, 200);
  EXPECT_EQ(ring.capacity(), 1024u);
  std::uint32_t pushed = 0;
  while (push_record(ring, numbered_record(pushed, 200)) != push_result::full) {
    ++pushed;
    ASSERT_LT(pushed, 100u);
  }
  EXPECT_EQ(pushed, 4u);  // 4 x 208 bytes in 1024
  EXPECT_EQ(push_record(ring, numbered_record(99, 201)), push_result::refused);
  EXPECT_EQ(push_record(ring, numbered_record(99, 0)), push_result::refused);
  std::array<std::byte, 200> out{};
  for (std::uint32_t i = 0; i < pushed; ++i) {
    ASSERT_EQ(ring.pop(out), 200);
    std::uint32_t seq = 0;
    std::memcpy(&seq, out.data(), sizeof seq);
    EXPECT_EQ(seq, i);
  }
  EXPECT_EQ(ring.pop(out), 0);
}

TEST(HandoffRing, RecordsOfEveryLengthSurviveWrappingAroundTheRing) {
  handoff_ring ring(2048, 700);
  std::array<std::byte, 700> out{};
  std::uint32_t next_in = 0;
  std::uint32_t next_out = 0;
  for (int step = 0; step < 5000; ++step) {
    const std::size_t len = 1 + (next_in * 37) % 700;
    const auto r = numbered_record(next_in, len);
    if (push_record(ring, r) != push_result::full) {
      ++next_in;
    }
    if (step % 3 != 0) {
      continue;  // the consumer lags: the ring fills and wraps
    }
    const long n = ring.pop(out);
    if (n == 0) {
      continue;
    }
    const auto expected = numbered_record(next_out, 1 + (next_out * 37) % 700);
    ASSERT_EQ(n, static_cast<long>(expected.size())) << "record " << next_out;
    ASSERT_EQ(std::memcmp(out.data(), expected.data(), expected.size()), 0) << next_out;
    ++next_out;
  }
  EXPECT_GT(next_out, 1000u);
}

TEST(HandoffRing, ARecordLongerThanTheConsumersBufferIsDroppedAlone) {
  handoff_ring ring(4096, 1000);
  ASSERT_NE(push_record(ring, numbered_record(1, 900)), push_result::full);
  ASSERT_NE(push_record(ring, numbered_record(2, 50)), push_result::full);
  std::array<std::byte, 100> small{};
  EXPECT_EQ(ring.pop(small), -EMSGSIZE);
  ASSERT_EQ(ring.pop(small), 50);
  std::uint32_t seq = 0;
  std::memcpy(&seq, small.data(), sizeof seq);
  EXPECT_EQ(seq, 2u);
}

TEST(HandoffRing, RejectsAMaximumRecordOfZeroOrBeyondItsLengthField) {
  EXPECT_THROW(handoff_ring(4096, 0), std::invalid_argument);
  // Refused before anything is allocated (8 GiB would be).
  EXPECT_THROW(handoff_ring(4096, std::size_t{1} << 32), std::invalid_argument);
}

// Two threads, as two workers: the consumer sleeps whenever the ring is empty
// and wakes only on a doorbell the producer rang (pushed_wake). A lost wake-up
// shows as a consumer that times out; a torn record as a content mismatch.
TEST(HandoffRing, ProducerAndConsumerThreadsLoseNeitherFramesNorWakeUps) {
  constexpr std::uint32_t frames = 200000;
  handoff_ring ring(16384, 1514);
  std::counting_semaphore<> doorbell(0);
  bool lost_wakeup = false;
  std::atomic<bool> consumer_gone{false};
  std::thread consumer([&] {
    // Set however the consumer leaves (a failed ASSERT returns early), so the
    // producer never waits on a full ring for a consumer that is gone.
    struct gone_guard {
      std::atomic<bool>& gone;
      ~gone_guard() { gone.store(true); }
    } guard{consumer_gone};
    std::array<std::byte, 1514> out{};
    for (std::uint32_t seq = 0; seq < frames;) {
      const long n = ring.pop(out);
      if (n == 0) {
        if (!doorbell.try_acquire_for(std::chrono::seconds(10))) {
          lost_wakeup = true;
          return;
        }
        continue;
      }
      const auto expected = numbered_record(seq, 60 + seq % 1455);
      ASSERT_EQ(n, static_cast<long>(expected.size())) << seq;
      ASSERT_EQ(std::memcmp(out.data(), expected.data(), expected.size()), 0) << seq;
      ++seq;
    }
  });
  for (std::uint32_t seq = 0; seq < frames && !consumer_gone.load();) {
    switch (push_record(ring, numbered_record(seq, 60 + seq % 1455))) {
      case push_result::pushed_wake:
        doorbell.release();
        [[fallthrough]];
      case push_result::pushed:
        ++seq;
        break;
      default:
        std::this_thread::yield();  // full: the consumer catches up
    }
  }
  consumer.join();
  EXPECT_FALSE(lost_wakeup);
}

}  // namespace
}  // namespace unetback::direct
