#include "unetback/service/notify.hpp"

#include <systemd/sd-daemon.h>

#include <algorithm>
#include <string>

namespace unetback::service {

namespace {

// sd_notify's state is newline-separated "KEY=value" assignments.
std::string status_field(std::string_view text) {
  std::string field = "STATUS=";
  field.append(text);
  std::replace(field.begin(), field.end(), '\n', ' ');
  return field;
}

bool send(const std::string& state) {
  // unset_environment = 0: the watchdog and later notifications still need
  // NOTIFY_SOCKET. sd_notify returns 0 (not sent) without NOTIFY_SOCKET.
  return sd_notify(0, state.c_str()) > 0;
}

std::string with_status(std::string state, std::string_view status) {
  if (!status.empty()) {
    state += '\n';
    state += status_field(status);
  }
  return state;
}

}  // namespace

bool notify_ready(std::string_view status) {
  return send(with_status("READY=1", status));
}

bool notify_stopping(std::string_view status) {
  return send(with_status("STOPPING=1", status));
}

bool notify_status(std::string_view text) {
  return send(status_field(text));
}

}  // namespace unetback::service
