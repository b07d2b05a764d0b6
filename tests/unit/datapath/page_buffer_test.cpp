// page_buffer: the data path's packet buffers, anonymous mappings owned
// by one tx_path / rx_path each (neither copied nor moved).

#include "page_buffer.hpp"

#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstddef>
#include <limits>
#include <new>
#include <span>

namespace unetback::datapath {
namespace {

constexpr std::size_t one_mib = 1 << 20;

/// Whether [p, p + len) is mapped in this process (msync: ENOMEM if not).
bool mapped(const std::byte* p, std::size_t len) {
  // NOLINTNEXTLINE(cppcoreguidelines-pro-type-const-cast): msync(2) takes void*, writes nothing
  return ::msync(const_cast<std::byte*>(p), len, MS_ASYNC) == 0;
}

// A queue's buffer must never show bytes it did not write (another guest's
// frames, had it come from the heap).
TEST(PageBuffer, StartsZeroedAndIsWritable) {
  page_buffer b(one_mib);
  ASSERT_EQ(b.size(), one_mib);
  const std::span<std::byte> bytes(b);
  EXPECT_TRUE(
      std::all_of(bytes.begin(), bytes.end(), [](std::byte x) { return x == std::byte{0}; }));
  bytes.front() = std::byte{0x5a};
  bytes.back() = std::byte{0xa5};
  EXPECT_EQ(b.data()[0], std::byte{0x5a});
  EXPECT_EQ(b.data()[one_mib - 1], std::byte{0xa5});
}

TEST(PageBuffer, IsUnmappedWhenDestroyed) {
  const std::byte* where = nullptr;
  {
    const page_buffer b(one_mib);
    where = b.data();
    ASSERT_TRUE(mapped(where, one_mib));
  }
  const bool still_mapped = mapped(where, one_mib);
  const int error = errno;
  EXPECT_FALSE(still_mapped);
  EXPECT_EQ(error, ENOMEM);
}

TEST(PageBuffer, ASizeTheKernelRefusesThrowsBadAlloc) {
  EXPECT_THROW(page_buffer(std::numeric_limits<std::size_t>::max() / 2), std::bad_alloc);
}

}  // namespace
}  // namespace unetback::datapath
