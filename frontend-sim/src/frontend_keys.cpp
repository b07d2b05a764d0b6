#include "unetback/sim/netfront/frontend_keys.hpp"

#include <charconv>
#include <stdexcept>

#include <fmt/format.h>

namespace unetback::sim {
namespace {

std::optional<std::uint32_t> parse_u32(std::string_view s) {
  std::uint32_t v = 0;
  if (s.empty() || s.size() > 10) {
    return std::nullopt;
  }
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc{} || end != s.data() + s.size()) {
    return std::nullopt;
  }
  return v;
}

/// A 0/1 feature key; absent => false.
bool read_flag(const key_reader& read, std::string_view key) {
  const auto v = read(key);
  if (!v) {
    return false;
  }
  const auto n = parse_u32(*v);
  if (!n || *n > 1) {
    throw std::runtime_error(fmt::format("backend key {} = '{}' is not 0 or 1", key, *v));
  }
  return *n == 1;
}

}  // namespace

backend_features read_backend_features(const key_reader& read) {
  backend_features f;
  f.rx_copy = read_flag(read, "feature-rx-copy");
  f.sg = read_flag(read, "feature-sg");
  f.gso_tcpv4 = read_flag(read, "feature-gso-tcpv4");
  f.gso_tcpv6 = read_flag(read, "feature-gso-tcpv6");
  f.ipv6_csum_offload = read_flag(read, "feature-ipv6-csum-offload");
  f.split_event_channels = read_flag(read, "feature-split-event-channels");
  f.ctrl_ring = read_flag(read, "feature-ctrl-ring");
  f.multicast_control = read_flag(read, "feature-multicast-control");
  if (const auto v = read("multi-queue-max-queues")) {
    const auto n = parse_u32(*v);
    if (!n || *n == 0) {
      throw std::runtime_error(
          fmt::format("backend key multi-queue-max-queues = '{}' is not a positive number", *v));
    }
    f.multi_queue = true;
    f.max_queues = *n;
  }
  return f;
}

std::uint32_t negotiate_queues(const frontend_request& req, const backend_features& be) {
  const std::uint32_t want = req.queues == 0 ? 1 : req.queues;
  return std::min(want, be.multi_queue ? be.max_queues : 1U);
}

std::vector<std::pair<std::string, std::string>> build_frontend_keys(
    const frontend_request& req, const backend_features& be, const std::vector<queue_keys>& queues,
    const std::optional<ctrl_keys>& ctrl) {
  std::vector<std::pair<std::string, std::string>> keys;
  const auto put = [&keys](std::string k, auto v) {
    keys.emplace_back(std::move(k), fmt::format("{}", v));
  };
  const bool flat = queues.size() == 1;
  for (std::size_t k = 0; k < queues.size(); ++k) {
    const std::string dir = flat ? "" : fmt::format("queue-{}/", k);
    const queue_keys& q = queues[k];
    put(dir + "tx-ring-ref", q.tx_ring_ref.value());
    put(dir + "rx-ring-ref", q.rx_ring_ref.value());
    if (q.split) {
      put(dir + "event-channel-tx", q.tx_port.value());
      put(dir + "event-channel-rx", q.rx_port.value());
    } else {
      put(dir + "event-channel", q.tx_port.value());
    }
  }
  if (be.multi_queue) {
    put("multi-queue-num-queues", queues.size());
  }
  put("request-rx-copy", 1);
  put("feature-rx-notify", 1);
  put("feature-sg", req.sg ? 1 : 0);
  put("feature-gso-tcpv4", req.sg && req.gso ? 1 : 0);
  put("feature-gso-tcpv6", req.sg && req.gso ? 1 : 0);
  put("feature-ipv6-csum-offload", req.ipv6_csum_offload && !req.no_csum_offload ? 1 : 0);
  if (req.no_csum_offload) {
    put("feature-no-csum-offload", 1);
  }
  if (req.multicast_control && be.multicast_control) {
    put("request-multicast-control", 1);
  }
  if (ctrl) {
    put("ctrl-ring-ref", ctrl->ring_ref.value());
    put("event-channel-ctrl", ctrl->port.value());
  }
  return keys;
}

std::optional<int> parse_xenbus_state(std::string_view s) {
  const auto v = parse_u32(s);
  if (!v || *v > 8) {
    return std::nullopt;
  }
  return static_cast<int>(*v);
}

}  // namespace unetback::sim
