#include "steal_meter.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <array>
#include <charconv>

namespace unetback::datapath {
namespace {

/// The next decimal field of `s` (skipping blanks), or nullopt.
std::optional<std::uint64_t> next_field(std::string_view& s) {
  while (!s.empty() && s.front() == ' ') {
    s.remove_prefix(1);
  }
  std::uint64_t v = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc{} || end == s.data()) {
    return std::nullopt;
  }
  s.remove_prefix(static_cast<std::size_t>(end - s.data()));
  return v;
}

}  // namespace

std::optional<cpu_times> parse_cpu_line(std::string_view text) {
  if (!text.starts_with("cpu ")) {
    return std::nullopt;
  }
  text.remove_prefix(4);
  std::array<std::uint64_t, 8> f{};  // user nice system idle iowait irq softirq steal
  for (std::size_t i = 0; i < f.size(); ++i) {
    const auto v = next_field(text);
    if (!v) {
      if (i < 4) {
        return std::nullopt;  // older kernels stop after idle; anything shorter is not it
      }
      break;
    }
    f[i] = *v;
  }
  return cpu_times{f[0] + f[1] + f[2] + f[5] + f[6], f[3] + f[4], f[7]};
}

steal_meter::steal_meter(std::uint32_t max_pct) : max_pct_(max_pct) {
  if (max_pct_ < 100) {
    fd_ = ::open("/proc/stat", O_RDONLY | O_CLOEXEC);  // no /proc: never contended
  }
}

steal_meter::~steal_meter() {
  if (fd_ >= 0) {
    ::close(fd_);
  }
}

bool steal_meter::over(const cpu_times& before, const cpu_times& after, std::uint32_t max_pct) {
  if (after.busy < before.busy || after.idle < before.idle || after.steal < before.steal) {
    return false;  // counters reset (CPU hot-unplug): no verdict
  }
  const std::uint64_t steal = after.steal - before.steal;
  const std::uint64_t total = (after.busy - before.busy) + (after.idle - before.idle) + steal;
  return total > 0 && steal * 100 > total * max_pct;
}

bool steal_meter::contended(std::chrono::steady_clock::time_point now) {
  if (fd_ < 0 || now < next_) {
    return contended_;
  }
  next_ = now + interval;
  std::array<char, 256> buf{};  // the first line is all we need
  const ssize_t n = ::pread(fd_, buf.data(), buf.size(), 0);
  const auto times = n > 0
                         ? parse_cpu_line(std::string_view(buf.data(), static_cast<std::size_t>(n)))
                         : std::nullopt;
  if (times) {
    contended_ = last_ && over(*last_, *times, max_pct_);
    last_ = times;
  }
  return contended_;
}

}  // namespace unetback::datapath
