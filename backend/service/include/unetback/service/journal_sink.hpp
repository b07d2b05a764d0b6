#pragma once
// An spdlog sink that writes each record to journald with sd_journal_sendv(3):
// MESSAGE, PRIORITY (syslog level from the spdlog level), SYSLOG_IDENTIFIER, TID,
// UNETBACK_THREAD (the thread's name, e.g. "vif3.0-q1") and, when known, CODE_FILE /
// CODE_LINE / CODE_FUNC. So `journalctl -u unetbackd -p warning` filters by
// severity and `journalctl UNETBACK_THREAD=vif3.0-q1` follows one queue's worker.
//
// spdlog 1.10's own systemd_sink has no thread field and throws when journald is
// unreachable; this one falls back to stderr instead (a log line must never take
// the daemon down).

#include <spdlog/details/log_msg.h>
#include <spdlog/sinks/base_sink.h>

#include <mutex>
#include <string>

namespace unetback::service {

/// The syslog priority (LOG_DEBUG..LOG_CRIT, sd-journal's PRIORITY=) for a level.
/// trace and debug map to LOG_DEBUG; critical to LOG_CRIT.
[[nodiscard]] int journal_priority(spdlog::level::level_enum level);

class journal_sink final : public spdlog::sinks::base_sink<std::mutex> {
 public:
  /// `identifier` becomes SYSLOG_IDENTIFIER (what `journalctl -t` selects).
  explicit journal_sink(std::string identifier);

 protected:
  void sink_it_(const spdlog::details::log_msg& msg) override;
  void flush_() override {}

 private:
  std::string identifier_;
};

}  // namespace unetback::service
