// Frontend key parsing (docs/protocol.md §1.7/§1.8, Linux netback
// connect()/connect_data_rings()/read_xenbus_vif_flags(), made strict).

#include "unetback/control/frontend_keys.hpp"

#include <cstddef>

#include "key_parser.hpp"

namespace unetback::control {

namespace {

using detail::key_parser;

/// The most characters a thread name may have (TASK_COMM_LEN - 1).
constexpr std::size_t max_thread_name = 15;

/// "vif<D>.<N><suffix>"; without the "vif" when that is too long, cut to fit.
std::string thread_name(const vif_id& vif, const std::string& suffix) {
  const std::string name = vif.name() + suffix;
  constexpr std::size_t prefix = 3;  // "vif"
  return name.size() <= max_thread_name ? name : name.substr(prefix, max_thread_name);
}

// tx-ring-ref, rx-ring-ref and the event channel(s) of one queue, read from
// `dir` ("" for a single queue, "queue-K/" for several).
datapath::queue_config parse_queue(key_parser& p, const std::string& dir, unsigned index,
                                   const frontend_limits& limits) {
  datapath::queue_config q;
  q.name = queue_thread_name(limits.vif, index);
  q.frontend = limits.vif.frontend;
  q.index = queue_index{index};
  q.tuning = limits.tuning;
  q.tx_ring_ref =
      grant_ref{static_cast<std::uint32_t>(p.number(dir + "tx-ring-ref", 0, UINT32_MAX))};
  q.rx_ring_ref =
      grant_ref{static_cast<std::uint32_t>(p.number(dir + "rx-ring-ref", 0, UINT32_MAX))};
  // Split channels when both -tx and -rx exist, else the shared one (Linux
  // falls back to event-channel when either split key is missing).
  const bool split = p.present(dir + "event-channel-tx") && p.present(dir + "event-channel-rx");
  q.split_event_channels = split;
  if (split) {
    q.tx_port = evtchn_port{
        static_cast<std::uint32_t>(p.number(dir + "event-channel-tx", 1, max_evtchn_port))};
    q.rx_port = evtchn_port{
        static_cast<std::uint32_t>(p.number(dir + "event-channel-rx", 1, max_evtchn_port))};
  } else {
    const auto port = evtchn_port{
        static_cast<std::uint32_t>(p.number(dir + "event-channel", 1, max_evtchn_port))};
    q.tx_port = port;
    q.rx_port = port;
  }
  return q;
}

datapath::frontend_features parse_features(key_parser& p) {
  datapath::frontend_features f;
  f.rx_notify = p.flag("feature-rx-notify");
  f.sg = p.flag("feature-sg");
  f.gso_tcpv4 = p.flag("feature-gso-tcpv4");
  f.gso_tcpv6 = p.flag("feature-gso-tcpv6");
  f.ipv6_csum_offload = p.flag("feature-ipv6-csum-offload");
  f.no_csum_offload = p.flag("feature-no-csum-offload");
  f.multicast_control = p.flag("request-multicast-control");
  return f;
}

// ctrl-ring-ref and event-channel-ctrl: both or neither (§4.1).
std::optional<ctrl_ring_keys> parse_ctrl_ring(key_parser& p) {
  const bool has_ref = p.present("ctrl-ring-ref");
  const bool has_port = p.present("event-channel-ctrl");
  if (has_ref != has_port) {
    p.fail(key_error::kind::inconsistent, has_ref ? "event-channel-ctrl" : "ctrl-ring-ref",
           "the control ring needs ctrl-ring-ref and event-channel-ctrl");
    return std::nullopt;
  }
  if (!has_ref) {
    return std::nullopt;
  }
  ctrl_ring_keys c{
      grant_ref{static_cast<std::uint32_t>(p.number("ctrl-ring-ref", 0, UINT32_MAX))},
      evtchn_port{static_cast<std::uint32_t>(p.number("event-channel-ctrl", 1, max_evtchn_port))}};
  return c;
}

}  // namespace

std::string queue_thread_name(const vif_id& vif, unsigned queue) {
  return thread_name(vif, "-q" + std::to_string(queue));
}

std::string ctrl_thread_name(const vif_id& vif) {
  return thread_name(vif, "-ctrl");
}

key_result<frontend_config> parse_frontend_keys(const key_reader& read,
                                                const frontend_limits& limits) {
  key_parser p(read);
  frontend_config cfg;
  // request-rx-copy: copying is the only receive mode there is (QEMU refuses 0
  // too); any non-zero value requests it, as for Linux.
  (void)p.number("request-rx-copy", 1, UINT32_MAX);
  const auto num_queues =
      static_cast<unsigned>(p.number_or("multi-queue-num-queues", 1, limits.max_queues, 1));
  for (unsigned k = 0; p.ok() && k < num_queues; ++k) {
    const std::string dir = num_queues == 1 ? std::string() : "queue-" + std::to_string(k) + "/";
    cfg.queues.push_back(parse_queue(p, dir, k, limits));
  }
  cfg.features = parse_features(p);
  for (auto& q : cfg.queues) {
    q.features = cfg.features;
  }
  cfg.ctrl_ring = parse_ctrl_ring(p);
  cfg.xdp_headroom =
      static_cast<std::uint32_t>(p.number_or("xdp-headroom", 0, limits.max_xdp_headroom, 0));
  if (!p.ok()) {
    return p.error();
  }
  return cfg;
}

}  // namespace unetback::control
