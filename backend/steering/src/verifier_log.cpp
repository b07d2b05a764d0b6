#include "unetback/steering/verifier_log.hpp"

#include <algorithm>

namespace unetback::steering {

namespace {

bool is_summary(std::string_view line) {
  return line.starts_with("processed ") || line.starts_with("verification time");
}

}  // namespace

std::string verifier_verdict(std::string_view libbpf_messages) {
  const std::size_t begin_marker = libbpf_messages.find("-- BEGIN PROG LOAD LOG --");
  const std::size_t end_marker = libbpf_messages.find("-- END PROG LOAD LOG --");
  if (begin_marker == std::string_view::npos || end_marker == std::string_view::npos ||
      end_marker < begin_marker) {
    return {};
  }
  std::string_view log = libbpf_messages.substr(begin_marker, end_marker - begin_marker);
  log.remove_prefix(std::min(log.size(), log.find('\n') + 1));  // the BEGIN line itself
  // Each pass drops the log's last line (and the newlines after it).
  while (true) {
    while (!log.empty() && log.back() == '\n') {
      log.remove_suffix(1);
    }
    if (log.empty()) {
      return {};
    }
    const std::size_t nl = log.rfind('\n');
    const std::size_t start = nl == std::string_view::npos ? 0 : nl + 1;
    const std::string_view line = log.substr(start);
    if (!is_summary(line)) {
      return std::string(line);
    }
    log = log.substr(0, start);
  }
}

}  // namespace unetback::steering
