#include "queue_families.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <utility>

#include "unetback/datapath/queue_counters.hpp"

namespace unetback::metrics {

namespace {

struct counter_doc {
  std::string_view name;
  std::string_view doc;
  counter_field field;
};

// The counters, read from the X-macro list at compile time.
constexpr counter_doc all_counters[] = {
#define UNETBACK_COUNTER_DOC(name, doc) {#name, doc, &datapath::queue_counters_snapshot::name},
    UNETBACK_QUEUE_COUNTERS(UNETBACK_COUNTER_DOC)
#undef UNETBACK_COUNTER_DOC
};

// Counters that share a family, by prefix; the rest of the name is the reason.
struct grouped {
  std::string_view prefix;
  std::string_view family;
  std::string_view help;
};
constexpr grouped groups[] = {
    {"tx_drops_", "unetback_queue_tx_drops_total",
     "Guest TX packets dropped, by reason (unetbackctl stats: tx_drops_<reason>)."},
    {"rx_drops_", "unetback_queue_rx_drops_total",
     "Frames for the guest dropped, by reason (unetbackctl stats: rx_drops_<reason>)."},
};

queue_family& family_named(std::vector<queue_family>& all, std::string_view name,
                           std::string_view help) {
  const auto it = std::find_if(all.begin(), all.end(),
                               [name](const queue_family& f) { return f.name == name; });
  if (it != all.end()) {
    return *it;
  }
  all.push_back(queue_family{std::string(name), std::string(help), {}, 1});
  return all.back();
}

std::vector<queue_family> build() {
  std::vector<queue_family> all;
  for (const counter_doc& c : all_counters) {
    const auto group = std::find_if(std::begin(groups), std::end(groups), [&c](const grouped& g) {
      return c.name.starts_with(g.prefix);
    });
    if (group != std::end(groups)) {
      family_named(all, group->family, group->help)
          .sources.push_back({c.name, c.field, std::string(c.name.substr(group->prefix.size()))});
    } else if (c.name == "poll_us") {
      all.push_back(
          queue_family{"unetback_queue_poll_seconds_total",
                       "Time spent busy-polling, in seconds (unetbackctl stats: poll_us).",
                       {{c.name, c.field, ""}},
                       1e-6});
    } else {
      all.push_back(queue_family{fmt::format("unetback_queue_{}_total", c.name),
                                 fmt::format("{} (unetbackctl stats: {}).", c.doc, c.name),
                                 {{c.name, c.field, ""}},
                                 1});
    }
  }
  return all;
}

}  // namespace

const std::vector<queue_family>& queue_families() {
  static const std::vector<queue_family> all = build();
  return all;
}

}  // namespace unetback::metrics
