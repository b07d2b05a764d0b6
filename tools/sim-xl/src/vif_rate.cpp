#include "vif_rate.hpp"

#include <fmt/format.h>

#include <charconv>
#include <cstdint>
#include <stdexcept>

namespace unetback::toolstack {

namespace {

[[noreturn]] void bad_rate(std::string_view text) {
  throw std::invalid_argument(
      fmt::format("vifspec: bad rate '{}' (expected e.g. 10Mb/s or 1MB/s@20ms)", text));
}

// Leading decimal digits of `text`, consumed.
std::uint64_t take_number(std::string_view& text, std::string_view whole) {
  std::uint64_t n = 0;
  const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), n);
  if (ec != std::errc{} || ptr == text.data()) {
    bad_rate(whole);
  }
  text.remove_prefix(static_cast<std::size_t>(ptr - text.data()));
  return n;
}

std::uint64_t bytes_per_second(std::string_view rate, std::string_view whole) {
  std::uint64_t n = take_number(rate, whole);
  std::uint64_t scale = 1;
  if (!rate.empty() && (rate.front() == 'K' || rate.front() == 'M' || rate.front() == 'G')) {
    scale = rate.front() == 'K' ? 1000U : rate.front() == 'M' ? 1000'000U : 1000'000'000U;
    rate.remove_prefix(1);
  }
  if (rate != "B/s" && rate != "b/s") {
    bad_rate(whole);
  }
  const bool in_bits = rate.front() == 'b';
  if (n > UINT64_MAX / scale) {
    bad_rate(whole);
  }
  n *= scale;
  return in_bits ? n / 8 : n;
}

std::uint64_t interval_usecs(std::string_view interval, std::string_view whole) {
  const std::uint64_t n = take_number(interval, whole);
  std::uint64_t us = 0;
  if (interval == "s") {
    us = n * 1000'000U;
  } else if (interval == "ms") {
    us = n * 1000U;
  } else if (interval == "us") {
    us = n;
  } else {
    bad_rate(whole);
  }
  if (us == 0 || us > 1000'000U || n > 1000'000U) {
    bad_rate(whole);
  }
  return us;
}

}  // namespace

std::string backend_rate(std::string_view xl_rate) {
  const auto at = xl_rate.find('@');
  const std::uint64_t bps = bytes_per_second(xl_rate.substr(0, at), xl_rate);
  const std::uint64_t us =
      at == std::string_view::npos ? 50'000U : interval_usecs(xl_rate.substr(at + 1), xl_rate);
  const std::uint64_t bytes = bps / 1000'000U * us + bps % 1000'000U * us / 1000'000U;
  if (bytes == 0) {
    bad_rate(xl_rate);
  }
  return fmt::format("{},{}", bytes, us);
}

}  // namespace unetback::toolstack
