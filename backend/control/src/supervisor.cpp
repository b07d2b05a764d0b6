#include "unetback/control/supervisor.hpp"

#include <spdlog/spdlog.h>

#include <boost/asio/post.hpp>

#include <algorithm>
#include <stdexcept>

#include "unetback/rings/ids.hpp"
#include "unetback/xs/permission.hpp"

namespace unetback::control {

namespace {

std::optional<unsigned> parse_component(std::string_view text, std::uint64_t max) {
  const auto v = xs::parse_decimal(text, max);
  return v ? std::optional<unsigned>(static_cast<unsigned>(*v)) : std::nullopt;
}

}  // namespace

supervisor::supervisor(boost::asio::any_io_executor executor, xs::client& xs, queue_factory& queues,
                       tap_factory& taps, supervisor_options options)
    : executor_(std::move(executor)),
      xs_(xs),
      queues_(queues),
      taps_(taps),
      options_(std::move(options)) {}

supervisor::~supervisor() {
  *alive_ = false;
  vifs_.clear();
  direct_.reset();
  watcher_.reset();
}

bool supervisor::direct_path_wanted() const {
  return options_.defaults.direct_path ||
         std::any_of(options_.per_vif.begin(), options_.per_vif.end(),
                     [](const auto& v) { return v.second.direct_path; });
}

void supervisor::start() {
  self_ = xs_.own_domid();
  const std::string home = xs_.get_domain_path(self_);
  env_ = std::make_unique<vif_env>(vif_env{executor_, xs_, queues_, taps_, self_,
                                           home + "/backend/vif", home + "/error/backend/vif",
                                           [this](vif_id id) { mark_dirty(id); }});
  if (direct_path_wanted()) {
    direct_ = std::make_unique<direct_path>(executor_, make_host_facts_source());
    env_->direct = direct_.get();
  }
  watcher_ = std::make_unique<xs::watcher>(
      xs_, executor_, [this](std::string_view p, std::string_view t) { on_watch(p, t); });
  watcher_->add(env_->backend_root, backend_token);  // fires once: the first scan
  spdlog::info("supervisor: domain {}, watching {}", self_.value(), env_->backend_root);
  start_liveness_probe();
}

std::string supervisor::frontend_token(vif_id id) {
  return "fe:" + std::to_string(id.frontend.value()) + ":" + std::to_string(id.devid);
}

// backend-vif events name a path below backend_root: "<D>/<N>/..." belongs to
// a known vif, anything else means "scan". fe:<D>:<N> events belong to a vif.
void supervisor::on_watch(std::string_view path, std::string_view token) {
  if (stopped_) {
    return;
  }
  if (token.starts_with("fe:")) {
    const auto colon = token.find(':', 3);
    const auto d = parse_component(token.substr(3, colon - 3), domid_max);
    const auto n = colon == std::string_view::npos
                       ? std::nullopt
                       : parse_component(token.substr(colon + 1), 65535);
    if (d && n) {
      mark_dirty(vif_id{domid{static_cast<std::uint16_t>(*d)}, *n});
    }
    return;
  }
  std::string_view rest = path.substr(std::min(path.size(), env_->backend_root.size()));
  if (rest.starts_with("/")) {
    rest.remove_prefix(1);
  }
  const auto slash1 = rest.find('/');
  const auto slash2 = slash1 == std::string_view::npos ? slash1 : rest.find('/', slash1 + 1);
  const auto d = parse_component(rest.substr(0, slash1), domid_max);
  const auto n = slash1 == std::string_view::npos
                     ? std::nullopt
                     : parse_component(rest.substr(slash1 + 1, slash2 - slash1 - 1), 65535);
  if (d && n && vifs_.contains(vif_id{domid{static_cast<std::uint16_t>(*d)}, *n})) {
    mark_dirty(vif_id{domid{static_cast<std::uint16_t>(*d)}, *n});
  } else {
    scan_pending_ = true;
    schedule();
  }
}

void supervisor::mark_dirty(vif_id key) {
  dirty_.insert(key);
  schedule();
}

void supervisor::schedule() {
  if (scheduled_ || stopped_) {
    return;
  }
  scheduled_ = true;
  boost::asio::post(executor_, [this, alive = alive_] {
    if (*alive) {
      run_pending();
    }
  });
}

void supervisor::run_pending() {
  scheduled_ = false;
  if (stopped_) {
    return;
  }
  if (scan_pending_) {
    scan_pending_ = false;
    scan();
  }
  const std::set<vif_id> work = std::move(dirty_);
  dirty_.clear();
  for (const vif_id& key : work) {
    refresh_vif(key);
  }
}

// Enumerates backend/vif/<D>/<N>; non-numeric names are ignored.
void supervisor::scan() {
  try {
    for (const std::string& dname : xs_.directory(env_->backend_root)) {
      const auto d = parse_component(dname, domid_max);
      if (!d) {
        continue;
      }
      for (const std::string& nname : xs_.directory(env_->backend_root + "/" + dname)) {
        if (const auto n = parse_component(nname, 65535)) {
          consider(vif_id{domid{static_cast<std::uint16_t>(*d)}, *n});
        }
      }
    }
  } catch (const std::exception& e) {
    spdlog::warn("supervisor: scanning {}: {}", env_->backend_root, e.what());
  }
  adopting_ = false;
}

// A new device is online=1 with state=1 (QEMU's and libxl's rule); at
// startup every online device is adopted (daemon restart).
void supervisor::consider(vif_id key) {
  if (vifs_.contains(key)) {
    return;
  }
  const std::string be = env_->backend_root + "/" + key.xenstore_path();
  const auto state = xs_.read(be + "/state");
  if (xs_.read(be + "/online") != "1" || !state || (*state != "1" && !adopting_)) {
    return;
  }
  const auto custom = options_.per_vif.find(key);
  auto v = std::make_shared<vif>(
      *env_, custom != options_.per_vif.end() ? custom->second : options_.defaults, key);
  for (const std::string& path : v->frontend_watch_paths()) {
    try {
      watcher_->add(path, frontend_token(key));
    } catch (const std::exception& e) {
      spdlog::warn("{}: watching {}: {}", key.name(), path, e.what());
    }
  }
  if (*state != "1") {
    v->adopt();
    ++adopted_;
  }
  vifs_.emplace(key, std::move(v));
  spdlog::info("supervisor: {} device {}", *state == "1" ? "new" : "adopted", be);
  mark_dirty(key);
}

void supervisor::refresh_vif(vif_id key) {
  const auto it = vifs_.find(key);
  if (it == vifs_.end()) {
    return;
  }
  const std::shared_ptr<vif> v = it->second;
  v->refresh();
  if (v->destroyed()) {
    forget(key);
  }
}

void supervisor::forget(vif_id key) {
  const auto it = vifs_.find(key);
  if (it == vifs_.end()) {
    return;
  }
  for (const std::string& path : it->second->frontend_watch_paths()) {
    if (watcher_) {  // none while XenStore is lost (supervisor_reconnect.cpp)
      watcher_->remove(path, frontend_token(key));
    }
  }
  vifs_.erase(it);
}

void supervisor::shutdown(vif_exit exit) {
  if (stopped_) {
    return;
  }
  stopped_ = true;
  if (xs_timer_) {
    xs_timer_->cancel();  // the XenStore liveness probe (supervisor_reconnect.cpp)
  }
  for (auto& [key, v] : vifs_) {
    if (exit == vif_exit::keep) {
      v->detach();
    } else {
      v->shutdown();
    }
  }
  vifs_.clear();
  watcher_.reset();
  spdlog::info("supervisor: every vif {}",
               exit == vif_exit::keep ? "kept for the next daemon" : "closed");
}

std::shared_ptr<vif> supervisor::find(vif_id id) const {
  const auto it = vifs_.find(id);
  if (it == vifs_.end()) {
    throw std::invalid_argument("no " + id.name());
  }
  return it->second;
}

void supervisor::note_link(const tap::link_event& e) {
  for (const auto& [key, v] : vifs_) {
    v->note_link(e);
  }
}

void supervisor::disable(vif_id id, const std::string& reason) {
  const std::shared_ptr<vif> v = find(id);
  v->disable(reason);
  if (v->destroyed()) {
    forget(id);
  }
}

bool supervisor::enable(vif_id id) {
  const std::shared_ptr<vif> v = find(id);
  const bool enabled = v->enable();
  if (v->destroyed()) {
    forget(id);
  }
  return enabled;
}

std::vector<unsigned> supervisor::kick(vif_id id, std::optional<unsigned> q) {
  return find(id)->kick(q);
}

std::optional<hash_status> supervisor::hash_config(vif_id id) const {
  return find(id)->hash_config();
}

daemon_status supervisor::status() const {
  daemon_status s{self_, adopted_, {}};
  for (const auto& [key, v] : vifs_) {
    s.vifs.push_back(v->status());
  }
  return s;
}

}  // namespace unetback::control
