#pragma once
// A queue worker's file I/O outside the grant-copy and notify ioctls: the
// TAP writes of a TX sweep, the event-channel unmask and the sleep on the
// worker's fds. Two ways to issue them (queue_tuning::io_uring):
//   - system calls: one writev per frame, one write per unmask, one poll();
//   - io_uring: a sweep's frames in one io_uring_enter, and the unmask and
//     any frames still staged carried by the enter that sleeps.
// On a PV dom0 every system call is a trip through the hypervisor, and the
// worker made about ten per packet (docs/performance.md, "Cost account").
// The ring is created by the first call from the worker's own thread
// (IORING_SETUP_SINGLE_ISSUER); a kernel without io_uring, or one that
// refuses it, leaves the worker on system calls with a log line.

#include <poll.h>
#include <sys/uio.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>

#include "unetback/platform/frame_port.hpp"
#include "unetback/rings/netif.hpp"
#include "unetback/rings/vnet_hdr.hpp"

namespace unetback::datapath {

/// The fds one sleep waits on, in the worker's order (stop first).
struct wait_set {
  static constexpr std::size_t max_fds = 4;
  std::array<int, max_fds> fds{};
  std::size_t count = 0;
  int timeout_ms = -1;  ///< -1: until an fd is ready; 0: just look

  std::size_t add(int fd) {
    fds[count] = fd;
    return count++;
  }
};

/// What one sleep saw: readiness by wait_set index; interrupted: look at all.
struct wait_outcome {
  std::array<bool, wait_set::max_fds> ready{};
  bool interrupted = false;
};

class worker_io {
 public:
  /// Frames one TX sweep can stage: one per ring slot at most.
  static constexpr std::size_t max_frames = rings::tx_back_ring::size;

  /// `want_uring`: use io_uring where the kernel allows it. `name` is the
  /// queue's, for the log line of a fallback.
  worker_io(bool want_uring, std::string name);
  ~worker_io();
  worker_io(const worker_io&) = delete;
  worker_io& operator=(const worker_io&) = delete;

  /// True once the ring exists (after the first staged I/O or sleep).
  [[nodiscard]] bool uring() const { return ring_ != nullptr; }

  /// Stages a frame for `port`: a vnet header (copied) and the frame bytes
  /// (which must stay valid until the frames are flushed).
  void stage_frame(platform::frame_port& port, std::span<const std::byte> vnet_hdr,
                   std::span<const std::byte> frame);
  [[nodiscard]] std::size_t staged_frames() const { return staged_; }
  /// Writes every staged frame; the results, per frame in staging order, as
  /// frame_port::write_frame returns them, stay valid until the next stage.
  std::span<const long> flush_frames();

  /// Stages an unmask: `bytes` written to `fd` by the next sleep (or flush_writes()).
  void stage_unmask(int fd, std::span<const std::byte> bytes);
  /// Writes a staged unmask now (the worker goes round again instead of sleeping).
  void flush_unmask();

  /// Sleeps on `set` after flushing what is staged. The frames' results are
  /// available from frame_results() afterwards.
  [[nodiscard]] wait_outcome wait(const wait_set& set);
  [[nodiscard]] std::span<const long> frame_results() const {
    return std::span(results_).first(flushed_);
  }

 private:
  struct ring_state;

  void ensure_ring();
  void queue_frames();
  void queue_unmask();
  [[nodiscard]] wait_outcome poll_wait(const wait_set& set);
  [[nodiscard]] wait_outcome uring_wait(const wait_set& set);
  void reap();
  /// Until every frame queued to the ring has its completion.
  void await_frames();
  void write_frames_by_syscall();
  void write_unmask_by_syscall();

  bool want_uring_;
  bool tried_ = false;
  std::string name_;
  std::unique_ptr<ring_state> ring_;
  platform::frame_port* port_ = nullptr;
  std::size_t staged_ = 0;
  std::size_t flushed_ = 0;
  std::size_t in_flight_ = 0;  ///< frames queued to the ring without a completion yet
  std::array<std::array<std::byte, sizeof(rings::vnet_header)>, max_frames> headers_{};
  std::array<std::array<iovec, 2>, max_frames> iov_{};
  std::array<long, max_frames> results_{};
  int unmask_fd_ = -1;
  std::array<std::byte, 64> unmask_bytes_{};
  std::size_t unmask_len_ = 0;
};

}  // namespace unetback::datapath
