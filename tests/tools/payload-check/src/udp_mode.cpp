// UDP modes: each datagram is {u64 seq, u64 stream offset, payload}, the
// payload being the seed's stream at that offset, sizes seeded and random.
// The receiver verifies every payload and counts unique, duplicate,
// corrupted and malformed datagrams; loss = sender's count - unique.

#include <poll.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <system_error>
#include <thread>
#include <vector>

#include "modes.hpp"
#include "net.hpp"
#include "pattern.hpp"

namespace unetback::payload_check {

namespace {

constexpr std::size_t header_size = 16;

void put_u64(std::uint8_t* p, std::uint64_t v) {
  for (unsigned i = 0; i < 8; ++i) {
    p[i] = static_cast<std::uint8_t>(v >> (8U * i));
  }
}

std::uint64_t get_u64(const std::uint8_t* p) {
  std::uint64_t v = 0;
  for (unsigned i = 0; i < 8; ++i) {
    v |= std::uint64_t{p[i]} << (8U * i);
  }
  return v;
}

// Sends one datagram; ENOBUFS/EAGAIN (a full local queue) is retried after a
// short pause and counted, so every datagram counted as sent left this host.
std::uint64_t send_datagram(int fd, const std::uint8_t* data, std::size_t n) {
  std::uint64_t retries = 0;
  while (::send(fd, data, n, 0) < 0) {
    // ECONNREFUSED: an ICMP port-unreachable for an earlier datagram (the
    // receiver was not bound yet); that datagram is lost, this one is retried.
    if (errno != ENOBUFS && errno != EAGAIN && errno != EINTR && errno != ECONNREFUSED) {
      throw std::system_error(errno, std::generic_category(), "send");
    }
    ++retries;
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
  return retries;
}

// Sleeps while the bytes sent so far are ahead of the pacing rate.
void pace(double rate_mbit, std::uint64_t bytes, std::chrono::steady_clock::time_point start) {
  if (rate_mbit <= 0) {
    return;
  }
  const double due_s = static_cast<double>(bytes) * 8 / (rate_mbit * 1e6);
  const double ahead = due_s - seconds_since(start);
  if (ahead > 0.0005) {
    std::this_thread::sleep_for(std::chrono::duration<double>(ahead));
  }
}

struct receive_tally {
  std::vector<bool> seen;
  std::uint64_t unique = 0;
  std::uint64_t duplicates = 0;
  std::uint64_t corrupt = 0;
  std::uint64_t malformed = 0;
  std::uint64_t bytes = 0;
};

void tally(receive_tally& t, const pattern& stream, std::vector<std::uint8_t>& want,
           const std::uint8_t* d, std::size_t n, std::uint64_t max_datagrams) {
  const std::uint64_t seq = n >= header_size ? get_u64(d) : max_datagrams;
  if (seq >= max_datagrams) {
    ++t.malformed;
    return;
  }
  if (t.seen.size() <= seq) {
    t.seen.resize(static_cast<std::size_t>(seq) + 1);
  }
  if (t.seen[static_cast<std::size_t>(seq)]) {
    ++t.duplicates;
    return;
  }
  t.seen[static_cast<std::size_t>(seq)] = true;
  ++t.unique;
  t.bytes += n - header_size;
  want.resize(n - header_size);
  stream.fill(get_u64(d + 8), want);
  if (std::memcmp(d + header_size, want.data(), want.size()) != 0) {
    ++t.corrupt;
  }
}

}  // namespace

nlohmann::json udp_send(const mode_options& o) {
  fd_owner s = udp_connect(parse_endpoint(o.endpoint));
  const auto start = std::chrono::steady_clock::now();
  const pattern stream(o.seed);
  const std::size_t max_payload =
      std::max<std::size_t>(o.max_datagram, header_size + 1) - header_size;
  size_source sizes(o.seed, max_payload);
  std::vector<std::uint8_t> buf(header_size + max_payload);
  std::uint64_t offset = 0;
  std::uint64_t seq = 0;
  std::uint64_t retries = 0;
  while (offset < o.bytes) {
    const std::size_t n =
        static_cast<std::size_t>(std::min<std::uint64_t>(sizes.next(), o.bytes - offset));
    put_u64(buf.data(), seq);
    put_u64(buf.data() + 8, offset);
    stream.fill(offset, {buf.data() + header_size, n});
    retries += send_datagram(s.get(), buf.data(), header_size + n);
    offset += n;
    ++seq;
    pace(o.rate_mbit, offset, start);
  }
  const double secs = seconds_since(start);
  return {{"mode", "udp-send"},
          {"datagrams_sent", seq},
          {"bytes_sent", offset},
          {"send_retries", retries},
          {"seconds", secs},
          {"mbit_s", secs > 0 ? static_cast<double>(offset) * 8 / secs / 1e6 : 0.0},
          {"ok", true}};
}

nlohmann::json udp_recv(const mode_options& o) {
  fd_owner s = udp_bind(parse_endpoint(o.endpoint), o.rcvbuf);
  const pattern stream(o.seed);
  receive_tally t;
  std::vector<std::uint8_t> buf(65536);
  std::vector<std::uint8_t> want;
  pollfd p{s.get(), POLLIN, 0};
  auto start = std::chrono::steady_clock::now();
  // Before the first datagram wait up to timeout_s; after it, idle_ms.
  for (;;) {
    const unsigned wait_ms = t.unique + t.malformed == 0 ? o.timeout_s * 1000 : o.idle_ms;
    if (::poll(&p, 1, static_cast<int>(wait_ms)) <= 0) {
      break;
    }
    const ssize_t n = ::recv(s.get(), buf.data(), buf.size(), 0);
    if (n < 0) {
      continue;
    }
    if (t.unique + t.malformed == 0) {
      start = std::chrono::steady_clock::now();
    }
    tally(t, stream, want, buf.data(), static_cast<std::size_t>(n), o.max_datagrams);
  }
  const double secs = std::max(0.0, seconds_since(start) - o.idle_ms / 1000.0);
  return {{"mode", "udp-recv"},
          {"datagrams_received", t.unique},
          {"duplicates", t.duplicates},
          {"corrupt_datagrams", t.corrupt},
          {"malformed", t.malformed},
          {"bytes_received", t.bytes},
          {"highest_seq_plus_1", t.seen.size()},
          {"seconds", secs},
          {"ok", t.corrupt == 0 && t.malformed == 0 && t.duplicates == 0}};
}

}  // namespace unetback::payload_check
