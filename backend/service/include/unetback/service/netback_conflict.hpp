#pragma once
// Coexistence with the kernel's xen-netback (docs/protocol.md §1.11): only one
// backend may serve /local/domain/0/backend/vif. libxl always writes vif backends
// there (§0, §8.4), and the kernel module, when present, binds them through the
// xen-backend bus (modalias xen-backend:vif). Two backends racing on the same
// XenStore nodes corrupt the handshake of every guest, so unetbackd --platform xen
// refuses to start while the module is loaded or its driver is registered.

#include <filesystem>
#include <optional>
#include <string>

namespace unetback::service {

/// Returns a message for the operator when the kernel netback is active under
/// `sysfs_root`: /sys/module/xen_netback exists (module loaded, or built in), or a
/// `vif` driver is registered on /sys/bus/xen-backend (the message lists the vif
/// devices it has bound, e.g. vif-3-0). std::nullopt when neither is found,
/// including when `sysfs_root` does not exist (not a Linux sysfs).
[[nodiscard]] std::optional<std::string> kernel_netback_conflict(
    const std::filesystem::path& sysfs_root = "/sys");

}  // namespace unetback::service
