// worker_io (issue #15, "fewer system calls per packet"): the TAP writes of a
// sweep, the event-channel unmask and the sleep, issued as system calls or
// through io_uring. Both ways must give the same frames in the same order,
// the same per-frame results (0 for a full port, never a lost frame) and the
// same readiness; io_uring must also keep a poll armed across sleeps that
// another fd ended, and write a staged unmask with the sleep.

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <array>
#include <cstring>
#include <vector>

#include "event_pump.hpp"
#include "unetback/datapath/socket_frame_port.hpp"
#include "worker_io.hpp"

namespace unetback::datapath::test {
namespace {

class WorkerIo : public ::testing::TestWithParam<bool> {
 protected:
  void SetUp() override {
    int sv[2];
    ASSERT_EQ(::socketpair(AF_UNIX, SOCK_SEQPACKET, 0, sv), 0);
    port_ = std::make_unique<socket_frame_port>(sv[0], 12);
    peer_ = sv[1];
  }
  void TearDown() override { ::close(peer_); }

  /// Stages a frame of `len` bytes, every byte `fill`, behind a header of 0x11.
  void stage(std::size_t len, std::byte fill) {
    frames_.emplace_back(len, fill);
    io_.stage_frame(*port_, hdr_, frames_.back());
  }
  /// The next frame on the peer's side (vnet header included), empty if none.
  std::vector<std::byte> peer_read() {
    std::vector<std::byte> buf(70000);
    const ssize_t n = ::recv(peer_, buf.data(), buf.size(), MSG_DONTWAIT);
    buf.resize(n > 0 ? static_cast<std::size_t>(n) : 0);
    return buf;
  }

  worker_io io_{GetParam(), "test-q0"};
  std::unique_ptr<socket_frame_port> port_;
  int peer_ = -1;
  std::array<std::byte, 12> hdr_ = [] {
    std::array<std::byte, 12> h{};
    h.fill(std::byte{0x11});
    return h;
  }();
  std::vector<std::vector<std::byte>> frames_;  // stable: reserve before staging
};

TEST_P(WorkerIo, UsesIoUringExactlyWhenAskedOnThisKernel) {
  stage(60, std::byte{1});
  (void)io_.flush_frames();
  EXPECT_EQ(io_.uring(), GetParam());  // this kernel has io_uring: no fallback
}

TEST_P(WorkerIo, StagedFramesAreWrittenInOrderWithTheirLengths) {
  frames_.reserve(3);
  stage(60, std::byte{1});
  stage(1500, std::byte{2});
  stage(9000, std::byte{3});
  const auto results = io_.flush_frames();
  ASSERT_EQ(results.size(), 3U);
  EXPECT_EQ(results[0], 72);
  EXPECT_EQ(results[1], 1512);
  EXPECT_EQ(results[2], 9012);
  EXPECT_EQ(io_.staged_frames(), 0U);
  for (std::byte fill : {std::byte{1}, std::byte{2}, std::byte{3}}) {
    const auto got = peer_read();
    ASSERT_GT(got.size(), 12U);
    EXPECT_EQ(got[0], std::byte{0x11});
    EXPECT_EQ(got[12], fill);
    EXPECT_EQ(got.back(), fill);
  }
  EXPECT_TRUE(peer_read().empty());
}

TEST_P(WorkerIo, AFullPortReadsAsZeroForTheFramesItRefused) {
  const int small = 4096;
  ASSERT_EQ(::setsockopt(port_->fd(), SOL_SOCKET, SO_SNDBUF, &small, sizeof(small)), 0);
  frames_.reserve(64);
  for (int i = 0; i < 64; ++i) {
    stage(4000, std::byte{static_cast<unsigned char>(i)});
  }
  const auto results = io_.flush_frames();
  ASSERT_EQ(results.size(), 64U);
  std::size_t written = 0;
  for (const long r : results) {
    EXPECT_TRUE(r == 0 || r == 4012) << r;  // full: 0, never an error
    written += r > 0 ? 1 : 0;
  }
  EXPECT_GT(written, 0U);
  EXPECT_LT(written, 64U);
  std::size_t read = 0;
  while (!peer_read().empty()) {
    ++read;
  }
  EXPECT_EQ(read, written);  // what was reported written arrived
}

TEST_P(WorkerIo, SleepWritesStagedFramesAndReportsTheirResults) {
  const int ev = ::eventfd(1, EFD_NONBLOCK | EFD_CLOEXEC);  // readable: the sleep ends
  frames_.reserve(2);
  stage(100, std::byte{7});
  stage(200, std::byte{8});
  wait_set set;
  set.timeout_ms = 1000;
  const std::size_t at = set.add(ev);
  const wait_outcome out = io_.wait(set);
  EXPECT_TRUE(out.ready[at]);
  ASSERT_EQ(io_.frame_results().size(), 2U);
  EXPECT_EQ(io_.frame_results()[0], 112);
  EXPECT_EQ(io_.frame_results()[1], 212);
  EXPECT_EQ(peer_read().size(), 112U);
  EXPECT_EQ(peer_read().size(), 212U);
  ::close(ev);
}

TEST_P(WorkerIo, SleepReportsOnlyTheReadyFdAndTimesOut) {
  const int quiet = ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  const int loud = ::eventfd(1, EFD_NONBLOCK | EFD_CLOEXEC);
  wait_set set;
  set.timeout_ms = 1000;
  const std::size_t q = set.add(quiet);
  const std::size_t l = set.add(loud);
  wait_outcome out = io_.wait(set);
  EXPECT_FALSE(out.ready[q]);
  EXPECT_TRUE(out.ready[l]);

  std::uint64_t v = 0;
  ASSERT_EQ(::read(loud, &v, sizeof(v)), 8);  // both quiet now
  wait_set idle;
  idle.timeout_ms = 20;
  const std::size_t q2 = idle.add(quiet);
  const std::size_t l2 = idle.add(loud);
  out = io_.wait(idle);
  EXPECT_FALSE(out.ready[q2]);
  EXPECT_FALSE(out.ready[l2]);

  // An fd that turns readable between two sleeps is reported by the next one
  // (io_uring: its poll stayed armed).
  const std::uint64_t one = 1;
  ASSERT_EQ(::write(quiet, &one, sizeof(one)), 8);
  out = io_.wait(idle);
  EXPECT_TRUE(out.ready[q2]);
  EXPECT_FALSE(out.ready[l2]);
  ::close(quiet);
  ::close(loud);
}

TEST_P(WorkerIo, AStagedUnmaskIsWrittenWithTheSleep) {
  int p[2];
  ASSERT_EQ(::pipe2(p, O_NONBLOCK | O_CLOEXEC), 0);
  const std::array<std::uint32_t, 2> ports{5, 9};
  io_.stage_unmask(p[1], std::as_bytes(std::span(ports)));
  std::array<std::uint32_t, 4> got{};
  EXPECT_LT(::read(p[0], got.data(), sizeof(got)), 0);  // staged, not written yet
  wait_set set;
  set.timeout_ms = 0;
  (void)io_.wait(set);
  ASSERT_EQ(::read(p[0], got.data(), sizeof(got)), 8);
  EXPECT_EQ(got[0], 5U);
  EXPECT_EQ(got[1], 9U);
  ::close(p[0]);
  ::close(p[1]);
}

INSTANTIATE_TEST_SUITE_P(SyscallsAndIoUring, WorkerIo, ::testing::Values(false, true),
                         [](const auto& p) { return p.param ? "IoUring" : "Syscalls"; });

/// An event channel whose unmask is a write of the ports to its fd, as Linux's
/// evtchn device: the pump stages the unmask instead of writing it.
class fd_write_channel final : public platform::event_channel {
 public:
  fd_write_channel() { EXPECT_EQ(::pipe2(pipe_, O_NONBLOCK | O_CLOEXEC), 0); }
  ~fd_write_channel() override {
    ::close(pipe_[0]);
    ::close(pipe_[1]);
  }
  evtchn_port bind_interdomain(domid, evtchn_port p, std::error_code& ec) override {
    ec.clear();
    return p;
  }
  void unbind(evtchn_port) override {}
  void notify(evtchn_port) override {}
  [[nodiscard]] int fd() const override { return pipe_[1]; }  // where unmasks are written
  std::optional<evtchn_port> pending() override {
    if (given_) {
      return std::nullopt;
    }
    given_ = true;
    return evtchn_port{42};
  }
  void unmask(evtchn_port) override { ++direct_unmasks; }
  [[nodiscard]] bool unmask_is_fd_write() const override { return true; }
  std::vector<std::uint32_t> written() {
    std::array<std::uint32_t, 16> b{};
    const ssize_t n = ::read(pipe_[0], b.data(), sizeof(b));
    return {b.begin(), b.begin() + (n > 0 ? n / 4 : 0)};
  }
  int direct_unmasks = 0;

 private:
  int pipe_[2] = {-1, -1};
  bool given_ = false;
};

TEST(EventPumpWithWorkerIo, UnmaskIsStagedForTheSleepWhereItIsAnFdWrite) {
  fd_write_channel ch;
  queue_counters counters;
  worker_io io(true, "test-q0");
  event_pump pump(ch, counters, &io);
  EXPECT_EQ(pump.drain(), 1U);
  pump.settle(true, clock::now());
  EXPECT_EQ(ch.direct_unmasks, 0);
  EXPECT_TRUE(ch.written().empty());  // masked until the sleep
  wait_set set;
  set.timeout_ms = 0;
  (void)io.wait(set);
  EXPECT_EQ(ch.written(), std::vector<std::uint32_t>{42});
}

}  // namespace
}  // namespace unetback::datapath::test
