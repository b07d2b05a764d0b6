// vif: reading XenStore into a snapshot and stepping the state machine.

#include "unetback/control/vif.hpp"

#include <spdlog/spdlog.h>

#include <cerrno>
#include <utility>

#include "unetback/util/log_limits.hpp"

namespace unetback::control {

using datapath::fault_kind;

namespace {

constexpr int max_steps_per_refresh = 12;  // the longest path is 4 edges plus actions
// Saving and steering to a new hash configuration: at most this often.
constexpr std::chrono::milliseconds hash_apply_interval{100};

}  // namespace

vif::vif(vif_env& env, vif_options options, vif_id id)
    : env_(env),
      options_(options),
      id_(id),
      backend_path_(env.backend_root + "/" + id.xenstore_path()),
      backoff_(options.fault_backoff_max),
      retry_(env.executor, [this] { env_.request_refresh(id_); }),
      hash_apply_(env.executor, hash_apply_interval, [this] {
        if (vif_queues* q = queues()) {
          q->apply_hash();
        }
      }) {
  const key_reader read = [this](std::string_view key) {
    return env_.xs.read(backend_path_ + "/" + std::string(key));
  };
  try {
    auto parsed = parse_backend_keys(read, id_);
    if (parsed) {
      config_ = std::move(parsed.value());
      warn_if_rate_ignored();
    } else {
      fail(fault_kind::host, "backend keys: " + parsed.error().message());
    }
  } catch (const std::exception& e) {
    fail(fault_kind::host, std::string("reading backend keys: ") + e.what());
  }
}

vif::~vif() {
  if (auto* running = std::get_if<connection_running>(&connection_)) {
    stop_data_path(*running);
  }
}

vif_queues* vif::queues() const {
  const auto* running = std::get_if<connection_running>(&connection_);
  return running != nullptr ? running->queues.get() : nullptr;
}

void vif::set_resume_next(bool resume) {
  if (auto* stopped = std::get_if<connection_stopped>(&connection_)) {
    stopped->resume_next = resume;
  }
}

bool vif::resume_next() const {
  const auto* stopped = std::get_if<connection_stopped>(&connection_);
  return stopped != nullptr && stopped->resume_next;
}

bool vif::is_current(std::uint64_t generation) const {
  const auto* running = std::get_if<connection_running>(&connection_);
  return running != nullptr && running->generation == generation;
}

std::string vif::tag() const {
  return id_.name();
}

std::vector<std::string> vif::frontend_watch_paths() const {
  if (!config_) {
    return {};
  }
  return {config_->frontend_path + "/state", config_->frontend_path + "/request-multicast-control"};
}

vif_snapshot vif::read_snapshot() {
  vif_snapshot s;
  s.present = env_.xs.read(backend_path_).has_value();
  if (s.present) {
    s.backend = parse_xenbus_state(env_.xs.read(backend_path_ + "/state"));
    s.online = env_.xs.read(backend_path_ + "/online") == "1";
    s.hotplug_connected = !options_.wait_for_hotplug ||
                          env_.xs.read(backend_path_ + "/hotplug-status") == "connected";
  }
  s.frontend = config_ ? parse_xenbus_state(env_.xs.read(config_->frontend_path + "/state"))
                       : xenbus_state::unknown;
  // A frontend that re-initialises asks for a fresh attempt (§1.10).
  if (failure_) {
    if (s.frontend != xenbus_state::initialising) {
      failure_->reinit_requested = false;
    } else if (last_frontend_ != xenbus_state::initialising) {
      failure_->reinit_requested = true;
    }
    if (failure_->reinit_requested) {
      grant_fresh_attempt();
    }
  }
  last_frontend_ = s.frontend;
  backend_state_ = s.backend;
  s.backend_valid = config_.has_value();
  s.data_connected = queues() != nullptr;
  s.failed = failure_.has_value();
  s.disabled = disabled_reason_.has_value();
  return s;
}

void vif::grant_fresh_attempt() {
  if (std::chrono::steady_clock::now() >= backoff_.not_before()) {
    failure_.reset();
    return;
  }
  retry_.arm_at(backoff_.not_before());
}

void vif::adopt() {
  set_resume_next(true);
  if (config_) {
    do_create_tap();
  }
}

void vif::disable(const std::string& reason) {
  if (!disabled_reason_) {
    spdlog::info("{}: disabled ({})", tag(), reason);
    disabled_reason_ = reason;
  }
  refresh();  // disconnect: workers stop, carrier off; the state stays
}

bool vif::enable() {
  const bool was_disabled = disabled_reason_.has_value() || failure_.has_value();
  if (failure_) {
    spdlog::warn("{}: enabled by the operator after a {} fault ({}): trusting it again", tag(),
                 to_string(failure_->what.kind), failure_->what.message);
    failure_.reset();
  }
  backoff_.reset();
  if (disabled_reason_) {
    spdlog::info("{}: enabled", tag());
    disabled_reason_.reset();
  }
  if (was_disabled) {
    set_resume_next(true);
    refresh();
  }
  return was_disabled;
}

void vif::detach() {
  if (auto* running = std::get_if<connection_running>(&connection_)) {
    auto last_direct = stop_data_path(*running);
    connection_ = connection_stopped{running->queues->queue_statuses(), std::move(last_direct)};
    spdlog::info("{}: data path stopped, vif kept for the next daemon", tag());
  }
}

void vif::refresh() {
  for (int i = 0; i < max_steps_per_refresh && !destroyed(); ++i) {
    vif_snapshot s;
    try {
      s = read_snapshot();
    } catch (const std::exception& e) {
      UNETBACK_LOG_LIMITED(*log_limits_, spdlog::level::warn, "{}: reading XenStore: {}", tag(),
                           e.what());
      return;
    }
    const vif_step step = next_step(s);
    if (step.actions.empty()) {
      follow_multicast_control();
      follow_rate();
      return;
    }
    for (const vif_action a : step.actions) {
      spdlog::debug("{}: {} (backend {}, frontend {})", tag(), name_of(a), name_of(s.backend),
                    name_of(s.frontend));
      if (!apply(a, s)) {
        break;  // the next snapshot shows why (failed, or the directory vanished)
      }
    }
  }
  if (!destroyed()) {
    UNETBACK_LOG_LIMITED(*log_limits_, spdlog::level::warn,
                         "{}: state machine did not settle in {} steps", tag(),
                         max_steps_per_refresh);
  }
}

bool vif::apply(vif_action a, const vif_snapshot& s) {
  switch (a) {
    case vif_action::create_tap:
      return do_create_tap();
    case vif_action::advertise_features:
      return do_advertise_features();
    case vif_action::write_init_wait:
      set_resume_next(false);  // a new handshake: fresh rings
      return write_state(xenbus_state::init_wait);
    case vif_action::connect:
      return do_connect();
    case vif_action::publish_connected:
      return write_state(xenbus_state::connected);
    case vif_action::disconnect:
      do_disconnect();
      return true;
    case vif_action::write_closing:
      return write_state(xenbus_state::closing);
    case vif_action::write_closed:
      return write_state(xenbus_state::closed);
    case vif_action::destroy:
      do_destroy(s);
      return true;
  }
  return false;
}

// xenbus_switch_state: write `state` only while the node exists, so a
// directory the toolstack removed is never re-created.
bool vif::write_state(xenbus_state st) {
  try {
    const bool written = env_.xs.transact([&](xs::transaction& tx) {
      if (!tx.read(backend_path_ + "/state")) {
        return false;
      }
      tx.write(backend_path_ + "/state", to_wire(st));
      return true;
    });
    if (written) {
      // A frontend flipping its state drives these: rate-limited.
      UNETBACK_LOG_LIMITED(*log_limits_, spdlog::level::info, "{}: backend state {}", tag(),
                           name_of(st));
      backend_state_ = st;
    }
    return written;
  } catch (const std::exception& e) {
    spdlog::warn("{}: writing state {}: {}", tag(), name_of(st), e.what());
    return false;
  }
}

// xenbus_dev_fatal: "<errno> <message>" under error/backend/vif/<D>/<N>.
void vif::fail(datapath::fault_kind kind, const std::string& message) {
  failure_ = failure_hold{vif_failure{kind, message}};
  UNETBACK_LOG_LIMITED(*log_limits_, spdlog::level::warn, "{}: {}", tag(), message);
  const auto wait = backoff_.on_fault(std::chrono::steady_clock::now());
  if (wait.count() > 0) {
    UNETBACK_LOG_LIMITED(*log_limits_, spdlog::level::warn,
                         "{}: fault {} in a row: the frontend may connect again in {} ms", tag(),
                         backoff_.faults_in_a_row(), wait.count());
  }
  const std::string node = env_.error_root + "/" + id_.xenstore_path() + "/error";
  try {
    env_.xs.write(node, std::to_string(EINVAL) + " " + message);
  } catch (const std::exception& e) {
    spdlog::warn("{}: writing {}: {}", tag(), node, e.what());
  }
}

void vif::on_fault(std::uint64_t generation, const datapath::fault& f) {
  if (!is_current(generation)) {
    return;  // a fault of a connection that is already gone
  }
  fail(f.kind(), f.describe());
  if (tap_) {
    try {
      tap_->set_carrier(false);
    } catch (const std::exception& e) {
      spdlog::warn("{}: carrier off: {}", tag(), e.what());
    }
  }
  env_.request_refresh(id_);
}

void vif::on_hash_published(std::uint64_t generation) {
  if (is_current(generation)) {
    hash_apply_.request();
  }
}

void vif::shutdown() {
  if (destroyed()) {
    return;
  }
  do_disconnect();
  if (backend_state_ != xenbus_state::closed) {
    write_state(xenbus_state::closing);
    write_state(xenbus_state::closed);
  }
}

std::vector<unsigned> vif::kick(std::optional<unsigned> q) {
  vif_queues* running = queues();
  if (running == nullptr) {
    throw std::invalid_argument(tag() + ": no queues are running");
  }
  return running->kick(q);
}

std::optional<hash_status> vif::hash_config() const {
  const vif_queues* running = queues();
  return running != nullptr ? running->hash_config() : std::nullopt;
}

vif_status vif::status() const {
  vif_status s;
  s.id = id_;
  s.state = backend_state_;
  s.tap = tap_name();
  if (failure_) {
    s.failure = failure_->what;
  }
  s.disabled_by = disabled_reason_;
  if (const vif_queues* running = queues()) {
    s.queues = running->queue_statuses();
    s.ctrl = running->ctrl_counters();
    s.direct = env_.direct != nullptr ? env_.direct->status(id_) : std::nullopt;
  } else if (const auto* stopped = std::get_if<connection_stopped>(&connection_)) {
    s.queues = stopped->last_queues;
    s.direct = stopped->last_direct;
  }
  return s;
}

}  // namespace unetback::control
