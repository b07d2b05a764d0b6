#include "unetback/datapath/queue_counters.hpp"

namespace unetback::datapath {

queue_counters_snapshot snapshot(const queue_counters& c) {
  queue_counters_snapshot s;
#define UNETBACK_COPY_COUNTER(name, doc) s.name = c.name.load(std::memory_order_relaxed);
  UNETBACK_QUEUE_COUNTERS(UNETBACK_COPY_COUNTER)
#undef UNETBACK_COPY_COUNTER
  return s;
}

nlohmann::json to_json(const queue_counters_snapshot& s) {
  nlohmann::json j = nlohmann::json::object();
  s.for_each_field(
      [&j](std::string_view name, std::uint64_t value) { j[std::string(name)] = value; });
  return j;
}

std::string_view describe_counter(std::string_view name) {
#define UNETBACK_DESCRIBE_COUNTER(counter, doc) \
  if (name == #counter) {                       \
    return doc;                                 \
  }
  UNETBACK_QUEUE_COUNTERS(UNETBACK_DESCRIBE_COUNTER)
#undef UNETBACK_DESCRIBE_COUNTER
  return {};
}

}  // namespace unetback::datapath
