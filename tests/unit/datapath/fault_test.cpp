// The fault value: whose doing each source is, and what an operator reads.
#include "unetback/datapath/fault.hpp"

#include <gtest/gtest.h>

namespace unetback::datapath {
namespace {

TEST(Fault, TheRingsAreTheFrontendsTheTapTheHostsAThreadTheBackends) {
  EXPECT_EQ(kind_of(fault_source::tx_ring), fault_kind::frontend);
  EXPECT_EQ(kind_of(fault_source::rx_ring), fault_kind::frontend);
  EXPECT_EQ(kind_of(fault_source::control_ring), fault_kind::frontend);
  EXPECT_EQ(kind_of(fault_source::tap), fault_kind::host);
  EXPECT_EQ(kind_of(fault_source::thread), fault_kind::backend);
}

TEST(Fault, DescribeNamesTheQueueAndTheSource) {
  const fault tx{fault_source::tx_ring, "slot crosses a page boundary", queue_index{3}};
  EXPECT_EQ(tx.describe(), "queue 3: TX ring: slot crosses a page boundary");
  const fault ctrl{fault_source::control_ring, "producer index overflow", std::nullopt};
  EXPECT_EQ(ctrl.describe(), "control ring: producer index overflow");
  const fault thrown{fault_source::thread, "exception: bad_alloc", queue_index{0}};
  EXPECT_EQ(thrown.describe(), "queue 0: exception: bad_alloc");
}

}  // namespace
}  // namespace unetback::datapath
