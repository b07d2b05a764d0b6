#include "unetback/direct/direct_port.hpp"

#include <sys/epoll.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <optional>
#include <system_error>
#include <thread>

#include "unetback/direct/fdb_refresh.hpp"
#include "unetback/rings/netif.hpp"
#include "unetback/rings/vnet_hdr.hpp"

namespace unetback::direct {

namespace {

[[noreturn]] void throw_errno(const char* what) {
  throw std::system_error(errno, std::generic_category(), what);
}

/// The offload request of a TX frame, read back from the vnet header the TX
/// path made for it (rings::guest_tx_to_vnet); none for a GSO type a guest
/// cannot send, which the host then handles.
std::optional<rings::tx_offload> offload_of(const rings::vnet_header& h) {
  rings::tx_offload o;
  o.csum_blank = (h.flags & rings::vnet_f_needs_csum) != 0;
  o.data_validated = (h.flags & rings::vnet_f_data_valid) != 0;
  switch (h.gso_type & ~static_cast<unsigned>(rings::vnet_gso_ecn)) {
    case rings::vnet_gso_none:
      return o;
    case rings::vnet_gso_tcpv4:
      o.gso_type = rings::gso_type::tcpv4;
      break;
    case rings::vnet_gso_tcpv6:
      o.gso_type = rings::gso_type::tcpv6;
      break;
    default:
      return std::nullopt;
  }
  o.gso_size = h.gso_size;
  return o;
}

}  // namespace

direct_port::direct_port(std::unique_ptr<platform::frame_port> tap)
    : tap_(std::move(tap)), epoll_fd_(::epoll_create1(EPOLL_CLOEXEC)) {
  if (epoll_fd_ < 0) {
    throw_errno("epoll_create1 (direct path)");
  }
  for (const int fd : {tap_->fd(), bell_.fd()}) {
    epoll_event ev{};
    ev.events = EPOLLIN;
    ev.data.fd = fd;
    if (::epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, fd, &ev) != 0) {
      const int err = errno;
      ::close(epoll_fd_);
      throw std::system_error(err, std::generic_category(), "epoll_ctl (direct path)");
    }
  }
}

direct_port::~direct_port() {
  ::close(epoll_fd_);
}

void direct_port::enter() {
  calls_.fetch_add(1, std::memory_order_seq_cst);
}

void direct_port::leave() {
  calls_.fetch_add(1, std::memory_order_release);
}

const lane_table* direct_port::publish(const lane_table* table) {
  const lane_table* old = table_.exchange(table, std::memory_order_seq_cst);
  // A call that loaded `old` entered before the exchange: if one is running
  // now (odd), wait for it to leave; a call entering later loads `table`.
  const std::uint64_t seen = calls_.load(std::memory_order_seq_cst);
  if (seen % 2 == 1) {
    while (calls_.load(std::memory_order_acquire) == seen) {
      std::this_thread::yield();
    }
  }
  return old;
}

long direct_port::write_frame(std::span<const iovec> iov) {
  enter();
  const lane_table* t = table_.load(std::memory_order_seq_cst);
  const long n = t != nullptr ? write_direct(*t, iov) : tap_->write_frame(iov);
  leave();
  return n;
}

long direct_port::write_direct(const lane_table& t, std::span<const iovec> iov) {
  // The TX path writes a frame as its vnet header and the whole frame; any
  // other shape goes to the host, which takes every shape.
  if (iov.size() != 2 || iov[0].iov_len != vnet_hdr_size()) {
    return tap_->write_frame(iov);
  }
  rings::vnet_header h{};
  std::memcpy(&h, iov[0].iov_base, std::min(iov[0].iov_len, sizeof h));
  const auto offload = offload_of(h);
  const tx_frame f{std::span(static_cast<const std::byte*>(iov[1].iov_base), iov[1].iov_len),
                   offload.value_or(rings::tx_offload{})};
  const frame_route route = offload ? route_tx_frame(f, t.source_mac, t.peers)
                                    : frame_route{route_reason::offload_refused, 0};
  if (!route.direct()) {
    bump(counters_.to_host[static_cast<std::size_t>(route.why)]);
    return tap_->write_frame(iov);
  }
  if (learning_due_.load(std::memory_order_relaxed)) [[unlikely]] {
    learning_due_.store(false, std::memory_order_relaxed);  // a request lost here comes again
    write_learning_frame(t.source_mac);
  }
  const outbound_lane& lane = t.lanes[route.peer];
  switch (lane.ring->push(iov)) {
    case push_result::full:
      bump(counters_.tx_drops_full);  // as a full TAP queue drops it: the guest did nothing wrong
      return 0;
    case push_result::refused:
      return tap_->write_frame(iov);  // longer than the ring takes: the host can
    case push_result::pushed_wake:
      lane.bell->ring();
      [[fallthrough]];
    case push_result::pushed:
      break;
  }
  bump(counters_.tx_packets);
  bump(counters_.tx_bytes, iov[1].iov_len);
  return static_cast<long>(iov[0].iov_len + iov[1].iov_len);
}

void direct_port::write_learning_frame(const tap::mac_address& mac) {
  rings::vnet_header no_offload{};  // a TAP header is at most a vnet_header
  learning_frame f = make_learning_frame(mac);
  const std::array<iovec, 2> iov{iovec{&no_offload, std::min(vnet_hdr_size(), sizeof no_offload)},
                                 iovec{f.data(), f.size()}};
  if (tap_->write_frame(iov) > 0) {
    bump(counters_.learning_frames);
  }
}

long direct_port::read_frame(std::span<std::byte> buf) {
  enter();
  const lane_table* t = table_.load(std::memory_order_seq_cst);
  long n = 0;
  if (t == nullptr || t->inbound.empty()) {
    n = tap_->read_frame(buf);
  } else if (ring_run_ >= ring_burst) {
    ring_run_ = 0;  // the TAP's turn; the rings' if it has nothing
    n = tap_->read_frame(buf);
    if (n == 0) {
      n = read_inbound(*t, buf);
    }
  } else {
    n = read_inbound(*t, buf);
    if (n == 0) {
      ring_run_ = 0;
      n = tap_->read_frame(buf);
    }
  }
  // Found nothing twice in a row: woken by a doorbell whose ring is not
  // counted yet (see clear_and_look_again).
  if (n == 0 && t != nullptr && !t->inbound.empty() && std::exchange(found_nothing_, true)) {
    n = counted(clear_and_look_again(*t, buf));
  }
  if (n != 0) {
    found_nothing_ = false;
  }
  leave();
  return n;
}

long direct_port::read_inbound(const lane_table& t, std::span<std::byte> buf) {
  long n = pop_any(t, buf);
  if (n == 0 && bell_.rung_since(bell_seen_)) {
    n = clear_and_look_again(t, buf);
  }
  return counted(n);
}

// Every ring is empty and armed now. Clear the doorbell, then look once more:
// a push between our look and the clearing rang a doorbell we just cleared,
// and this look finds its frame; a later push rings it again.
//
// A peer rings in two steps, the eventfd write and then the count, so a look
// between the two finds the rings empty and the count unchanged and would
// leave the eventfd readable: the worker would wake at once, find nothing,
// and again, until the count landed. On a busy host that spinning worker is
// what delays the peer's count (measured on the sim: UDP ping-pong 3-4 times
// slower than on the TAP path, with twice the daemon's CPU). read_frame
// therefore also comes here when it finds the rings and the TAP empty twice
// in a row: the port was readable, so a doorbell was rung.
long direct_port::clear_and_look_again(const lane_table& t, std::span<std::byte> buf) {
  bell_.clear();
  const long n = pop_any(t, buf);
  if (n > 0) {
    // More may follow it, pushed while the ring was not armed: stay
    // readable until a look finds the rings empty, as a TAP's fd does
    // while it holds frames (the worker may stop reading before that).
    bell_.ring();
  }
  return n;
}

long direct_port::counted(long n) {
  if (n > 0) {
    ++ring_run_;
    bump(counters_.rx_packets);
    const auto bytes = static_cast<std::size_t>(n);
    bump(counters_.rx_bytes, bytes - std::min(bytes, vnet_hdr_size()));
  }
  return n;
}

long direct_port::pop_any(const lane_table& t, std::span<std::byte> buf) {
  const std::size_t count = t.inbound.size();
  for (std::size_t k = 0; k < count; ++k) {
    const std::size_t i = (next_inbound_ + k) % count;
    long n = t.inbound[i]->pop(buf);
    while (n == -EMSGSIZE) {  // bounded by the records in the ring
      bump(counters_.rx_drops_too_big);
      n = t.inbound[i]->pop(buf);
    }
    if (n > 0) {
      next_inbound_ = i + 1;  // round robin: the next ring goes first next time
      return n;
    }
  }
  return 0;
}

}  // namespace unetback::direct
