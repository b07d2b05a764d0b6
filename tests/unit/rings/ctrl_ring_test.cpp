// The control-ring state machine: every check of docs/protocol.md §4.2 and
// §6.2 items 26-27, with a fake grant reader standing in for grant copies.

#include "unetback/rings/ctrl_ring.hpp"

#include <gtest/gtest.h>

#include <cstring>
#include <map>
#include <vector>

namespace unetback::rings {
namespace {

/// The frontend's granted pages, readable by ref; counts and sizes reads.
struct fake_grants {
  std::map<std::uint32_t, std::vector<std::byte>> pages;
  std::size_t reads = 0;
  std::size_t largest_read = 0;

  void put_u32s(std::uint32_t ref, const std::vector<std::uint32_t>& values) {
    std::vector<std::byte> page(4096);
    std::memcpy(page.data(), values.data(), values.size() * 4);
    pages[ref] = page;
  }
  void put_bytes(std::uint32_t ref, const std::vector<std::uint8_t>& values) {
    std::vector<std::byte> page(4096);
    std::memcpy(page.data(), values.data(), values.size());
    pages[ref] = page;
  }
  auto reader() {
    return [this](grant_ref ref, std::span<std::byte> dest) {
      ++reads;
      largest_read = std::max(largest_read, dest.size());
      const auto it = pages.find(ref.value());
      if (it == pages.end() || dest.size() > it->second.size()) {
        return false;
      }
      std::memcpy(dest.data(), it->second.data(), dest.size());
      return true;
    };
  }
};

ctrl_request req(std::uint16_t type, std::uint32_t d0 = 0, std::uint32_t d1 = 0,
                 std::uint32_t d2 = 0) {
  return make_ctrl_request(77, type, d0, d1, d2);
}

class CtrlRing : public ::testing::Test {
 protected:
  ctrl_response send(const ctrl_request& r) { return handler.handle(r, grants.reader()); }
  void enable_toeplitz() {
    ASSERT_EQ(
        send(req(XEN_NETIF_CTRL_TYPE_SET_HASH_ALGORITHM, XEN_NETIF_CTRL_HASH_ALGORITHM_TOEPLITZ))
            .status,
        ctrl_status::success);
  }
  void set_mapping_size(std::uint32_t n) {
    ASSERT_EQ(send(req(XEN_NETIF_CTRL_TYPE_SET_HASH_MAPPING_SIZE, n)).status, ctrl_status::success);
  }

  fake_grants grants;
  ctrl_handler handler{4};
};

TEST_F(CtrlRing, UnknownTypesAreNotSupportedAndEchoed) {
  for (std::uint16_t type : std::initializer_list<std::uint16_t>{0, 8, 9, 10, 11, 0xFFFF}) {
    const auto rsp = send(req(type, 1, 2, 3));
    EXPECT_EQ(rsp.status, ctrl_status::not_supported) << type;
    EXPECT_EQ(rsp.id, 77);
    EXPECT_EQ(rsp.type, type);
    EXPECT_EQ(rsp.data, 0U);
  }
  EXPECT_EQ(grants.reads, 0U);
}

TEST_F(CtrlRing, GetHashFlagsNeedsAnAlgorithm) {
  EXPECT_EQ(send(req(XEN_NETIF_CTRL_TYPE_GET_HASH_FLAGS)).status, ctrl_status::not_supported);
  enable_toeplitz();
  const auto rsp = send(req(XEN_NETIF_CTRL_TYPE_GET_HASH_FLAGS));
  EXPECT_EQ(rsp.status, ctrl_status::success);
  EXPECT_EQ(rsp.data, 0xFU);
}

TEST_F(CtrlRing, SetHashFlagsWithoutAlgorithmIsInvalid) {
  EXPECT_EQ(send(req(XEN_NETIF_CTRL_TYPE_SET_HASH_FLAGS, 1)).status,
            ctrl_status::invalid_parameter);
  EXPECT_EQ(handler.config().flags, 0U);
}

TEST_F(CtrlRing, SetHashFlagsWithUnknownBitsIsInvalid) {
  enable_toeplitz();
  EXPECT_EQ(send(req(XEN_NETIF_CTRL_TYPE_SET_HASH_FLAGS, 0x10)).status,
            ctrl_status::invalid_parameter);
  EXPECT_EQ(send(req(XEN_NETIF_CTRL_TYPE_SET_HASH_FLAGS, 0x3)).status, ctrl_status::success);
  EXPECT_EQ(handler.config().flags, 0x3U);
  EXPECT_TRUE(handler.config().hashing());
}

TEST_F(CtrlRing, UnknownHashAlgorithmIsInvalid) {
  EXPECT_EQ(send(req(XEN_NETIF_CTRL_TYPE_SET_HASH_ALGORITHM, 2)).status,
            ctrl_status::invalid_parameter);
  EXPECT_EQ(handler.config().algorithm, XEN_NETIF_CTRL_HASH_ALGORITHM_NONE);
}

TEST_F(CtrlRing, HashKeyLongerThanFortyBytesOverflows) {
  grants.put_bytes(9, std::vector<std::uint8_t>(41, 0xAA));
  EXPECT_EQ(send(req(XEN_NETIF_CTRL_TYPE_SET_HASH_KEY, 9, 41)).status,
            ctrl_status::buffer_overflow);
  EXPECT_EQ(send(req(XEN_NETIF_CTRL_TYPE_SET_HASH_KEY, 9, 0xFFFFFFFF)).status,
            ctrl_status::buffer_overflow);
  EXPECT_EQ(grants.reads, 0U);
}

TEST_F(CtrlRing, ShortHashKeyIsZeroPadded) {
  grants.put_bytes(9, std::vector<std::uint8_t>(40, 0xAA));
  ASSERT_EQ(send(req(XEN_NETIF_CTRL_TYPE_SET_HASH_KEY, 9, 40)).status, ctrl_status::success);
  grants.put_bytes(9, {1, 2, 3});
  ASSERT_EQ(send(req(XEN_NETIF_CTRL_TYPE_SET_HASH_KEY, 9, 3)).status, ctrl_status::success);
  EXPECT_EQ(handler.config().key[2], 3);
  EXPECT_EQ(handler.config().key[3], 0);  // the old key's octets are gone
  EXPECT_EQ(handler.config().key[39], 0);
  EXPECT_EQ(grants.largest_read, 40U);
}

TEST_F(CtrlRing, ZeroLengthHashKeyClearsKeyWithoutReading) {
  grants.put_bytes(9, std::vector<std::uint8_t>(40, 0xAA));
  ASSERT_EQ(send(req(XEN_NETIF_CTRL_TYPE_SET_HASH_KEY, 9, 40)).status, ctrl_status::success);
  const std::size_t reads = grants.reads;
  ASSERT_EQ(send(req(XEN_NETIF_CTRL_TYPE_SET_HASH_KEY, 12345, 0)).status, ctrl_status::success);
  EXPECT_EQ(grants.reads, reads);
  EXPECT_EQ(handler.config().key, (std::array<std::uint8_t, 40>{}));
}

TEST_F(CtrlRing, HashKeyCopyFailureKeepsOldKey) {
  grants.put_bytes(9, std::vector<std::uint8_t>(40, 0xAA));
  ASSERT_EQ(send(req(XEN_NETIF_CTRL_TYPE_SET_HASH_KEY, 9, 40)).status, ctrl_status::success);
  EXPECT_EQ(send(req(XEN_NETIF_CTRL_TYPE_SET_HASH_KEY, 404, 10)).status,
            ctrl_status::invalid_parameter);
  EXPECT_EQ(handler.config().key[0], 0xAA);
}

TEST_F(CtrlRing, MappingSizeQueryAnswersMaximum) {
  const auto rsp = send(req(XEN_NETIF_CTRL_TYPE_GET_HASH_MAPPING_SIZE));
  EXPECT_EQ(rsp.status, ctrl_status::success);
  EXPECT_EQ(rsp.data, 128U);
}

TEST_F(CtrlRing, MappingSizeAboveMaximumIsInvalid) {
  EXPECT_EQ(send(req(XEN_NETIF_CTRL_TYPE_SET_HASH_MAPPING_SIZE, 129)).status,
            ctrl_status::invalid_parameter);
  EXPECT_EQ(handler.config().mapping_size, 0U);
}

TEST_F(CtrlRing, MappingSizeResetsTableToZero) {
  set_mapping_size(8);
  grants.put_u32s(5, {3, 3, 3, 3, 3, 3, 3, 3});
  ASSERT_EQ(send(req(XEN_NETIF_CTRL_TYPE_SET_HASH_MAPPING, 5, 8, 0)).status, ctrl_status::success);
  set_mapping_size(4);
  EXPECT_EQ(handler.config().mapping[0], 0U);
  EXPECT_EQ(handler.config().mapping[7], 0U);
}

TEST_F(CtrlRing, HashMappingIsWrittenAtOffset) {
  set_mapping_size(8);
  grants.put_u32s(5, {1, 2, 3});
  ASSERT_EQ(send(req(XEN_NETIF_CTRL_TYPE_SET_HASH_MAPPING, 5, 3, 4)).status, ctrl_status::success);
  EXPECT_EQ(handler.config().mapping[3], 0U);
  EXPECT_EQ(handler.config().mapping[4], 1U);
  EXPECT_EQ(handler.config().mapping[6], 3U);
  EXPECT_EQ(grants.largest_read, 12U);
}

TEST_F(CtrlRing, HashMappingOffsetOverflowRejected) {
  set_mapping_size(128);
  grants.put_u32s(5, {1, 1});
  // offset + len wraps to 1 in u32: must not pass as "<= size" (XSA-270).
  EXPECT_EQ(send(req(XEN_NETIF_CTRL_TYPE_SET_HASH_MAPPING, 5, 2, 0xFFFFFFFF)).status,
            ctrl_status::invalid_parameter);
  EXPECT_EQ(send(req(XEN_NETIF_CTRL_TYPE_SET_HASH_MAPPING, 5, 0xFFFFFFFF, 2)).status,
            ctrl_status::invalid_parameter);
  EXPECT_EQ(grants.reads, 0U);
}

TEST_F(CtrlRing, HashMappingBeyondTableSizeRejected) {
  set_mapping_size(8);
  grants.put_u32s(5, {1, 1});
  EXPECT_EQ(send(req(XEN_NETIF_CTRL_TYPE_SET_HASH_MAPPING, 5, 2, 7)).status,
            ctrl_status::invalid_parameter);
  EXPECT_EQ(send(req(XEN_NETIF_CTRL_TYPE_SET_HASH_MAPPING, 5, 9, 0)).status,
            ctrl_status::invalid_parameter);
  EXPECT_EQ(grants.reads, 0U);
}

TEST_F(CtrlRing, HashMappingEntryNotBelowNumQueuesRejectsWholeTable) {
  set_mapping_size(4);
  grants.put_u32s(5, {1, 2, 3, 3});
  ASSERT_EQ(send(req(XEN_NETIF_CTRL_TYPE_SET_HASH_MAPPING, 5, 4, 0)).status, ctrl_status::success);
  grants.put_u32s(6, {0, 0, 0, 4});  // 4 queues: entry 4 is out of range
  EXPECT_EQ(send(req(XEN_NETIF_CTRL_TYPE_SET_HASH_MAPPING, 6, 4, 0)).status,
            ctrl_status::invalid_parameter);
  // Nothing of the bad table was committed (staging, XSA-270).
  EXPECT_EQ(handler.config().mapping[0], 1U);
  EXPECT_EQ(handler.config().mapping[3], 3U);
}

TEST_F(CtrlRing, HashMappingCopyFailureRejected) {
  set_mapping_size(4);
  EXPECT_EQ(send(req(XEN_NETIF_CTRL_TYPE_SET_HASH_MAPPING, 404, 4, 0)).status,
            ctrl_status::invalid_parameter);
}

TEST_F(CtrlRing, FailedRequestsLeaveGenerationUnchanged) {
  enable_toeplitz();
  const auto gen = handler.generation();
  (void)send(req(XEN_NETIF_CTRL_TYPE_SET_HASH_FLAGS, 0x100));
  (void)send(req(XEN_NETIF_CTRL_TYPE_SET_HASH_MAPPING_SIZE, 500));
  (void)send(req(0xFFFF));
  EXPECT_EQ(handler.generation(), gen);
  (void)send(req(XEN_NETIF_CTRL_TYPE_SET_HASH_FLAGS, 0x1));
  EXPECT_GT(handler.generation(), gen);
}

TEST(HashConfig, QueueSelectionUsesMappingOrModulo) {
  hash_config cfg;
  EXPECT_EQ(cfg.select_queue(10, 4), 2U);
  cfg.mapping_size = 3;
  cfg.mapping = {};
  cfg.mapping[1] = 3;
  EXPECT_EQ(cfg.select_queue(10, 4), 3U);  // 10 % 3 == 1
}

}  // namespace
}  // namespace unetback::rings
