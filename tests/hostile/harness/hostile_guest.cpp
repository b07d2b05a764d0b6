#include "hostile_guest.hpp"

#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "net_tools.hpp"
#include "unetback/rings/ctrl_ring.hpp"
#include "unetback/test_support/socket_frame_port.hpp"

namespace unetback::hostile {
namespace {

constexpr domid backend_domid{0};

sim::domain_config domain_config_for(const world& w, const hostile_options& o) {
  sim::domain_config c;
  c.sim_dir = w.sim_dir();
  c.id = hostile_guest::id;
  // per queue: 2 ring pages + 256 TX + 256 RX pages; spares for the drivers.
  c.page_count = std::max<std::uint32_t>(o.queues, 4) * (2 + 512) + 512;
  c.grant_count = c.page_count + sim::first_free_grant_ref + 64;
  c.port_count = 4 * std::max<std::uint32_t>(o.queues, 4) + 16;
  c.map_record_count = 8 * std::max<std::uint32_t>(o.queues, 4) + 16;
  return c;
}

/// Moves responses off `ring` into `out` until it holds `n`; false if the
/// backend claimed more responses than requests.
template <class Ring, class Rsp>
bool take_into(Ring& ring, std::vector<Rsp>& out, std::size_t n) {
  const auto room = static_cast<std::uint32_t>(n > out.size() ? n - out.size() : 0);
  return ring.take_responses([&](const Rsp& rsp, std::uint32_t) { out.push_back(rsp); }, room)
      .has_value();
}

void store_release(std::byte* at, std::uint32_t value) {
  std::atomic_ref<std::uint32_t>(*reinterpret_cast<std::uint32_t*>(at))
      .store(value, std::memory_order_release);
}

/// The bridge's MAC: frames to it are consumed by the host and go nowhere.
mac_bytes bridge_mac(world& w) {
  const auto link = w.host_link_stats(world::bridge());
  if (!link.is_object() || !link.contains("address")) {
    throw std::runtime_error("cannot read the bridge's MAC");
  }
  return parse_mac(link["address"].get<std::string>());
}

}  // namespace

// ---------------------------------------------------------------- hostile_guest

hostile_guest::hostile_guest(world& w, const hostile_options& options)
    : world_(w), options_(options) {
  w.domain_create(id);
  const auto socket = w.xs_dir() / fmt::format("socket.d{}", id.value());
  if (!wait_until([&] { return std::filesystem::exists(socket); }, state_timeout)) {
    throw std::runtime_error("sim-xenstored did not create " + socket.string());
  }
  domain_ = std::make_unique<sim::guest_domain>(domain_config_for(w, options));
  memory_ = std::make_unique<sim::sim_frontend_memory>(*domain_);
  for (int attempt = 0; !xs_; ++attempt) {  // socket file exists a moment before listen()
    try {
      xs_ = std::make_unique<xs::client>(xs::client::open(socket.string()));
    } catch (const std::exception&) {
      if (attempt >= 50) {
        throw;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  }
  w.network_attach(id, mac);
}

hostile_guest::~hostile_guest() {
  hostile_.reset();
  device_.reset();
  for (const int fd : tap_peers_) {
    ::close(fd);
  }
  xs_.reset();
  domain_.reset();
}

std::string hostile_guest::frontend_path() const {
  return fmt::format("/local/domain/{}/device/vif/0", id.value());
}

void hostile_guest::connect() {
  offer({});
  if (!wait_until(
          [&] {
            pump();
            return device_->connected() && backend_state() == 4;
          },
          state_timeout)) {
    throw std::runtime_error("hostile guest did not connect: " + device_->last_error() + "\n" +
                             world_.daemon_log());
  }
}

void hostile_guest::offer(const std::vector<std::pair<std::string, std::string>>& overrides) {
  sim::device_options d;
  d.key_overrides = overrides;
  d.self = id;
  d.devid = 0;
  d.request = {
      options_.queues, options_.split_event_channels, options_.sg, options_.gso, true, false};
  d.reconnect = true;
  auto opener = [this](std::uint32_t queues, const sim::backend_features&,
                       const std::optional<std::string>&) {
    std::vector<std::unique_ptr<platform::frame_port>> ports;
    for (std::uint32_t q = 0; q < queues; ++q) {
      int sv[2];
      if (::socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) != 0) {
        throw std::runtime_error("socketpair failed");
      }
      ports.push_back(std::make_unique<test_support::socket_frame_port>(sv[0]));
      tap_peers_.push_back(sv[1]);
    }
    return ports;
  };
  device_ = std::make_unique<sim::frontend_device>(*memory_, *xs_, d, opener);
  hostile_ = std::make_unique<sim::hostile_frontend>(*device_);
  device_->write_state(sim::xenbus_state::initialising);
}

bool hostile_guest::reconnect() {
  return wait_until(
      [&] {
        pump();
        return device_->connected() && backend_state() == 4;
      },
      state_timeout);
}

void hostile_guest::pump() {
  try {
    (void)device_->on_backend_changed();
  } catch (const std::exception&) {
    // a transient XenStore error: the next pump retries
  }
}

sim::frontend_queue& hostile_guest::stopped_queue(std::uint32_t q) {
  hostile_->stop_queue(q);
  return hostile_->queue(q);
}

std::optional<int> hostile_guest::backend_state() {
  return world_.backend_state(id);
}

bool hostile_guest::wait_backend_state(const std::set<int>& states,
                                       std::chrono::milliseconds timeout) {
  return wait_until(
      [&] {
        const auto s = backend_state();
        return s && states.contains(*s);
      },
      timeout);
}

void hostile_guest::write_state(const std::string& value) {
  xs_->write(frontend_path() + "/state", value);
}

// ---------------------------------------------------------------- tx_driver

tx_driver::tx_driver(hostile_guest& g, sim::frontend_queue& q) : g_(g), q_(q) {
  const mac_bytes dst = bridge_mac(g.host());
  const mac_bytes src = parse_mac(hostile_guest::mac);
  for (std::size_t i = 0; i < data_pages; ++i) {
    const std::uint32_t p = g.domain().alloc_page();
    const auto frame = test_frame(dst, src, 4096, static_cast<std::uint8_t>(i));
    std::memcpy(g.domain().page(p).data(), frame.data(), 4096);
    pages_.push_back(p);
    refs_.push_back(g.domain().grant_access(p, backend_domid, sim::grant_mode::read_only));
  }
}

tx_driver::~tx_driver() {
  for (std::size_t i = 0; i < refs_.size(); ++i) {
    if (!g_.domain().end_access(refs_[i])) {
      g_.domain().free_page(pages_[i]);
    }
  }
}

std::span<std::byte, 4096> tx_driver::page(std::size_t i) const {
  return g_.domain().page(pages_.at(i));
}

rings::tx_front_ring& tx_driver::ring() {
  return q_.tx_ring();
}

rings::tx_request tx_driver::slot(std::size_t page_index, std::uint16_t offset, std::uint16_t size,
                                  std::uint16_t flags) {
  rings::tx_request r{};
  r.gref = ref(page_index).value();
  r.offset = offset;
  r.flags = flags;
  r.id = next_id_++;
  r.size = size;
  return r;
}

void tx_driver::put(const rings::tx_request& r) {
  if (!ring().write_request(r)) {
    throw std::runtime_error("TX ring full");
  }
}

void tx_driver::put_extra(const rings::extra_info& e) {
  if (!ring().write_request_as(e)) {
    throw std::runtime_error("TX ring full");
  }
}

void tx_driver::push() {
  (void)ring().push_requests_and_check_notify();
  kick();  // always: a hostile guest ignores req_event
}

void tx_driver::kick() {
  q_.events().notify(q_.tx_port());
}

void tx_driver::send_valid(std::uint16_t size) {
  put(slot(0, 0, size));
  push();
}

void tx_driver::publish_req_prod(std::uint32_t value) {
  store_release(
      g_.domain().page(q_.tx_ring_page().page).data() + offsetof(rings::sring_header, req_prod),
      value);
}

rings::tx_request* tx_driver::shared_slot(std::uint32_t idx) {
  std::byte* page = g_.domain().page(q_.tx_ring_page().page).data();
  constexpr std::size_t entry = rings::ring_entry_size<rings::tx_request, rings::tx_response>;
  return reinterpret_cast<rings::tx_request*>(page + sizeof(rings::sring_header) +
                                              (idx & (rings::tx_front_ring::size - 1)) * entry);
}

std::vector<rings::tx_response> tx_driver::responses(std::size_t n,
                                                     std::chrono::milliseconds timeout) {
  std::vector<rings::tx_response> out;
  wait_until(
      [&] {
        // A backend answering more than we asked: stop, let the test see it.
        return !take_into(ring(), out, n) || out.size() >= n;
      },
      timeout, std::chrono::milliseconds(5));
  return out;
}

// ---------------------------------------------------------------- rx_driver

rx_driver::rx_driver(hostile_guest& g, sim::frontend_queue& q) : g_(g), q_(q) {}

rx_driver::~rx_driver() {
  for (std::size_t i = 0; i < refs_.size(); ++i) {
    if (!g_.domain().end_access(refs_[i])) {
      g_.domain().free_page(pages_[i]);
    }
  }
}

rings::rx_front_ring& rx_driver::ring() {
  return q_.rx_ring();
}

void rx_driver::kick() {
  q_.events().notify(q_.setup().split_event_channels ? q_.rx_port() : q_.tx_port());
}

void rx_driver::post(grant_ref gref) {
  rings::rx_request r{};
  r.id = next_id_++;
  r.gref = gref.value();
  if (!ring().write_request(r)) {
    throw std::runtime_error("RX ring full");
  }
  (void)ring().push_requests_and_check_notify();
  kick();
}

std::span<std::byte, 4096> rx_driver::buffer(std::size_t i) const {
  return g_.domain().page(pages_.at(i));
}

void rx_driver::post_buffer(std::byte fill) {
  const std::uint32_t p = g_.domain().alloc_page();
  std::memset(g_.domain().page(p).data(), std::to_integer<int>(fill), 4096);
  const grant_ref ref = g_.domain().grant_access(p, backend_domid, sim::grant_mode::read_write);
  pages_.push_back(p);
  refs_.push_back(ref);
  post(ref);
}

std::uint32_t rx_driver::unconsumed() {
  const auto avail = ring().unconsumed_responses();
  return avail ? avail.value() : 0;
}

void rx_driver::publish_req_prod(std::uint32_t value) {
  store_release(
      g_.domain().page(q_.rx_ring_page().page).data() + offsetof(rings::sring_header, req_prod),
      value);
  kick();
}

std::vector<rings::rx_response> rx_driver::responses(std::size_t n,
                                                     std::chrono::milliseconds timeout) {
  std::vector<rings::rx_response> out;
  wait_until([&] { return !take_into(ring(), out, n) || out.size() >= n; }, timeout,
             std::chrono::milliseconds(5));
  return out;
}

// ---------------------------------------------------------------- raw_ctrl_ring

raw_ctrl_ring::raw_ctrl_ring(sim::guest_domain& d, domid backend) : d_(d) {
  page_ = d.alloc_page();
  ring_ = rings::ctrl_front_ring::init(d.page(page_));
  ref_ = d.grant_access(page_, backend, sim::grant_mode::read_write);
  ev_ = d.open_event_channel();
  port_ = ev_->alloc_unbound(backend);
}

raw_ctrl_ring::~raw_ctrl_ring() {
  ev_->close(port_);
  ev_.reset();
  if (!d_.end_access(ref_)) {
    d_.free_page(page_);
  }
}

void raw_ctrl_ring::put(const rings::ctrl_request& r) {
  if (!ring_.write_request(r)) {
    throw std::runtime_error("control ring full");
  }
}

void raw_ctrl_ring::push() {
  (void)ring_.push_requests_and_check_notify();
  ev_->notify(port_);
}

void raw_ctrl_ring::publish_req_prod(std::uint32_t value) {
  store_release(d_.page(page_).data() + offsetof(rings::sring_header, req_prod), value);
  ev_->notify(port_);
}

rings::ctrl_request* raw_ctrl_ring::slot(std::uint32_t idx) {
  constexpr std::size_t entry = rings::ring_entry_size<rings::ctrl_request, rings::ctrl_response>;
  return reinterpret_cast<rings::ctrl_request*>(d_.page(page_).data() +
                                                sizeof(rings::sring_header) +
                                                (idx & (rings::ctrl_front_ring::size - 1)) * entry);
}

std::vector<rings::ctrl_response> raw_ctrl_ring::responses(std::size_t n,
                                                           std::chrono::milliseconds timeout) {
  std::vector<rings::ctrl_response> out;
  wait_until([&] { return !take_into(ring_, out, n) || out.size() >= n; }, timeout,
             std::chrono::milliseconds(5));
  return out;
}

std::optional<rings::ctrl_response> raw_ctrl_ring::call(std::uint16_t type, std::uint32_t d0,
                                                        std::uint32_t d1, std::uint32_t d2,
                                                        std::chrono::milliseconds timeout) {
  put(rings::make_ctrl_request(next_id_++, type, d0, d1, d2));
  push();
  auto rsp = responses(1, timeout);
  if (rsp.empty()) {
    return std::nullopt;
  }
  return rsp.front();
}

// ---------------------------------------------------------------- manual_frontend

manual_frontend::manual_frontend(hostile_guest& g, std::uint32_t queues, bool split, bool ctrl_ring)
    : g_(g) {
  const std::string be_path = world::backend_path(hostile_guest::id);
  be_ = sim::read_backend_features(
      [&](std::string_view key) { return g.xs().read(be_path + "/" + std::string(key)); });
  req_ = {queues, split, true, true, true, ctrl_ring};
  sim::queue_setup setup;
  setup.backend_id = backend_domid;
  setup.split_event_channels = split && be_.split_event_channels;
  setup.backend = be_;
  setup.request = req_;
  for (std::uint32_t i = 0; i < queues; ++i) {
    setup.index = queue_index{i};
    queues_.push_back(std::make_unique<sim::frontend_queue>(g.memory(), setup));
  }
  if (ctrl_ring) {
    ctrl_ = std::make_unique<raw_ctrl_ring>(g.domain());
  }
}

manual_frontend::~manual_frontend() {
  try {
    for (const auto& key : written_) {
      g_.xs().rm(g_.frontend_path() + "/" + key);
    }
  } catch (const std::exception&) {
    // the world may be going away
  }
  queues_.clear();
  ctrl_.reset();
}

std::vector<std::pair<std::string, std::string>> manual_frontend::keys() const {
  std::vector<sim::queue_keys> qk;
  for (const auto& q : queues_) {
    qk.push_back(q->keys());
  }
  std::optional<sim::ctrl_keys> ck;
  if (ctrl_) {
    ck = sim::ctrl_keys{ctrl_->ref(), ctrl_->port()};
  }
  // multi-queue-num-queues is written whenever the backend advertised
  // multi-queue, even for one queue (netfront does the same).
  return sim::build_frontend_keys(req_, be_, qk, ck);
}

void manual_frontend::connect(const edits& e) {
  std::map<std::string, std::string> kv;
  for (const auto& [k, v] : keys()) {
    kv[k] = v;
  }
  for (const auto& [k, v] : e) {
    if (v) {
      kv[k] = *v;
    } else {
      kv.erase(k);
    }
  }
  const std::string fe = g_.frontend_path();
  g_.xs().transact([&](xs::transaction& t) {
    for (const auto& [k, v] : kv) {
      t.write(fe + "/" + k, v);
    }
  });
  for (const auto& [k, v] : kv) {
    written_.insert(k);
  }
  g_.write_state("4");
}

bool manual_frontend::rearm() {
  g_.write_state("6");
  if (!g_.wait_backend_state({6})) {
    return false;
  }
  for (const auto& key : written_) {
    g_.xs().rm(g_.frontend_path() + "/" + key);
  }
  for (std::uint32_t q = 0; q < queues_.size(); ++q) {
    g_.xs().rm(g_.frontend_path() + fmt::format("/queue-{}", q));
  }
  written_.clear();
  g_.write_state("1");
  return g_.wait_backend_state({2});
}

}  // namespace unetback::hostile
