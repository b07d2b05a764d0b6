// The backend validates a guest's memory file before trusting any of it.
#include <fcntl.h>
#include <unistd.h>

#include <fstream>

#include "sim_fixture.hpp"
#include "unetback/sim/guest_memory.hpp"

namespace unetback::test {
namespace {

class GuestMemoryHeader : public ::testing::Test {
 protected:
  GuestMemoryHeader() {
    h_.magic = sim::layout_magic;
    h_.version = sim::layout_version;
    h_.header_size = sizeof(sim::file_header);
    h_.domid = 5;
    h_.grant_count = 16;
    h_.port_count = 8;
    h_.map_record_count = 4;
    h_.page_count = 2;
    h_.grant_offset = 4096;
    h_.port_offset = 4096 + 16 * 8;
    h_.map_record_offset = h_.port_offset + 8 * 64;
    h_.page_offset = 8192;
    h_.file_size = 8192 + 2 * 4096;
  }
  std::error_code check() const { return sim::validate_header(h_, guest_id, size_); }
  sim::file_header h_{};
  std::uint64_t size_ = 8192 + 2 * 4096;
};

TEST_F(GuestMemoryHeader, WellFormedLayoutIsAccepted) {
  EXPECT_FALSE(check());
}

TEST_F(GuestMemoryHeader, WrongMagicOrVersionIsRejected) {
  h_.magic ^= 1;
  EXPECT_EQ(check(), std::errc::protocol_error);
  h_.magic ^= 1;
  h_.version = 99;
  EXPECT_EQ(check(), std::errc::protocol_error);
}

TEST_F(GuestMemoryHeader, AnotherDomainsFileIsRejected) {
  h_.domid = 6;
  EXPECT_EQ(check(), std::errc::no_such_process);
}

TEST_F(GuestMemoryHeader, SizeLieIsRejected) {
  h_.file_size = size_ + 4096;
  EXPECT_EQ(check(), std::errc::invalid_argument);
}

TEST_F(GuestMemoryHeader, PagesBeyondTheFileAreRejected) {
  h_.page_count = 3;
  EXPECT_EQ(check(), std::errc::invalid_argument);
  h_.page_count = 0xffffffff;
  EXPECT_EQ(check(), std::errc::invalid_argument);
}

TEST_F(GuestMemoryHeader, OverlappingOrMisalignedRegionsAreRejected) {
  h_.port_offset = 4096;  // on top of the grant table
  EXPECT_EQ(check(), std::errc::invalid_argument);
  h_.port_offset = 4096 + 16 * 8;
  h_.page_offset = 8192 + 8;
  EXPECT_EQ(check(), std::errc::invalid_argument);
  h_.page_offset = 0xfffffffffffff000ULL;
  EXPECT_EQ(check(), std::errc::invalid_argument);
}

TEST_F(GuestMemoryHeader, HugeCountsAreRejected) {
  h_.grant_count = sim::max_grant_count + 1;
  EXPECT_EQ(check(), std::errc::invalid_argument);
}

class GuestMemoryFile : public sim_fixture {};

TEST_F(GuestMemoryFile, PublishedDomainOpensWithItsGeneration) {
  std::error_code ec;
  auto m = sim::guest_memory::open(dir_, guest_id, ec);
  ASSERT_NE(m, nullptr) << ec.message();
  EXPECT_EQ(m->header().generation, guest_->generation());
  EXPECT_EQ(m->grant(128), nullptr);
  EXPECT_EQ(m->port(0), nullptr);
  EXPECT_EQ(m->page(64), nullptr);
  EXPECT_NE(m->page(63), nullptr);
}

TEST_F(GuestMemoryFile, UnsealedFileIsRefused) {
  // A plain file could be truncated under the backend's mappings (SIGBUS).
  const auto path = sim::domain_file_path(dir_, domid{6});
  {
    std::ofstream f(path, std::ios::binary);
    std::string zeros(4 * 4096, '\0');
    f.write(zeros.data(), static_cast<std::streamsize>(zeros.size()));
  }
  std::error_code ec;
  EXPECT_EQ(sim::guest_memory::open(dir_, domid{6}, ec), nullptr);
  EXPECT_EQ(ec, std::errc::operation_not_permitted);
}

TEST_F(GuestMemoryFile, SecondLiveOwnerOfADomainIsRefused) {
  EXPECT_THROW(sim::guest_domain{config()}, std::system_error);
}

}  // namespace
}  // namespace unetback::test
