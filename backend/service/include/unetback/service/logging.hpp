#pragma once
// Where unetbackd's log goes and how verbose it is: --log-target / log-target and
// --log-level / log-level (unetbackd(8), unetback.toml(5)), and the control socket's
// `log-level` command. configure_logging() installs spdlog's default logger, which
// every component logs through (spdlog::info(...), UNETBACK_LOG_LIMITED,
// UNETBACK_LOG_RATELIMITED).

#include <spdlog/common.h>

#include <string>
#include <string_view>

namespace unetback::service {

/// Names accepted by parse_log_level, for help texts and error messages.
inline constexpr std::string_view log_level_names =
    "trace, debug, info, warning, error, critical, off";
/// Names accepted by parse_log_target.
inline constexpr std::string_view log_target_names = "auto, journal, stderr";

enum class log_target {
  automatic,       ///< "auto": journal when stderr is journald's stream, else stderr
  journal,         ///< "journal": structured records via sd_journal_sendv
  standard_error,  ///< "stderr": one text line per record on fd 2
};

/// Parses a level name (case-insensitive; "warn" and "err" are accepted too, as
/// spdlog spells them). Throws std::invalid_argument naming the allowed values;
/// never falls back silently (spdlog::level::from_str turns typos into "off").
[[nodiscard]] spdlog::level::level_enum parse_log_level(std::string_view name);

/// The canonical name of a level ("warning", "error", ...).
[[nodiscard]] std::string_view log_level_name(spdlog::level::level_enum level);

/// Parses "auto", "journal" or "stderr"; throws std::invalid_argument otherwise.
[[nodiscard]] log_target parse_log_target(std::string_view name);

/// True when fd 2 is the stream systemd connected to journald: JOURNAL_STREAM
/// ("<dev>:<inode>", systemd.exec(5)) names the same file as fstat(2). A service's
/// stderr redirected elsewhere, or a shell's JOURNAL_STREAM inherited by a child
/// whose stderr is a file, does not count.
[[nodiscard]] bool stderr_is_journal();

/// automatic → journal if stderr_is_journal(), else standard_error; others unchanged.
[[nodiscard]] log_target resolve_log_target(log_target requested);

/// Replaces spdlog's default logger with one writing to `target` at `level`, and
/// returns the target actually used. Throws std::runtime_error when "journal" is
/// requested but journald's socket (/run/systemd/journal/socket) is missing.
log_target configure_logging(log_target target, spdlog::level::level_enum level,
                             const std::string& identifier = "unetbackd");

}  // namespace unetback::service
