#include "net_tools.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <linux/if_packet.h>
#include <net/ethernet.h>
#include <net/if.h>
#include <netinet/in.h>
#include <poll.h>
#include <sched.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <system_error>

namespace unetback::hostile {
namespace {

constexpr std::uint16_t echo_port = 47001;
constexpr std::uint16_t test_ethertype = 0x88B5;

[[noreturn]] void throw_errno(const std::string& what) {
  throw std::system_error(errno, std::generic_category(), what);
}

sockaddr_in inet_address(const std::string& ip, std::uint16_t port) {
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(port);
  if (::inet_pton(AF_INET, ip.c_str(), &a.sin_addr) != 1) {
    throw std::invalid_argument("bad IPv4 address " + ip);
  }
  return a;
}

bool readable(int fd, int stop_fd, std::chrono::milliseconds timeout) {
  std::array<pollfd, 2> p{pollfd{fd, POLLIN, 0}, pollfd{stop_fd, POLLIN, 0}};
  const int n = ::poll(p.data(), stop_fd >= 0 ? 2 : 1, static_cast<int>(timeout.count()));
  return n > 0 && (p[0].revents & POLLIN) != 0;
}

}  // namespace

mac_bytes parse_mac(const std::string& text) {
  mac_bytes m{};
  unsigned v[6];
  if (std::sscanf(text.c_str(), "%x:%x:%x:%x:%x:%x", &v[0], &v[1], &v[2], &v[3], &v[4], &v[5]) !=
      6) {
    throw std::invalid_argument("bad MAC " + text);
  }
  for (std::size_t i = 0; i < 6; ++i) {
    m[i] = static_cast<std::uint8_t>(v[i]);
  }
  return m;
}

int socket_in_netns(const std::string& ns, int domain, int type, int protocol) {
  int fd = -1;
  int err = 0;
  // setns(CLONE_NEWNET) changes only the calling thread: do it on a
  // throw-away thread; the socket keeps the namespace it was created in.
  std::thread t([&] {
    const int nsfd = ::open(("/run/netns/" + ns).c_str(), O_RDONLY | O_CLOEXEC);
    if (nsfd < 0 || ::setns(nsfd, CLONE_NEWNET) != 0) {
      err = errno;
      if (nsfd >= 0) {
        ::close(nsfd);
      }
      return;
    }
    ::close(nsfd);
    fd = ::socket(domain, type | SOCK_CLOEXEC, protocol);
    err = fd < 0 ? errno : 0;
  });
  t.join();
  if (fd < 0) {
    errno = err;
    throw_errno("socket in netns " + ns);
  }
  return fd;
}

traffic_monitor::traffic_monitor(const std::string& client_ns, const std::string& client_ip,
                                 const std::string& server_ns, const std::string& server_ip) {
  server_fd_ = socket_in_netns(server_ns, AF_INET, SOCK_DGRAM, 0);
  client_fd_ = socket_in_netns(client_ns, AF_INET, SOCK_DGRAM, 0);
  stop_fd_ = ::eventfd(0, EFD_CLOEXEC);
  const int one = 1;
  ::setsockopt(server_fd_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  const sockaddr_in srv = inet_address(server_ip, echo_port);
  const sockaddr_in cli = inet_address(client_ip, 0);
  if (::bind(server_fd_, reinterpret_cast<const sockaddr*>(&srv), sizeof srv) != 0 ||
      ::bind(client_fd_, reinterpret_cast<const sockaddr*>(&cli), sizeof cli) != 0 ||
      ::connect(client_fd_, reinterpret_cast<const sockaddr*>(&srv), sizeof srv) != 0) {
    throw_errno("traffic_monitor sockets");
  }
  echo_ = std::thread([this] { echo_loop(); });
}

traffic_monitor::~traffic_monitor() {
  if (running_) {
    stop();
  }
  const std::uint64_t one = 1;
  (void)!::write(stop_fd_, &one, sizeof one);
  echo_.join();
  ::close(server_fd_);
  ::close(client_fd_);
  ::close(stop_fd_);
}

void traffic_monitor::echo_loop() {
  for (;;) {
    std::array<pollfd, 2> p{pollfd{server_fd_, POLLIN, 0}, pollfd{stop_fd_, POLLIN, 0}};
    if (::poll(p.data(), 2, -1) < 0 && errno != EINTR) {
      return;
    }
    if ((p[1].revents & POLLIN) != 0) {
      return;
    }
    if ((p[0].revents & POLLIN) == 0) {
      continue;
    }
    std::array<char, 64> buf{};
    sockaddr_in from{};
    socklen_t len = sizeof from;
    const ssize_t n =
        ::recvfrom(server_fd_, buf.data(), buf.size(), 0, reinterpret_cast<sockaddr*>(&from), &len);
    if (n > 0) {
      ::sendto(server_fd_, buf.data(), static_cast<std::size_t>(n), 0,
               reinterpret_cast<const sockaddr*>(&from), len);
    }
  }
}

void traffic_monitor::receive_pending(std::chrono::milliseconds wait) {
  while (readable(client_fd_, -1, wait)) {
    std::uint32_t seq = 0;
    if (::recv(client_fd_, &seq, sizeof seq, MSG_DONTWAIT) == sizeof seq && seq < seen_.size() &&
        !seen_[seq]) {
      seen_[seq] = true;
      ++result_.received;
    }
    wait = std::chrono::milliseconds(0);
  }
}

traffic_result traffic_monitor::probe(std::uint32_t count, std::chrono::milliseconds interval) {
  result_ = {};
  seq_ = 0;
  seen_.assign(count, false);
  for (std::uint32_t i = 0; i < count; ++i) {
    const std::uint32_t seq = seq_++;
    if (::send(client_fd_, &seq, sizeof seq, 0) == sizeof seq) {
      ++result_.sent;
    }
    receive_pending(interval);
  }
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(2);
  while (result_.received < result_.sent && std::chrono::steady_clock::now() < deadline) {
    receive_pending(std::chrono::milliseconds(50));
  }
  return result_;
}

void traffic_monitor::start(std::chrono::milliseconds interval) {
  result_ = {};
  seq_ = 0;
  sent_ = 0;
  seen_.assign(1U << 20, false);
  running_ = true;
  sender_ = std::thread([this, interval] { send_loop(interval); });
}

void traffic_monitor::send_loop(std::chrono::milliseconds interval) {
  while (running_ && seq_ < seen_.size()) {
    const std::uint32_t seq = seq_++;
    if (::send(client_fd_, &seq, sizeof seq, MSG_DONTWAIT) == sizeof seq) {
      ++result_.sent;
    }
    sent_.store(seq_);
    receive_pending(interval);
  }
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(2);
  while (result_.received < result_.sent && std::chrono::steady_clock::now() < deadline) {
    receive_pending(std::chrono::milliseconds(50));
  }
}

traffic_result traffic_monitor::stop() {
  // However short the attack, the good guest's traffic ran during it: at
  // least 50 probes were sent before the monitor stops.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (sent_.load() < 50 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  running_ = false;
  if (sender_.joinable()) {
    sender_.join();
  }
  return result_;
}

raw_port::raw_port(const std::string& ns, const std::string& ifname) {
  fd_ = socket_in_netns(ns, AF_PACKET, SOCK_RAW, htons(ETH_P_ALL));
  ifreq ifr{};
  std::strncpy(ifr.ifr_name, ifname.c_str(), IFNAMSIZ - 1);
  if (::ioctl(fd_, SIOCGIFINDEX, &ifr) != 0) {
    ::close(fd_);
    throw_errno("SIOCGIFINDEX " + ifname);
  }
  ifindex_ = ifr.ifr_ifindex;
  sockaddr_ll sll{};
  sll.sll_family = AF_PACKET;
  sll.sll_protocol = htons(ETH_P_ALL);
  sll.sll_ifindex = ifindex_;
  if (::bind(fd_, reinterpret_cast<const sockaddr*>(&sll), sizeof sll) != 0) {
    ::close(fd_);
    throw_errno("bind AF_PACKET " + ifname);
  }
  const int big = 4 << 20;
  ::setsockopt(fd_, SOL_SOCKET, SO_RCVBUF, &big, sizeof big);
}

raw_port::~raw_port() {
  ::close(fd_);
}

bool raw_port::send(std::span<const std::uint8_t> frame) {
  return ::send(fd_, frame.data(), frame.size(), 0) == static_cast<ssize_t>(frame.size());
}

std::optional<std::vector<std::uint8_t>> raw_port::receive(std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() < 0 || !readable(fd_, -1, left)) {
      return std::nullopt;
    }
    std::vector<std::uint8_t> buf(70000);
    sockaddr_ll from{};
    socklen_t len = sizeof from;
    const ssize_t n = ::recvfrom(fd_, buf.data(), buf.size(), MSG_DONTWAIT,
                                 reinterpret_cast<sockaddr*>(&from), &len);
    if (n <= 0 || from.sll_pkttype == PACKET_OUTGOING) {
      continue;
    }
    buf.resize(static_cast<std::size_t>(n));
    if (filter_ && (buf.size() < 12 || !std::equal(filter_->begin(), filter_->end(), &buf[6]))) {
      continue;
    }
    return buf;
  }
}

std::vector<std::uint8_t> test_frame(const mac_bytes& dst, const mac_bytes& src, std::size_t len,
                                     std::uint8_t seed) {
  std::vector<std::uint8_t> f(std::max<std::size_t>(len, 14));
  std::copy(dst.begin(), dst.end(), f.begin());
  std::copy(src.begin(), src.end(), f.begin() + 6);
  f[12] = static_cast<std::uint8_t>(test_ethertype >> 8);
  f[13] = static_cast<std::uint8_t>(test_ethertype & 0xFF);
  for (std::size_t i = 14; i < f.size(); ++i) {
    f[i] = static_cast<std::uint8_t>(seed + i * 7);
  }
  return f;
}

}  // namespace unetback::hostile
