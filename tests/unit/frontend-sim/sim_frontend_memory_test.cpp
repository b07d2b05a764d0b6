// sim_frontend_memory against the sim platform's backend grant table: a ring
// page is granted for life, a slot buffer only between grant_slot and
// end_slot, and nothing the backend still maps is freed.
#include <gtest/gtest.h>

#include <array>
#include <cstring>

#include "sim_domains.hpp"
#include "unetback/sim/netfront/sim_frontend_memory.hpp"
#include "unetback/sim/sim_platform.hpp"
#include "unetback/test_support/temp_dir.hpp"

namespace unetback::sim {
namespace {

using test_domains::backend;
using test_domains::guest;

class SimFrontendMemory : public ::testing::Test {
 protected:
  SimFrontendMemory() {
    domain_config c;
    c.sim_dir = dir_.path();
    c.id = guest;
    c.page_count = 16;
    c.grant_count = 32;
    dom_ = std::make_unique<guest_domain>(c);
    memory_ = std::make_unique<sim_frontend_memory>(*dom_);
    platform_ = std::make_unique<sim_platform>(dir_.path(), backend);
    gt_ = platform_->open_grant_table();
  }
  std::unique_ptr<platform::grant_mapping> map(grant_ref ref, bool writable) {
    std::error_code ec;
    return gt_->map(guest, std::array{ref}, writable, ec);
  }

  test_support::temp_dir dir_{"unbfm-"};
  std::unique_ptr<guest_domain> dom_;
  std::unique_ptr<sim_frontend_memory> memory_;
  std::unique_ptr<sim_platform> platform_;
  std::unique_ptr<platform::grant_table> gt_;
};

TEST_F(SimFrontendMemory, ASharedPageIsTheBackendsAtOnceWithTheGuestsBytes) {
  const shared_page p = memory_->share_page(backend, grant_mode::read_write);
  std::memcpy(memory_->memory(p).data(), "ring", 4);
  const auto m = map(p.ref, true);
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(std::memcmp(m->data(), "ring", 4), 0);
}

TEST_F(SimFrontendMemory, ASlotIsGrantedOnlyBetweenGrantSlotAndEndSlot) {
  const shared_page p = memory_->claim_slot(backend, grant_mode::read_only);
  EXPECT_EQ(map(p.ref, false), nullptr) << "claimed, not granted yet";
  memory_->grant_slot(p);
  EXPECT_EQ(map(p.ref, true), nullptr) << "a read-only slot mapped writable";
  EXPECT_NE(map(p.ref, false), nullptr);
  EXPECT_FALSE(memory_->end_slot(p));
  EXPECT_EQ(map(p.ref, false), nullptr) << "still granted after end_slot";
  memory_->grant_slot(p);
  EXPECT_NE(map(p.ref, false), nullptr) << "the same ref is granted again";
}

TEST_F(SimFrontendMemory, WhatTheBackendStillMapsIsNeitherEndedNorReleased) {
  const shared_page slot = memory_->claim_slot(backend, grant_mode::read_write);
  memory_->grant_slot(slot);
  const shared_page ring = memory_->share_page(backend, grant_mode::read_write);
  auto slot_map = map(slot.ref, true);
  auto ring_map = map(ring.ref, true);
  ASSERT_TRUE(slot_map && ring_map);
  EXPECT_EQ(memory_->end_slot(slot), std::errc::device_or_resource_busy);
  EXPECT_EQ(memory_->release(ring), std::errc::device_or_resource_busy);
  slot_map.reset();
  ring_map.reset();
  EXPECT_FALSE(memory_->release(slot));
  EXPECT_FALSE(memory_->release(ring));
  EXPECT_EQ(map(ring.ref, false), nullptr);
}

}  // namespace
}  // namespace unetback::sim
