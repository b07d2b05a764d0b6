#pragma once
// The real-Xen platform: grant tables over libxengnttab (/dev/xen/gntdev) and
// event channels over libxenevtchn (/dev/xen/evtchn). A thin, direct mapping:
// grant-copy batches are handed to xengnttab_grant_copy unchanged, errors are
// std::error_code/std::system_error built from errno (docs/protocol.md §5.1-5.2).

#include <cstdint>
#include <memory>
#include <string_view>

#include "unetback/platform/platform.hpp"

namespace unetback::platform {

class xen_platform final : public platform {
 public:
  /// Grants a grant handle may keep mapped (xengnttab_set_max_grants): the
  /// ring pages of one queue plus a control ring, with room to spare.
  static constexpr std::uint32_t default_max_grants = 64;

  explicit xen_platform(domid self, std::uint32_t max_grants = default_max_grants)
      : self_(self), max_grants_(max_grants) {}

  [[nodiscard]] std::string_view name() const override { return "xen"; }
  [[nodiscard]] domid self() const override { return self_; }
  /// xengnttab_open + xengnttab_set_max_grants; throws std::system_error.
  std::unique_ptr<grant_table> open_grant_table() override;
  /// xenevtchn_open; throws std::system_error.
  std::unique_ptr<event_channel> open_event_channel() override;

 private:
  domid self_;
  std::uint32_t max_grants_;
};

}  // namespace unetback::platform
