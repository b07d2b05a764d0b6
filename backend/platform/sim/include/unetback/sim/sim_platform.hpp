#pragma once
// The backend side of the simulated hypervisor (`unetbackd --platform sim`):
// grant tables and event channels over the memory files and endpoints that
// netfront-sim's guest_domain publishes under sim_dir (docs/sim-platform.md).
//
// What Xen enforces, the sim enforces (each grant-copy segment gets its own
// status): a grant is usable only by its grantee (GNTST_permission_denied),
// read-only grants cannot be written (GNTST_permission_denied), a ref beyond
// the table or not GTF_permit_access (revoked) is GNTST_bad_gntref, a frame
// outside the guest or a foreign offset+len > 4096 is GNTST_bad_copy_arg, a
// missing (or exited) guest is GNTST_bad_domain. An event-channel port can be
// bound only by the domain it was offered to, and only once at a time; an
// unbind or the binder's death makes it bindable again.

#include <filesystem>
#include <memory>
#include <string_view>

#include "unetback/platform/platform.hpp"

namespace unetback::sim {

class sim_platform final : public ::unetback::platform::platform {
 public:
  /// `sim_dir` holds dom<D>.mem files and evtchn/ sockets; `self` is the
  /// backend's domain id (grants must be made out to it). Throws
  /// std::invalid_argument if sim_dir is too long for unix socket paths.
  sim_platform(std::filesystem::path sim_dir, domid self);

  [[nodiscard]] std::string_view name() const override { return "sim"; }
  [[nodiscard]] domid self() const override { return self_; }
  std::unique_ptr<::unetback::platform::grant_table> open_grant_table() override;
  std::unique_ptr<::unetback::platform::event_channel> open_event_channel() override;

  [[nodiscard]] const std::filesystem::path& sim_dir() const { return sim_dir_; }

 private:
  std::filesystem::path sim_dir_;
  domid self_;
};

}  // namespace unetback::sim
