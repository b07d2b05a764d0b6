#pragma once
// Readiness and status reporting to systemd (sd_notify(3)), for a Type=notify unit.
// Every function is a harmless no-op when the daemon does not run under systemd
// (NOTIFY_SOCKET unset): it then returns false and sends nothing.

#include <string_view>

namespace unetback::service {

/// Sends "READY=1" (plus "STATUS=<status>" when non-empty): the daemon watches
/// backend/vif and serves the control socket, so `systemctl start` may return and
/// units ordered after it (xendomains) may start guests. Returns true if sent.
bool notify_ready(std::string_view status = {});

/// Sends "STOPPING=1" (plus STATUS): shutdown has begun, every vif is being walked
/// to Closed. Returns true if sent.
bool notify_stopping(std::string_view status = {});

/// Sends "STATUS=<text>" (shown by `systemctl status`), e.g. "serving 3 vifs".
/// Newlines in `text` are replaced by spaces (one notify line per field).
/// Returns true if sent.
bool notify_status(std::string_view text);

}  // namespace unetback::service
