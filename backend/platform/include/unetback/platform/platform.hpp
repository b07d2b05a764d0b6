#pragma once
// A platform opens the per-thread Xen handles: "xen" on a real host, "sim"
// against netfront-sim's shared memory. Everything above runs unchanged.

#include <memory>
#include <string_view>
#include <system_error>

#include "unetback/platform/event_channel.hpp"
#include "unetback/platform/grant_table.hpp"

namespace unetback::platform {

class platform {
 public:
  virtual ~platform() = default;
  /// "xen" or "sim".
  [[nodiscard]] virtual std::string_view name() const = 0;
  /// Our own domain id (dom0 or a driver domain; never assumed to be 0).
  [[nodiscard]] virtual domid self() const = 0;
  /// A new grant handle for one thread. Throws std::system_error on failure.
  virtual std::unique_ptr<grant_table> open_grant_table() = 0;
  /// A new event-channel handle for one thread. Throws std::system_error.
  virtual std::unique_ptr<event_channel> open_event_channel() = 0;
};

}  // namespace unetback::platform
