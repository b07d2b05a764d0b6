#include "wake_cost.hpp"

#include <sys/eventfd.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <thread>

#include <spdlog/spdlog.h>

namespace unetback::datapath {
namespace {

using steady = std::chrono::steady_clock;

// `(void)!`, not `(void)`: with _FORTIFY_SOURCE (Debian's build flags) glibc marks
// read/write warn_unused_result, which a plain cast does not silence in GCC.
void post(int fd) {
  const std::uint64_t one = 1;
  (void)!::write(fd, &one, sizeof one);
}

void take(int fd) {
  std::uint64_t v = 0;
  (void)!::read(fd, &v, sizeof v);  // blocks until posted
}

std::chrono::microseconds measure() {
  const int ping = ::eventfd(0, EFD_CLOEXEC);
  const int pong = ::eventfd(0, EFD_CLOEXEC);
  if (ping < 0 || pong < 0) {
    if (ping >= 0) {
      ::close(ping);
    }
    return std::chrono::microseconds{1};
  }
  constexpr int rounds = 33;
  std::thread echo([&] {
    for (int i = 0; i < rounds; ++i) {
      take(ping);
      post(pong);
    }
  });
  std::array<steady::duration, rounds> rtt{};
  for (auto& r : rtt) {
    const auto t0 = steady::now();
    post(ping);
    take(pong);
    r = steady::now() - t0;
  }
  echo.join();
  ::close(ping);
  ::close(pong);
  std::nth_element(rtt.begin(), rtt.begin() + rounds / 2, rtt.end());
  const auto one_way = std::chrono::duration_cast<std::chrono::microseconds>(rtt[rounds / 2] / 2);
  return std::max(one_way, std::chrono::microseconds{1});
}

}  // namespace

std::chrono::microseconds wake_cost() {
  static const std::chrono::microseconds cost = [] {
    const std::chrono::microseconds c = measure();
    spdlog::info("waking a thread costs {} us here: busy-polls of up to {} us (poll-us = auto)",
                 c.count(), auto_poll_window(c).count());
    return c;
  }();
  return cost;
}

std::chrono::microseconds auto_poll_window(std::chrono::microseconds wake) {
  return std::clamp(wake * wake_cost_multiple, auto_poll_min, auto_poll_max);
}

}  // namespace unetback::datapath
