// The fake platform the data-path tests and the queue fuzzer run on refuses
// what Xen and the sim refuse: a grant of another domain, a write through a
// read-only grant, a port of another domain. Without that, a data path that
// named the wrong domain in a grant-copy segment would pass every test.
#include "unetback/test_support/fake_platform.hpp"

#include <gtest/gtest.h>
#include <xen/grant_table.h>

#include <array>
#include <cerrno>

namespace unetback::test_support {
namespace {

class FakePlatform : public ::testing::Test {
 protected:
  FakePlatform() : ref_(mem_.grant_page()), grants_(mem_) {}

  /// One segment copying 16 bytes from our buffer into the grant, as `guest`.
  platform::grant_copy_segment to_guest(domid guest) {
    platform::grant_copy_segment s{};
    s.source.virt = buf_.data();
    s.dest.foreign.ref = ref_;
    s.dest.foreign.domid = guest.value();
    s.dest.foreign.offset = 0;
    s.len = 16;
    s.flags = GNTCOPY_dest_gref;
    return s;
  }
  std::int16_t copy(platform::grant_copy_segment s) {
    std::array batch{s};
    EXPECT_TRUE(grants_.copy(batch));
    return batch[0].status;
  }

  fake_guest_memory mem_;
  std::uint32_t ref_;
  fake_grant_table grants_;
  std::array<std::byte, 16> buf_{};
};

TEST_F(FakePlatform, CopiesOnlyForTheGuestThatOwnsTheGrant) {
  EXPECT_EQ(copy(to_guest(mem_.owner())), GNTST_okay);
  EXPECT_EQ(copy(to_guest(domid{0})), GNTST_bad_domain);
  auto from = to_guest(domid{8});  // not the owner (7)
  std::swap(from.source, from.dest);
  from.flags = GNTCOPY_source_gref;
  EXPECT_EQ(copy(from), GNTST_bad_domain);
}

TEST_F(FakePlatform, ReadOnlyGrantsAreNeitherWrittenNorMappedWritable) {
  mem_.make_readonly(ref_);
  EXPECT_EQ(copy(to_guest(mem_.owner())), GNTST_permission_denied);
  std::error_code ec;
  EXPECT_EQ(grants_.map(mem_.owner(), std::array{grant_ref{ref_}}, true, ec), nullptr);
  EXPECT_EQ(ec.value(), EPERM);
  EXPECT_NE(grants_.map(mem_.owner(), std::array{grant_ref{ref_}}, false, ec), nullptr);
}

TEST_F(FakePlatform, MapsAndBindsOnlyTheOwnersGrantsAndPorts) {
  std::error_code ec;
  EXPECT_EQ(grants_.map(domid{0}, std::array{grant_ref{ref_}}, false, ec), nullptr);
  EXPECT_EQ(ec.value(), ESRCH);
  fake_event_channel channel(mem_.owner());
  (void)channel.bind_interdomain(domid{0}, evtchn_port{3}, ec);
  EXPECT_EQ(ec.value(), ESRCH);
  (void)channel.bind_interdomain(mem_.owner(), evtchn_port{3}, ec);
  EXPECT_FALSE(ec);
}

}  // namespace
}  // namespace unetback::test_support
