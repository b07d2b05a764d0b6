#include "unetback/steering/rss_program.hpp"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <spdlog/spdlog.h>

#include <cerrno>
#include <cstdarg>
#include <cstdio>
#include <string>
#include <string_view>
#include <system_error>

#include "unetback/steering/verifier_log.hpp"

namespace unetback::steering {

namespace detail {
extern const unsigned char rss_select_object[];
extern const std::size_t rss_select_object_size;
}  // namespace detail

namespace {

constexpr const char* program_name = "unetback_rss_select";
constexpr const char* map_name = "unetback_rss_tables";

// What libbpf said during one load: its warnings include the kernel
// verifier's whole log when the program is refused. Loading happens once, on
// the start-up thread, so one capture at a time is enough.
std::string* load_messages = nullptr;

// The format attribute marks `format` as libbpf's printf format (clang's
// -Wformat-nonliteral otherwise refuses the vsnprintf).
__attribute__((format(printf, 1, 0))) std::string format_message(const char* format, va_list args) {
  va_list measure;
  va_copy(measure, args);
  const int n = std::vsnprintf(nullptr, 0, format, measure);
  va_end(measure);
  if (n <= 0) {
    return {};
  }
  std::string text(static_cast<std::size_t>(n) + 1, '\0');
  (void)std::vsnprintf(text.data(), text.size(), format, args);
  text.resize(static_cast<std::size_t>(n));
  return text;
}

// libbpf's messages go to our debug log line by line (the verifier log is
// one message of many lines) and, from warnings up, into the capture.
__attribute__((format(printf, 2, 0))) int forward_libbpf_message(enum libbpf_print_level level,
                                                                 const char* format, va_list args) {
  if (level == LIBBPF_DEBUG) {
    return 0;
  }
  const std::string text = format_message(format, args);
  if (load_messages != nullptr) {
    load_messages->append(text);
  }
  std::size_t start = 0;
  while (start < text.size()) {
    std::size_t end = text.find('\n', start);
    end = end == std::string::npos ? text.size() : end;
    if (end > start) {
      spdlog::debug("libbpf: {}", std::string_view(text).substr(start, end - start));
    }
    start = end + 1;
  }
  return static_cast<int>(text.size());
}

[[noreturn]] void fail(int error, const std::string& what) {
  throw std::system_error(error < 0 ? -error : error, std::generic_category(), what);
}

// EPERM is a missing capability; EACCES and EINVAL with a verifier log are
// the kernel refusing the program itself, so say what the verifier said.
std::string load_failure(int rc, const std::string& messages) {
  const int error = rc < 0 ? -rc : rc;
  if (error == EPERM) {
    return "loading the steering BPF program (needs CAP_BPF)";
  }
  const std::string verdict = verifier_verdict(messages);
  if (verdict.empty()) {
    return "loading the steering BPF program";
  }
  return "the kernel's verifier refused the steering BPF program (\"" + verdict + "\")";
}

}  // namespace

std::unique_ptr<rss_program> rss_program::load(std::uint32_t max_tables) {
  libbpf_set_print(forward_libbpf_message);
  bpf_object* object =
      bpf_object__open_mem(detail::rss_select_object, detail::rss_select_object_size, nullptr);
  if (object == nullptr) {
    fail(errno, "opening the steering BPF object");
  }
  try {
    bpf_map* map = bpf_object__find_map_by_name(object, map_name);
    bpf_program* program = bpf_object__find_program_by_name(object, program_name);
    if (map == nullptr || program == nullptr) {
      fail(ENOENT, "the steering BPF object lacks its map or program");
    }
    if (const int rc = bpf_map__set_max_entries(map, max_tables); rc != 0) {
      fail(rc, "sizing the steering map");
    }
    std::string messages;
    load_messages = &messages;
    const int rc = bpf_object__load(object);
    load_messages = nullptr;
    if (rc != 0) {
      fail(rc, load_failure(rc, messages));
    }
    return std::unique_ptr<rss_program>(
        new rss_program(object, bpf_program__fd(program), bpf_map__fd(map)));
  } catch (...) {
    bpf_object__close(object);
    throw;
  }
}

rss_program::rss_program(bpf_object* object, int program_fd, int map_fd)
    : object_(object), program_fd_(program_fd), map_fd_(map_fd) {}

rss_program::~rss_program() {
  bpf_object__close(object_);
}

void rss_program::set_table(std::uint32_t ifindex, const unetback_rss_table& table) {
  if (const int rc = bpf_map_update_elem(map_fd_, &ifindex, &table, BPF_ANY); rc != 0) {
    fail(errno, "updating the steering table of ifindex " + std::to_string(ifindex));
  }
}

void rss_program::erase_table(std::uint32_t ifindex) noexcept {
  (void)bpf_map_delete_elem(map_fd_, &ifindex);
}

}  // namespace unetback::steering
