#include "relay_worker.hpp"

#include <poll.h>
#include <sys/uio.h>

#include <array>
#include <span>

namespace unetback::benchkit {

namespace {
// vnet header + the largest frame a TAP hands out (64 KiB GSO + Ethernet/VLAN).
constexpr std::size_t frame_buffer_bytes = 12 + 65536 + 64;
}  // namespace

relay_worker::relay_worker(platform::frame_port& guest, platform::frame_port& host, int stop_fd)
    : guest_(guest), host_(host), stop_fd_(stop_fd), buf_(frame_buffer_bytes) {}

void relay_worker::run() {
  std::array<pollfd, 3> fds{
      {{guest_.fd(), POLLIN, 0}, {host_.fd(), POLLIN, 0}, {stop_fd_, POLLIN, 0}}};
  for (;;) {
    for (auto& p : fds) {
      p.revents = 0;
    }
    if (::poll(fds.data(), fds.size(), -1) < 0) {
      if (errno == EINTR) {
        continue;
      }
      return;
    }
    ++counters_.wakeups;
    if (fds[2].revents != 0) {
      return;
    }
    if (((fds[0].revents | fds[1].revents) & (POLLERR | POLLHUP | POLLNVAL)) != 0) {
      return;
    }
    if ((fds[0].revents & POLLIN) != 0) {
      pump(guest_, host_, guest_tx);
    }
    if ((fds[1].revents & POLLIN) != 0) {
      pump(host_, guest_, guest_rx);
    }
  }
}

void relay_worker::pump(platform::frame_port& from, platform::frame_port& to, relay_dir dir) {
  const std::size_t hdr = from.vnet_hdr_size();
  for (std::size_t n = 0; n < relay_batch; ++n) {
    const long got = from.read_frame(buf_);
    if (got == 0) {
      return;  // drained
    }
    if (got < 0) {
      ++counters_.errors[dir];
      return;
    }
    const iovec iov{buf_.data(), static_cast<std::size_t>(got)};
    const long put = to.write_frame(std::span<const iovec>(&iov, 1));
    if (put <= 0) {
      ++counters_.dropped[dir];
      continue;
    }
    ++counters_.frames[dir];
    counters_.bytes[dir] += static_cast<std::uint64_t>(got) - hdr;
  }
}

}  // namespace unetback::benchkit
