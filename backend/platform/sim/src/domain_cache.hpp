#pragma once
// Per-handle cache of opened guest memory files. A cached view is re-checked
// at most every revalidate_interval (one stat): a guest that exited (its
// /proc/<pid>/fd link is gone) or restarted (a new file) is noticed, so grant
// operations fail with GNTST_bad_domain instead of touching a dead guest.

#include <chrono>
#include <filesystem>
#include <memory>
#include <system_error>
#include <vector>

#include "unetback/rings/ids.hpp"
#include "unetback/sim/guest_memory.hpp"

namespace unetback::sim {

class domain_cache {
 public:
  static constexpr std::chrono::milliseconds revalidate_interval = domain_revalidate_interval;

  explicit domain_cache(std::filesystem::path sim_dir) : sim_dir_(std::move(sim_dir)) {}

  /// The current view of domain `d`, or nullptr with `ec` set (ESRCH...).
  /// A failed open is remembered for revalidate_interval too.
  std::shared_ptr<guest_memory> get(domid d, std::error_code& ec);
  /// Forgets domain `d` so the next get() re-opens it.
  void forget(domid d);

  [[nodiscard]] const std::filesystem::path& sim_dir() const { return sim_dir_; }

 private:
  struct entry {
    domid id;
    std::shared_ptr<guest_memory> view;
    std::error_code error;
    std::chrono::steady_clock::time_point checked;
  };
  entry& refresh(entry& e, std::chrono::steady_clock::time_point now);

  std::filesystem::path sim_dir_;
  std::vector<entry> entries_;
};

}  // namespace unetback::sim
