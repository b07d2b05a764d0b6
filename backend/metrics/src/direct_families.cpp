#include "direct_families.hpp"

#include <array>
#include <cstdint>
#include <string>

#include "vif_labels.hpp"

namespace unetback::metrics {

namespace {

using count_field = std::uint64_t direct::direct_counts::*;

struct direct_family {
  const char* name;
  const char* help;
  count_field field;
};

constexpr std::array<direct_family, 5> plain_families{{
    {"unetback_direct_tx_packets_total",
     "Guest frames handed to a paired vif's queue, past the TAP and the bridge.",
     &direct::direct_counts::tx_packets},
    {"unetback_direct_tx_bytes_total", "Their Ethernet bytes.", &direct::direct_counts::tx_bytes},
    {"unetback_direct_rx_packets_total", "Frames taken from a paired vif's ring for the guest.",
     &direct::direct_counts::rx_packets},
    {"unetback_direct_rx_bytes_total", "Their Ethernet bytes.", &direct::direct_counts::rx_bytes},
    {"unetback_direct_learning_frames_total",
     "Frames written through the TAP only to keep the bridge's FDB entry of the guest's MAC.",
     &direct::direct_counts::learning_frames},
}};

/// Calls f(queue labels, counts) for every queue of every vif with the direct path.
template <class F>
void each_queue(const std::vector<control::vif_status>& vifs, F f) {
  for (const control::vif_status& v : vifs) {
    if (!v.direct) {
      continue;
    }
    for (std::size_t q = 0; q < v.direct->queues.size(); ++q) {
      f(with(vif_labels(v), "queue", std::to_string(q)), v.direct->queues[q]);
    }
  }
}

}  // namespace

void direct_families(exposition& out, const std::vector<control::vif_status>& vifs) {
  for (const direct_family& f : plain_families) {
    out.family(f.name, metric_type::counter, f.help);
    each_queue(vifs, [&](const labels& l, const direct::direct_counts& c) {
      out.sample(f.name, l, c.*f.field);
    });
  }
  const char* drops = "unetback_direct_drops_total";
  out.family(drops, metric_type::counter,
             "Frames the direct path dropped: ring_full (the peer's queue was behind), "
             "too_big (longer than the reader's buffer).");
  each_queue(vifs, [&](const labels& l, const direct::direct_counts& c) {
    out.sample(drops, with(l, "reason", "ring_full"), c.tx_drops_full);
    out.sample(drops, with(l, "reason", "too_big"), c.rx_drops_too_big);
  });
  const char* to_host = "unetback_direct_to_host_total";
  out.family(to_host, metric_type::counter,
             "Guest frames sent through the TAP although the vif offers the direct path, by "
             "reason.");
  each_queue(vifs, [&](const labels& l, const direct::direct_counts& c) {
    for (std::size_t r = 1; r < c.to_host.size(); ++r) {  // 0 is `direct`: never to the host
      out.sample(to_host, with(l, "reason", direct::label_of(static_cast<direct::route_reason>(r))),
                 c.to_host[r]);
    }
  });
}

}  // namespace unetback::metrics
