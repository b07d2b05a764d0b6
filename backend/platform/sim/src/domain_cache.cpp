#include "domain_cache.hpp"

#include <algorithm>

namespace unetback::sim {

std::shared_ptr<guest_memory> domain_cache::get(domid d, std::error_code& ec) {
  const auto now = std::chrono::steady_clock::now();
  auto it =
      std::find_if(entries_.begin(), entries_.end(), [d](const entry& e) { return e.id == d; });
  if (it == entries_.end()) {
    entries_.push_back(entry{d, nullptr, {}, {}});
    it = std::prev(entries_.end());
    it->checked = now - revalidate_interval;  // force an open
  }
  entry& e = now - it->checked >= revalidate_interval ? refresh(*it, now) : *it;
  ec = e.error;
  return e.view;
}

domain_cache::entry& domain_cache::refresh(entry& e, std::chrono::steady_clock::time_point now) {
  e.checked = now;
  const auto path = domain_file_path(sim_dir_, e.id);
  if (e.view && e.view->still_current(path)) {
    return e;
  }
  e.error.clear();
  e.view = guest_memory::open(sim_dir_, e.id, e.error);
  return e;
}

void domain_cache::forget(domid d) {
  std::erase_if(entries_, [d](const entry& e) { return e.id == d; });
}

}  // namespace unetback::sim
