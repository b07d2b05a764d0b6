#include "unetback/service/journal_sink.hpp"

#include <pthread.h>
#include <sys/uio.h>
#include <syslog.h>
#include <systemd/sd-journal.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string_view>
#include <vector>

namespace unetback::service {

namespace {

std::string field(std::string_view key, std::string_view value) {
  std::string f;
  f.reserve(key.size() + 1 + value.size());
  f.append(key).append("=").append(value);
  return f;
}

std::string current_thread_name() {
  std::array<char, 16> name{};  // the kernel's limit (TASK_COMM_LEN)
  if (pthread_getname_np(pthread_self(), name.data(), name.size()) != 0) {
    return {};
  }
  return std::string(name.data());
}

std::vector<std::string> journal_fields(const std::string& identifier,
                                        const spdlog::details::log_msg& msg) {
  std::vector<std::string> fields;
  fields.reserve(8);
  fields.push_back(field("MESSAGE", std::string_view(msg.payload.data(), msg.payload.size())));
  fields.push_back(field("PRIORITY", std::to_string(journal_priority(msg.level))));
  fields.push_back(field("SYSLOG_IDENTIFIER", identifier));
  fields.push_back(field("TID", std::to_string(msg.thread_id)));
  if (auto name = current_thread_name(); !name.empty()) {
    fields.push_back(field("UNETBACK_THREAD", name));
  }
  if (!msg.source.empty()) {
    fields.push_back(field("CODE_FILE", msg.source.filename));
    fields.push_back(field("CODE_LINE", std::to_string(msg.source.line)));
    fields.push_back(field("CODE_FUNC", msg.source.funcname));
  }
  return fields;
}

}  // namespace

int journal_priority(spdlog::level::level_enum level) {
  switch (level) {
    case spdlog::level::trace:
    case spdlog::level::debug:
      return LOG_DEBUG;
    case spdlog::level::info:
      return LOG_INFO;
    case spdlog::level::warn:
      return LOG_WARNING;
    case spdlog::level::err:
      return LOG_ERR;
    case spdlog::level::critical:
      return LOG_CRIT;
    case spdlog::level::off:
    case spdlog::level::n_levels:
      break;
  }
  return LOG_INFO;
}

journal_sink::journal_sink(std::string identifier) : identifier_(std::move(identifier)) {}

void journal_sink::sink_it_(const spdlog::details::log_msg& msg) {
  const auto fields = journal_fields(identifier_, msg);
  std::vector<iovec> iov;
  iov.reserve(fields.size());
  for (const auto& f : fields) {
    // NOLINTNEXTLINE(cppcoreguidelines-pro-type-const-cast): sd_journal_sendv only reads
    iov.push_back(iovec{const_cast<char*>(f.data()), f.size()});
  }
  const int rc = sd_journal_sendv(iov.data(), static_cast<int>(iov.size()));
  if (rc < 0) {
    std::fprintf(stderr, "%s: journal unreachable (%s): %.*s\n", identifier_.c_str(),
                 std::strerror(-rc), static_cast<int>(msg.payload.size()), msg.payload.data());
  }
}

}  // namespace unetback::service
