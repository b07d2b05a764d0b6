#include "unetback/service/logging.hpp"

#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <stdexcept>
#include <utility>

#include "unetback/service/journal_sink.hpp"

namespace unetback::service {

namespace {

constexpr const char* journald_socket = "/run/systemd/journal/socket";

std::string lower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

constexpr std::array<std::pair<std::string_view, spdlog::level::level_enum>, 9> level_table{{
    {"trace", spdlog::level::trace},
    {"debug", spdlog::level::debug},
    {"info", spdlog::level::info},
    {"warning", spdlog::level::warn},
    {"warn", spdlog::level::warn},
    {"error", spdlog::level::err},
    {"err", spdlog::level::err},
    {"critical", spdlog::level::critical},
    {"off", spdlog::level::off},
}};

bool parse_u64(std::string_view s, std::uint64_t& out) {
  const auto* end = s.data() + s.size();
  const auto [p, ec] = std::from_chars(s.data(), end, out);
  return ec == std::errc{} && p == end && !s.empty();
}

std::shared_ptr<spdlog::logger> make_logger(log_target target, const std::string& identifier) {
  if (target == log_target::journal) {
    return std::make_shared<spdlog::logger>(identifier, std::make_shared<journal_sink>(identifier));
  }
  auto logger = std::make_shared<spdlog::logger>(
      identifier, std::make_shared<spdlog::sinks::stderr_color_sink_mt>());
  logger->set_pattern("[%Y-%m-%d %H:%M:%S.%e] [%^%l%$] %v");
  return logger;
}

}  // namespace

spdlog::level::level_enum parse_log_level(std::string_view name) {
  const auto key = lower(name);
  for (const auto& [n, level] : level_table) {
    if (key == n) {
      return level;
    }
  }
  throw std::invalid_argument("unknown log level '" + std::string(name) +
                              "' (allowed: " + std::string(log_level_names) + ")");
}

std::string_view log_level_name(spdlog::level::level_enum level) {
  switch (level) {
    case spdlog::level::trace:
      return "trace";
    case spdlog::level::debug:
      return "debug";
    case spdlog::level::info:
      return "info";
    case spdlog::level::warn:
      return "warning";
    case spdlog::level::err:
      return "error";
    case spdlog::level::critical:
      return "critical";
    case spdlog::level::off:
    case spdlog::level::n_levels:
      break;
  }
  return "off";
}

log_target parse_log_target(std::string_view name) {
  const auto key = lower(name);
  if (key == "auto") {
    return log_target::automatic;
  }
  if (key == "journal") {
    return log_target::journal;
  }
  if (key == "stderr") {
    return log_target::standard_error;
  }
  throw std::invalid_argument("unknown log target '" + std::string(name) +
                              "' (allowed: " + std::string(log_target_names) + ")");
}

bool stderr_is_journal() {
  const char* env = std::getenv("JOURNAL_STREAM");
  if (env == nullptr) {
    return false;
  }
  const std::string_view value(env);
  const auto colon = value.find(':');
  std::uint64_t dev = 0;
  std::uint64_t ino = 0;
  if (colon == std::string_view::npos || !parse_u64(value.substr(0, colon), dev) ||
      !parse_u64(value.substr(colon + 1), ino)) {
    return false;
  }
  struct stat st {};
  if (::fstat(STDERR_FILENO, &st) != 0) {
    return false;
  }
  return static_cast<std::uint64_t>(st.st_dev) == dev &&
         static_cast<std::uint64_t>(st.st_ino) == ino;
}

log_target resolve_log_target(log_target requested) {
  if (requested != log_target::automatic) {
    return requested;
  }
  return stderr_is_journal() ? log_target::journal : log_target::standard_error;
}

log_target configure_logging(log_target target, spdlog::level::level_enum level,
                             const std::string& identifier) {
  auto effective = resolve_log_target(target);
  if (effective == log_target::journal && ::access(journald_socket, W_OK) != 0) {
    if (target == log_target::automatic) {
      effective = log_target::standard_error;  // stderr still reaches systemd's stream
    } else {
      throw std::runtime_error(std::string("log target 'journal': journald is not reachable (") +
                               journald_socket + " missing); use --log-target stderr");
    }
  }
  auto logger = make_logger(effective, identifier);
  logger->set_level(level);
  spdlog::set_default_logger(std::move(logger));
  spdlog::set_level(level);
  return effective;
}

}  // namespace unetback::service
