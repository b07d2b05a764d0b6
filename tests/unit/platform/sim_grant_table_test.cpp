// The sim grant table enforces Xen's rules against a (possibly hostile) guest.
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstring>
#include <thread>

#include "sim_fixture.hpp"
#include "unetback/sim/guest_memory.hpp"

namespace unetback::test {
namespace {

using sim::grant_mode;

platform::grant_copy_segment from_guest(grant_ref ref, std::uint16_t offset, void* to,
                                        std::uint16_t len, domid d = guest_id) {
  platform::grant_copy_segment s{};
  s.source.foreign.ref = ref.value();
  s.source.foreign.offset = offset;
  s.source.foreign.domid = d.value();
  s.dest.virt = to;
  s.len = len;
  s.flags = GNTCOPY_source_gref;
  s.status = 1;
  return s;
}

platform::grant_copy_segment to_guest(const void* from, grant_ref ref, std::uint16_t offset,
                                      std::uint16_t len) {
  platform::grant_copy_segment s{};
  s.source.virt = const_cast<void*>(from);
  s.dest.foreign.ref = ref.value();
  s.dest.foreign.offset = offset;
  s.dest.foreign.domid = guest_id.value();
  s.len = len;
  s.flags = GNTCOPY_dest_gref;
  s.status = 1;
  return s;
}

class SimGrantTable : public sim_fixture {
 protected:
  std::uint32_t page_with(char fill) {
    const std::uint32_t p = guest_->alloc_page();
    std::memset(guest_->page(p).data(), fill, sim::page_size);
    return p;
  }
  std::int16_t copy_status(platform::grant_copy_segment seg) {
    auto gt = platform_->open_grant_table();
    EXPECT_TRUE(gt->copy(std::span(&seg, 1)));
    return seg.status;
  }
};

TEST_F(SimGrantTable, GuestTransmitCopiesOutOfItsGrantedPage) {
  const auto ref = guest_->grant_access(page_with('a'), backend_id, grant_mode::read_only);
  std::memcpy(guest_->page(0).data() + 100, "hello", 5);
  std::array<char, 5> buf{};
  auto gt = platform_->open_grant_table();
  auto seg = from_guest(ref, 100, buf.data(), 5);
  ASSERT_TRUE(gt->copy(std::span(&seg, 1)));
  EXPECT_EQ(seg.status, GNTST_okay);
  EXPECT_EQ(std::string(buf.data(), 5), "hello");
}

TEST_F(SimGrantTable, GuestReceiveCopiesIntoItsWritableGrant) {
  const std::uint32_t p = page_with(0);
  const auto ref = guest_->grant_access(p, backend_id, grant_mode::read_write);
  const char data[] = "frame";
  EXPECT_EQ(copy_status(to_guest(data, ref, 4000, 5)), GNTST_okay);
  EXPECT_EQ(std::memcmp(guest_->page(p).data() + 4000, "frame", 5), 0);
}

TEST_F(SimGrantTable, GrantMadeOutToAnotherDomainIsDenied) {
  const auto ref = guest_->grant_access(page_with('x'), domid{7}, grant_mode::read_write);
  char buf[4];
  EXPECT_EQ(copy_status(from_guest(ref, 0, buf, 4)), GNTST_permission_denied);
  std::error_code ec;
  auto gt = platform_->open_grant_table();
  const std::array refs{ref};
  EXPECT_EQ(gt->map(guest_id, refs, false, ec), nullptr);
  EXPECT_EQ(ec, std::errc::operation_not_permitted);
}

TEST_F(SimGrantTable, ReadOnlyGrantCannotBeWritten) {
  const std::uint32_t p = page_with('r');
  const auto ref = guest_->grant_access(p, backend_id, grant_mode::read_only);
  const char data[] = "evil";
  EXPECT_EQ(copy_status(to_guest(data, ref, 0, 4)), GNTST_permission_denied);
  EXPECT_EQ(guest_->page(p)[0], std::byte{'r'});
  auto gt = platform_->open_grant_table();
  std::error_code ec;
  const std::array refs{ref};
  EXPECT_EQ(gt->map(guest_id, refs, true, ec), nullptr);
  EXPECT_EQ(ec, std::errc::operation_not_permitted);
  auto ro = gt->map(guest_id, refs, false, ec);
  ASSERT_NE(ro, nullptr) << ec.message();
  EXPECT_EQ(static_cast<const char*>(ro->data())[0], 'r');
}

TEST_F(SimGrantTable, RevokedGrantIsBadGntref) {
  const auto ref = guest_->grant_access(page_with('v'), backend_id, grant_mode::read_only);
  char buf[4];
  EXPECT_EQ(copy_status(from_guest(ref, 0, buf, 4)), GNTST_okay);
  guest_->grant_access_ref(ref, 0, backend_id, grant_mode::read_only);
  ASSERT_FALSE(guest_->end_access_ref(ref));
  EXPECT_EQ(copy_status(from_guest(ref, 0, buf, 4)), GNTST_bad_gntref);
}

TEST_F(SimGrantTable, RefBeyondTheGrantTableIsBadGntref) {
  char buf[4];
  EXPECT_EQ(copy_status(from_guest(grant_ref{128}, 0, buf, 4)), GNTST_bad_gntref);
  EXPECT_EQ(copy_status(from_guest(grant_ref{0xffffffff}, 0, buf, 4)), GNTST_bad_gntref);
  auto gt = platform_->open_grant_table();
  std::error_code ec;
  const std::array refs{grant_ref{500}};
  EXPECT_EQ(gt->map(guest_id, refs, false, ec), nullptr);
  EXPECT_EQ(ec, std::errc::no_such_file_or_directory);
}

TEST_F(SimGrantTable, FrameOutsideGuestMemoryIsBadCopyArg) {
  const auto ref = guest_->claim_ref();
  auto& e = guest_->raw_grant(ref.value());
  sim::shared(e.frame).store(guest_->page_count());
  sim::shared(e.flags_domid).store(sim::grant_word(GTF_permit_access, backend_id.value()));
  char buf[4];
  EXPECT_EQ(copy_status(from_guest(ref, 0, buf, 4)), GNTST_bad_copy_arg);
}

TEST_F(SimGrantTable, PageCrossingSegmentFailsAloneInItsBatch) {
  const auto ref = guest_->grant_access(page_with('p'), backend_id, grant_mode::read_only);
  std::array<char, 300> a{}, b{}, c{};
  std::array segs{from_guest(ref, 0, a.data(), 10), from_guest(ref, 4000, b.data(), 200),
                  from_guest(ref, 3996, c.data(), 100)};
  auto gt = platform_->open_grant_table();
  ASSERT_TRUE(gt->copy(segs));
  EXPECT_EQ(segs[0].status, GNTST_okay);
  EXPECT_EQ(segs[1].status, GNTST_bad_copy_arg);
  EXPECT_EQ(segs[2].status, GNTST_okay);
  EXPECT_EQ(a[9], 'p');
  EXPECT_EQ(b[0], '\0');
  EXPECT_EQ(c[99], 'p');
}

TEST_F(SimGrantTable, SegmentForAMissingDomainIsBadDomain) {
  char buf[4];
  EXPECT_EQ(copy_status(from_guest(grant_ref{8}, 0, buf, 4, domid{9})), GNTST_bad_domain);
  auto gt = platform_->open_grant_table();
  std::error_code ec;
  const std::array refs{grant_ref{8}};
  EXPECT_EQ(gt->map(domid{9}, refs, false, ec), nullptr);
  EXPECT_EQ(ec, std::errc::no_such_process);
}

TEST_F(SimGrantTable, ExitedGuestBecomesBadDomain) {
  const auto ref = guest_->grant_access(page_with('z'), backend_id, grant_mode::read_only);
  auto gt = platform_->open_grant_table();
  char buf[4];
  auto seg = from_guest(ref, 0, buf, 4);
  ASSERT_TRUE(gt->copy(std::span(&seg, 1)));
  ASSERT_EQ(seg.status, GNTST_okay);
  guest_.reset();
  std::this_thread::sleep_for(sim::domain_revalidate_interval * 2);
  ASSERT_TRUE(gt->copy(std::span(&seg, 1)));
  EXPECT_EQ(seg.status, GNTST_bad_domain);
}

TEST_F(SimGrantTable, MappedRingPagesCannotBeRevoked) {
  const std::uint32_t p0 = page_with('0');
  const std::uint32_t p1 = page_with('1');
  const std::array refs{guest_->grant_access(p0, backend_id, grant_mode::read_write),
                        guest_->grant_access(p1, backend_id, grant_mode::read_write)};
  auto gt = platform_->open_grant_table();
  std::error_code ec;
  auto m = gt->map(guest_id, refs, true, ec);
  ASSERT_NE(m, nullptr) << ec.message();
  ASSERT_EQ(m->page_count(), 2U);
  auto* bytes = static_cast<char*>(m->data());
  EXPECT_EQ(bytes[0], '0');
  EXPECT_EQ(bytes[sim::page_size], '1');
  bytes[5] = 'B';  // backend writes through the mapping, guest sees it
  EXPECT_EQ(guest_->page(p0)[5], std::byte{'B'});
  EXPECT_TRUE(guest_->in_use(refs[0]));
  EXPECT_EQ(guest_->end_access(refs[0]), std::errc::device_or_resource_busy);
  m.reset();
  EXPECT_FALSE(guest_->in_use(refs[0]));
  EXPECT_FALSE(guest_->end_access(refs[0]));
  EXPECT_FALSE(guest_->end_access(refs[1]));
}

TEST_F(SimGrantTable, MappingFailsAsAWholeWhenOneRefIsBad) {
  const auto good = guest_->grant_access(page_with('g'), backend_id, grant_mode::read_write);
  const std::array refs{good, grant_ref{3}};  // ref 3: reserved, never granted
  auto gt = platform_->open_grant_table();
  std::error_code ec;
  EXPECT_EQ(gt->map(guest_id, refs, true, ec), nullptr);
  EXPECT_TRUE(ec);
  EXPECT_FALSE(guest_->in_use(good));  // the first pin was undone
}

TEST_F(SimGrantTable, MapperThatDiedWithoutUnmappingIsReaped) {
  const auto ref = guest_->grant_access(page_with('d'), backend_id, grant_mode::read_write);
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    sim::sim_platform p(dir_, backend_id);
    auto gt = p.open_grant_table();
    std::error_code ec;
    const std::array refs{ref};
    auto m = gt->map(guest_id, refs, true, ec);
    ::_exit(m != nullptr ? 0 : 1);  // dies with the page still mapped
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  EXPECT_TRUE(guest_->in_use(ref));
  EXPECT_FALSE(guest_->end_access(ref));
}

// Daemon restart without reconnect: the successor maps the same ring page
// (Xen unmaps when the dead process's gntdev file closes; the sim keeps the
// dead holder's record until the guest reaps it) and sees what the dead
// backend wrote; when the successor unmaps, the guest can end access.
TEST_F(SimGrantTable, RingOfAMapperKilledWithoutUnmappingCanBeMappedAgain) {
  const std::uint32_t page = page_with('r');
  const auto ref = guest_->grant_access(page, backend_id, grant_mode::read_write);
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    sim::sim_platform p(dir_, backend_id);
    auto gt = p.open_grant_table();
    std::error_code ec;
    const std::array refs{ref};
    auto m = gt->map(guest_id, refs, true, ec);
    if (m != nullptr) {
      static_cast<char*>(m->data())[7] = 'D';  // the dead backend's last response
    }
    ::_exit(m != nullptr ? 0 : 1);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  auto gt = platform_->open_grant_table();
  std::error_code ec;
  const std::array refs{ref};
  auto m = gt->map(guest_id, refs, true, ec);
  ASSERT_NE(m, nullptr) << ec.message();
  EXPECT_EQ(static_cast<char*>(m->data())[7], 'D');
  EXPECT_EQ(guest_->end_access(ref), std::errc::device_or_resource_busy);  // we hold it
  m.reset();
  EXPECT_FALSE(guest_->end_access(ref));  // the dead record is reaped, ours is gone
}

}  // namespace
}  // namespace unetback::test
