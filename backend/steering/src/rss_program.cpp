#include "unetback/steering/rss_program.hpp"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdarg>
#include <cstdio>
#include <string>
#include <system_error>

namespace unetback::steering {

namespace detail {
extern const unsigned char rss_select_object[];
extern const std::size_t rss_select_object_size;
}  // namespace detail

namespace {

constexpr const char* program_name = "unetback_rss_select";
constexpr const char* map_name = "unetback_rss_tables";

// libbpf's messages (the verifier log on a refused load) go to our log.
// The format attribute marks `format` as libbpf's printf format (clang's
// -Wformat-nonliteral otherwise refuses the vsnprintf).
__attribute__((format(printf, 2, 0))) int forward_libbpf_message(enum libbpf_print_level level,
                                                                 const char* format, va_list args) {
  if (level == LIBBPF_DEBUG) {
    return 0;
  }
  std::array<char, 1024> line{};
  const int n = std::vsnprintf(line.data(), line.size(), format, args);
  std::string text(line.data(),
                   n < 0 ? 0 : std::min<std::size_t>(static_cast<std::size_t>(n), line.size() - 1));
  while (!text.empty() && text.back() == '\n') {
    text.pop_back();
  }
  spdlog::debug("libbpf: {}", text);
  return n;
}

[[noreturn]] void fail(int error, const std::string& what) {
  throw std::system_error(error < 0 ? -error : error, std::generic_category(), what);
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
    if (const int rc = bpf_object__load(object); rc != 0) {
      fail(rc, "loading the steering BPF program (needs CAP_BPF)");
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
