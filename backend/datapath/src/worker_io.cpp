#include "worker_io.hpp"

#include <liburing.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <system_error>

#include <spdlog/spdlog.h>

namespace unetback::datapath {
namespace {

// user_data: what a completion answers, in the top byte; an index or fd below.
enum class tag_kind : std::uint64_t { frame = 1, unmask = 2, poll = 3 };

std::uint64_t tag(tag_kind k, std::uint64_t value) {
  return (static_cast<std::uint64_t>(k) << 56) | value;
}
tag_kind kind_of(std::uint64_t user_data) {
  return static_cast<tag_kind>(user_data >> 56);
}
std::uint64_t value_of(std::uint64_t user_data) {
  return user_data & ((1ULL << 56) - 1);
}

/// frame_port::write_frame's reading of a system call's result.
long frame_result(long res) {
  if (res == -EAGAIN || res == -EINTR || res == -ENOBUFS) {
    return 0;
  }
  return res;
}

/// Sleeping on fds needs one poll per fd; frames and an unmask come on top.
constexpr unsigned ring_entries = 2 * worker_io::max_frames;

}  // namespace

struct worker_io::ring_state {
  io_uring ring{};
  /// One-shot polls still armed, by fd (they outlive a sleep that another fd ended).
  std::array<int, wait_set::max_fds> armed{};
  std::size_t armed_count = 0;
  /// Polls that fired, by fd, until a sleep reports them.
  std::array<int, wait_set::max_fds> fired{};
  std::size_t fired_count = 0;
  std::array<msghdr, max_frames> msgs{};

  bool live = false;  ///< io_uring_queue_init succeeded

  ring_state() = default;
  ring_state(const ring_state&) = delete;
  ring_state& operator=(const ring_state&) = delete;
  ~ring_state() {
    if (live) {
      io_uring_queue_exit(&ring);
    }
  }

  [[nodiscard]] bool is_armed(int fd) const {
    return std::find(armed.begin(), armed.begin() + static_cast<std::ptrdiff_t>(armed_count), fd) !=
           armed.begin() + static_cast<std::ptrdiff_t>(armed_count);
  }
  void on_poll_fired(int fd) {
    const auto end = armed.begin() + static_cast<std::ptrdiff_t>(armed_count);
    const auto it = std::find(armed.begin(), end, fd);
    if (it != end) {
      *it = armed[--armed_count];
    }
    if (fired_count < fired.size()) {
      fired[fired_count++] = fd;
    }
  }
  /// Readiness of `set` from the polls that fired; forgets them.
  void report(const wait_set& set, wait_outcome& out) {
    const auto end = fired.begin() + static_cast<std::ptrdiff_t>(fired_count);
    for (std::size_t i = 0; i < set.count; ++i) {
      out.ready[i] = out.interrupted || std::find(fired.begin(), end, set.fds[i]) != end;
    }
    fired_count = 0;  // an fd outside the set is polled again when it is wanted
  }
  io_uring_sqe* sqe() {
    io_uring_sqe* s = io_uring_get_sqe(&ring);
    if (s == nullptr) {
      (void)io_uring_submit(&ring);  // never with the sizes above; stays correct
      s = io_uring_get_sqe(&ring);
    }
    return s;
  }
};

worker_io::worker_io(bool want_uring, std::string name)
    : want_uring_(want_uring), name_(std::move(name)) {}

worker_io::~worker_io() = default;

void worker_io::ensure_ring() {
  if (tried_ || !want_uring_) {
    return;
  }
  tried_ = true;
  auto state = std::make_unique<ring_state>();
  // Completions are only needed when the worker asks (it always does), so
  // the kernel may defer its work to then (6.1+); older kernels get less.
  const unsigned flag_sets[] = {IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN,
                                IORING_SETUP_COOP_TASKRUN, 0};
  int rc = -ENOSYS;
  for (const unsigned flags : flag_sets) {
    rc = io_uring_queue_init(ring_entries, &state->ring, flags);
    if (rc != -EINVAL) {
      break;
    }
  }
  if (rc < 0) {
    spdlog::warn("{}: io_uring unavailable ({}): using system calls", name_,
                 std::error_code(-rc, std::generic_category()).message());
    return;
  }
  state->live = true;
  ring_ = std::move(state);
  spdlog::info("{}: TAP writes, unmasks and sleeps through io_uring", name_);
}

void worker_io::stage_frame(platform::frame_port& port, std::span<const std::byte> vnet_hdr,
                            std::span<const std::byte> frame) {
  if (staged_ == 0) {
    flushed_ = 0;
  }
  port_ = &port;
  std::array<std::byte, sizeof(rings::vnet_header)>& h = headers_[staged_];
  const std::size_t hdr_len = std::min(vnet_hdr.size(), h.size());
  std::memcpy(h.data(), vnet_hdr.data(), hdr_len);
  iov_[staged_] = {iovec{h.data(), hdr_len},
                   iovec{const_cast<std::byte*>(frame.data()), frame.size()}};  // read only
  ++staged_;
}

std::span<const long> worker_io::flush_frames() {
  ensure_ring();
  if (staged_ == 0) {
    return {};
  }
  if (ring_ == nullptr || port_->write_op() == platform::frame_write_op::other) {
    write_frames_by_syscall();
    return frame_results();
  }
  const std::size_t n = staged_;
  queue_frames();
  // Frames complete during the submission (the fds are non-blocking); the
  // wait only covers a kernel that queued one for later.
  const int rc = io_uring_submit_and_wait(&ring_->ring, static_cast<unsigned>(n));
  if (rc < 0 && rc != -EINTR) {
    throw std::system_error(-rc, std::generic_category(), "io_uring_enter");
  }
  reap();
  await_frames();
  return frame_results();
}

void worker_io::write_frames_by_syscall() {
  for (std::size_t i = 0; i < staged_; ++i) {
    results_[i] = port_->write_frame(iov_[i]);
  }
  flushed_ = staged_;
  staged_ = 0;
}

void worker_io::queue_frames() {
  const bool as_msg = port_->write_op() == platform::frame_write_op::sendmsg;
  for (std::size_t i = 0; i < staged_; ++i) {
    io_uring_sqe* s = ring_->sqe();
    if (as_msg) {
      msghdr& m = ring_->msgs[i];
      m = msghdr{};
      m.msg_iov = iov_[i].data();
      m.msg_iovlen = iov_[i].size();
      io_uring_prep_sendmsg(s, port_->fd(), &m, MSG_DONTWAIT | MSG_NOSIGNAL);
    } else {
      io_uring_prep_writev(s, port_->fd(), iov_[i].data(), 2, 0);
    }
    io_uring_sqe_set_data64(s, tag(tag_kind::frame, i));
  }
  in_flight_ = staged_;
  flushed_ = staged_;
  staged_ = 0;
}

void worker_io::stage_unmask(int fd, std::span<const std::byte> bytes) {
  if (unmask_len_ > 0 && (fd != unmask_fd_ || unmask_len_ + bytes.size() > unmask_bytes_.size())) {
    flush_unmask();
  }
  unmask_fd_ = fd;
  const std::size_t n = std::min(bytes.size(), unmask_bytes_.size() - unmask_len_);
  std::memcpy(unmask_bytes_.data() + unmask_len_, bytes.data(), n);
  unmask_len_ += n;
}

void worker_io::flush_unmask() {
  write_unmask_by_syscall();
}

void worker_io::write_unmask_by_syscall() {
  if (unmask_len_ == 0) {
    return;
  }
  if (::write(unmask_fd_, unmask_bytes_.data(), unmask_len_) != static_cast<ssize_t>(unmask_len_)) {
    spdlog::warn("{}: unmasking event channels: {}", name_,
                 std::error_code(errno, std::generic_category()).message());
  }
  unmask_len_ = 0;
}

void worker_io::queue_unmask() {
  if (unmask_len_ == 0) {
    return;
  }
  io_uring_sqe* s = ring_->sqe();
  io_uring_prep_write(s, unmask_fd_, unmask_bytes_.data(), static_cast<unsigned>(unmask_len_), 0);
  io_uring_sqe_set_data64(s, tag(tag_kind::unmask, unmask_len_));
  unmask_len_ = 0;  // the bytes stay put until the completion (the next stage flushes first)
}

wait_outcome worker_io::wait(const wait_set& set) {
  ensure_ring();
  if (ring_ == nullptr || (staged_ > 0 && port_->write_op() == platform::frame_write_op::other)) {
    write_frames_by_syscall();
    write_unmask_by_syscall();
    return poll_wait(set);
  }
  return uring_wait(set);
}

wait_outcome worker_io::poll_wait(const wait_set& set) {
  std::array<pollfd, wait_set::max_fds> fds{};
  for (std::size_t i = 0; i < set.count; ++i) {
    fds[i] = pollfd{set.fds[i], POLLIN, 0};
  }
  wait_outcome out;
  const int rc = ::poll(fds.data(), set.count, set.timeout_ms);
  if (rc < 0) {
    if (errno != EINTR) {
      throw std::system_error(errno, std::generic_category(), "poll");
    }
    out.interrupted = true;
    return out;
  }
  for (std::size_t i = 0; i < set.count; ++i) {
    out.ready[i] = (fds[i].revents & (POLLIN | POLLERR | POLLHUP)) != 0;
  }
  return out;
}

wait_outcome worker_io::uring_wait(const wait_set& set) {
  const std::size_t frames = staged_;
  if (frames > 0) {
    queue_frames();
  }
  const bool unmasking = unmask_len_ > 0;
  queue_unmask();
  for (std::size_t i = 0; i < set.count; ++i) {
    const int fd = set.fds[i];
    if (ring_->is_armed(fd)) {
      continue;  // armed by an earlier sleep and not fired yet
    }
    io_uring_sqe* s = ring_->sqe();
    io_uring_prep_poll_add(s, fd, POLLIN);
    io_uring_sqe_set_data64(s, tag(tag_kind::poll, static_cast<std::uint64_t>(fd)));
    ring_->armed[ring_->armed_count++] = fd;
  }
  // The frames' and the unmask's completions arrive during the submission;
  // the sleep is for one more.
  const unsigned want = static_cast<unsigned>(frames) + (unmasking ? 1U : 0U) + 1U;
  io_uring_cqe* cqe = nullptr;
  int rc = 0;
  if (set.timeout_ms < 0) {
    rc = io_uring_submit_and_wait(&ring_->ring, want);
  } else if (set.timeout_ms == 0) {
    rc = io_uring_submit_and_get_events(&ring_->ring);
  } else {
    __kernel_timespec ts{set.timeout_ms / 1000, (set.timeout_ms % 1000) * 1'000'000LL};
    rc = io_uring_submit_and_wait_timeout(&ring_->ring, &cqe, want, &ts, nullptr);
  }
  wait_outcome out;
  if (rc == -EINTR) {
    out.interrupted = true;
  } else if (rc < 0 && rc != -ETIME && rc != -EBUSY) {
    throw std::system_error(-rc, std::generic_category(), "io_uring_enter");
  }
  reap();
  await_frames();
  ring_->report(set, out);
  return out;
}

void worker_io::await_frames() {
  while (in_flight_ > 0) {
    // A frame the kernel queued for later: its buffer must outlive it.
    const int rc = io_uring_submit_and_wait(&ring_->ring, 1);
    if (rc < 0 && rc != -EINTR) {
      throw std::system_error(-rc, std::generic_category(), "io_uring_enter");
    }
    reap();
  }
}

void worker_io::reap() {
  // Polls that fire outside a sleep stay in the queue until the next one,
  // which reports them: readiness is never lost, at worst reported late.
  for (;;) {
    io_uring_cqe* cqe = nullptr;
    if (io_uring_peek_cqe(&ring_->ring, &cqe) != 0 || cqe == nullptr) {
      return;
    }
    const std::uint64_t d = io_uring_cqe_get_data64(cqe);
    const int res = cqe->res;
    io_uring_cqe_seen(&ring_->ring, cqe);
    switch (kind_of(d)) {
      case tag_kind::frame:
        results_[value_of(d)] = frame_result(res);
        --in_flight_;
        break;
      case tag_kind::unmask:
        if (res != static_cast<int>(value_of(d))) {
          spdlog::warn("{}: unmasking event channels: {}", name_,
                       res < 0 ? std::error_code(-res, std::generic_category()).message()
                               : std::string("short write"));
        }
        break;
      case tag_kind::poll:
        ring_->on_poll_fired(static_cast<int>(value_of(d)));
        break;
    }
  }
}

}  // namespace unetback::datapath
