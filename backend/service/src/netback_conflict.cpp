#include "unetback/service/netback_conflict.hpp"

#include <algorithm>
#include <system_error>
#include <vector>

namespace unetback::service {

namespace fs = std::filesystem;

namespace {

bool present(const fs::path& p) {
  std::error_code ec;
  return fs::exists(fs::symlink_status(p, ec));
}

// Entries named vif-<domid>-<devid> in the driver's directory: the devices the
// kernel driver is bound to (sysfs links them there on bind).
std::vector<std::string> bound_vifs(const fs::path& driver_dir) {
  std::vector<std::string> names;
  std::error_code ec;
  for (fs::directory_iterator it(driver_dir, ec), end; !ec && it != end; it.increment(ec)) {
    auto name = it->path().filename().string();
    if (name.rfind("vif-", 0) == 0) {
      names.push_back(std::move(name));
    }
  }
  std::sort(names.begin(), names.end());
  return names;
}

std::string join(const std::vector<std::string>& items) {
  std::string out;
  for (const auto& item : items) {
    out += out.empty() ? "" : ", ";
    out += item;
  }
  return out;
}

}  // namespace

std::optional<std::string> kernel_netback_conflict(const fs::path& sysfs_root) {
  const auto module_dir = sysfs_root / "module" / "xen_netback";
  const auto driver_dir = sysfs_root / "bus" / "xen-backend" / "drivers" / "vif";
  std::vector<std::string> findings;
  if (present(module_dir)) {
    findings.push_back("the xen-netback module is loaded (" + module_dir.string() + ")");
  }
  if (present(driver_dir)) {
    auto finding =
        "a 'vif' driver is registered on the xen-backend bus (" + driver_dir.string() + ")";
    if (const auto vifs = bound_vifs(driver_dir); !vifs.empty()) {
      finding += " and serves " + join(vifs);
    }
    findings.push_back(std::move(finding));
  }
  if (findings.empty()) {
    return std::nullopt;
  }
  return "the kernel's Xen network backend is active: " + join(findings) +
         ". It and unetbackd would both serve backend/vif. Shut down or detach the guests "
         "it serves, run `modprobe -r xen-netback`, and keep it from loading again with "
         "/lib/modprobe.d/unetback.conf (installed by the package; see unetbackd(8))";
}

}  // namespace unetback::service
