// TCP modes: the sender writes the seed's stream in seeded random sizes; the
// receiver reads in (differently) seeded random sizes and compares every
// byte with the regenerated stream, so a corruption is located, not just
// detected, and a short stream is told apart from a corrupted one.

#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <system_error>
#include <vector>

#include "modes.hpp"
#include "net.hpp"
#include "pattern.hpp"

namespace unetback::payload_check {

namespace {

constexpr std::uint64_t read_size_salt = 0x5245414453495a45ULL;  // "READSIZE"

void write_all(int fd, const std::uint8_t* data, std::size_t n) {
  while (n > 0) {
    const ssize_t w = ::send(fd, data, n, MSG_NOSIGNAL);
    if (w < 0) {
      if (errno == EINTR) {
        continue;
      }
      throw std::system_error(errno, std::generic_category(), "send");
    }
    data += w;
    n -= static_cast<std::size_t>(w);
  }
}

// One read of at most `max` bytes; 0 at EOF or after `timeout_s` idle (then
// `timed_out` is set). Throws on errors.
struct read_result {
  std::size_t n = 0;
  bool timed_out = false;
};

read_result read_some(int fd, std::uint8_t* buf, std::size_t max, unsigned timeout_s) {
  pollfd p{fd, POLLIN, 0};
  for (;;) {
    const int r = ::poll(&p, 1, static_cast<int>(timeout_s * 1000));
    if (r == 0) {
      return {0, true};
    }
    const ssize_t got = r < 0 ? -1 : ::recv(fd, buf, max, 0);
    if (got >= 0) {
      return {static_cast<std::size_t>(got), false};
    }
    if (errno != EINTR) {
      throw std::system_error(errno, std::generic_category(), "recv");
    }
  }
}

struct verifier {
  pattern expected_stream;
  fnv1a64 got_hash;
  fnv1a64 want_hash;
  std::vector<std::uint8_t> want;
  std::uint64_t corrupt = 0;
  std::int64_t first_bad = -1;

  void check(std::uint64_t offset, const std::uint8_t* data, std::size_t n) {
    want.resize(n);
    expected_stream.fill(offset, want);
    got_hash.update({data, n});
    want_hash.update(want);
    if (std::memcmp(data, want.data(), n) == 0) {
      return;
    }
    for (std::size_t i = 0; i < n; ++i) {
      if (data[i] != want[i]) {
        ++corrupt;
        if (first_bad < 0) {
          first_bad = static_cast<std::int64_t>(offset + i);
        }
      }
    }
  }
};

}  // namespace

nlohmann::json tcp_send(const mode_options& o) {
  fd_owner s = tcp_connect(parse_endpoint(o.endpoint), std::chrono::seconds(o.timeout_s));
  const auto start = std::chrono::steady_clock::now();
  const pattern stream(o.seed);
  size_source sizes(o.seed, o.max_io);
  fnv1a64 hash;
  std::vector<std::uint8_t> buf(o.max_io);
  std::uint64_t sent = 0;
  std::uint64_t writes = 0;
  while (sent < o.bytes) {
    const std::size_t n =
        static_cast<std::size_t>(std::min<std::uint64_t>(sizes.next(), o.bytes - sent));
    stream.fill(sent, {buf.data(), n});
    hash.update({buf.data(), n});
    write_all(s.get(), buf.data(), n);
    sent += n;
    ++writes;
  }
  ::shutdown(s.get(), SHUT_WR);
  // Wait for the receiver to close: then every byte was read on the other side.
  std::uint8_t sink[256];
  while (read_some(s.get(), sink, sizeof sink, o.timeout_s).n > 0) {
  }
  const double secs = seconds_since(start);
  return {
      {"mode", "tcp-send"}, {"bytes_sent", sent},
      {"writes", writes},   {"fnv1a64", hex64(hash.value())},
      {"seconds", secs},    {"mbit_s", secs > 0 ? static_cast<double>(sent) * 8 / secs / 1e6 : 0.0},
      {"ok", true}};
}

nlohmann::json tcp_recv(const mode_options& o) {
  fd_owner s = tcp_accept_one(parse_endpoint(o.endpoint), std::chrono::seconds(o.timeout_s));
  const auto start = std::chrono::steady_clock::now();
  verifier v{pattern(o.seed), {}, {}, {}, 0, -1};
  size_source sizes(o.seed ^ read_size_salt, o.max_io);
  std::vector<std::uint8_t> buf(o.max_io);
  std::uint64_t got = 0;
  std::uint64_t extra = 0;
  bool timed_out = false;
  for (;;) {
    const read_result r = read_some(s.get(), buf.data(), sizes.next(), o.timeout_s);
    timed_out = r.timed_out;
    if (r.n == 0) {
      break;
    }
    const std::size_t in_stream =
        static_cast<std::size_t>(std::min<std::uint64_t>(r.n, o.bytes - std::min(got, o.bytes)));
    v.check(got, buf.data(), in_stream);
    extra += r.n - in_stream;
    got += r.n;
  }
  const double secs = seconds_since(start);
  const std::uint64_t counted = std::min(got, o.bytes);
  const std::uint64_t lost = o.bytes - counted;
  const bool ok = lost == 0 && extra == 0 && v.corrupt == 0 && !timed_out;
  return {{"mode", "tcp-recv"},
          {"bytes_expected", o.bytes},
          {"bytes_received", got},
          {"bytes_lost", lost},
          {"extra_bytes", extra},
          {"corrupt_bytes", v.corrupt},
          {"first_bad_offset", v.first_bad},
          {"fnv1a64", hex64(v.got_hash.value())},
          {"expected_fnv1a64_of_received_length", hex64(v.want_hash.value())},
          {"timed_out", timed_out},
          {"seconds", secs},
          {"mbit_s", secs > 0 ? static_cast<double>(got) * 8 / secs / 1e6 : 0.0},
          {"ok", ok}};
}

std::string hex64(std::uint64_t v) {
  char text[17];
  std::snprintf(text, sizeof text, "%016llx", static_cast<unsigned long long>(v));
  return text;
}

}  // namespace unetback::payload_check
