#include "link_watch.hpp"

#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <spdlog/spdlog.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <system_error>

namespace unetback::daemon {
namespace {

int open_link_socket() {
  const int fd = ::socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC | SOCK_NONBLOCK, NETLINK_ROUTE);
  if (fd < 0) {
    throw std::system_error(errno, std::generic_category(), "rtnetlink socket");
  }
  sockaddr_nl addr{};
  addr.nl_family = AF_NETLINK;
  addr.nl_groups = RTMGRP_LINK;
  if (::bind(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof(addr)) != 0) {
    const int e = errno;
    ::close(fd);
    throw std::system_error(e, std::generic_category(), "rtnetlink bind RTMGRP_LINK");
  }
  return fd;
}

// Messages per wake-up: the host's link churn cannot hold the control thread.
constexpr int max_datagrams_per_wakeup = 64;

}  // namespace

link_watch::link_watch(const boost::asio::any_io_executor& executor, handler on_event)
    : socket_(executor, open_link_socket()), on_event_(std::move(on_event)) {}

void link_watch::start() {
  wait();
}

void link_watch::wait() {
  socket_.async_wait(boost::asio::posix::stream_descriptor::wait_read,
                     [this](const boost::system::error_code& ec) {
                       if (!ec) {
                         drain();
                         wait();
                       }
                     });
}

void link_watch::drain() {
  for (int i = 0; i < max_datagrams_per_wakeup; ++i) {
    const ssize_t n = ::recv(socket_.native_handle(), buf_.data(), buf_.size(), MSG_DONTWAIT);
    if (n < 0) {
      if (errno == ENOBUFS) {  // the kernel dropped messages: say so, go on
        spdlog::warn("link messages lost (rtnetlink overrun); bridge changes may go unlogged");
        continue;
      }
      return;  // EAGAIN: drained
    }
    for (const tap::link_event& e :
         tap::parse_link_messages(std::span(buf_).first(static_cast<std::size_t>(n)))) {
      try {
        on_event_(e);
      } catch (const std::exception& ex) {  // a report must never stop the event loop
        spdlog::error("link message for ifindex {}: {}", e.index, ex.what());
      }
    }
  }
}

}  // namespace unetback::daemon
