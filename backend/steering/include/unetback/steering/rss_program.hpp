#pragma once
// The loaded RX steering program and its table map, one per daemon: loaded
// once at start-up (BPF_PROG_LOAD and BPF_MAP_CREATE need CAP_BPF, so before
// the daemon drops its capabilities); afterwards the map's fd and the
// program's fd are used without privilege (map updates, TUNSETSTEERINGEBPF).
// The map holds one unetback_rss_table per TAP ifindex whose guest
// configured Toeplitz hashing (rss_table.h).

#include <cstdint>
#include <memory>

#include "rss_table.h"

struct bpf_object;

namespace unetback::steering {

class rss_program {
 public:
  /// Loads the embedded program; the map holds at most `max_tables` vifs'
  /// tables (allocated on first use, 37 KiB each). Throws std::system_error
  /// naming the step that failed (no CAP_BPF, no BPF support, verifier).
  [[nodiscard]] static std::unique_ptr<rss_program> load(std::uint32_t max_tables);
  ~rss_program();
  rss_program(const rss_program&) = delete;
  rss_program& operator=(const rss_program&) = delete;

  /// The program, for TUNSETSTEERINGEBPF.
  [[nodiscard]] int program_fd() const { return program_fd_; }
  /// Installs or replaces the table of the TAP `ifindex`. Throws
  /// std::system_error (e.g. E2BIG when max_tables vifs have one).
  void set_table(std::uint32_t ifindex, const unetback_rss_table& table);
  /// Removes the table of `ifindex`, if any.
  void erase_table(std::uint32_t ifindex) noexcept;

 private:
  rss_program(bpf_object* object, int program_fd, int map_fd);

  bpf_object* object_;
  int program_fd_;
  int map_fd_;
};

}  // namespace unetback::steering
