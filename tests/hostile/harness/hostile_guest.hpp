#pragma once
// The attacking guest, built in-process (domid 2): the guest's simulated
// memory (sim::guest_domain), its own XenStore connection (socket.d2), and
// either
//  * device mode: netfront-sim's frontend_device runs the handshake normally
//    and sim::hostile_frontend then breaks the protocol on the live rings
//    (tx_driver / rx_driver below stop a queue's worker and drive its rings by
//    hand), or
//  * manual mode (manual_frontend): the frontend keys are written by the test,
//    with any value, to attack the connect-time parsing, and the control ring
//    is a raw ring the test owns.
// The guest's "TAP" is a SOCK_SEQPACKET socketpair (no namespace needed).

#include <chrono>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "unetback/platform/frame_port.hpp"
#include "unetback/rings/netif.hpp"
#include "unetback/sim/guest_domain.hpp"
#include "unetback/sim/guest_event_channel.hpp"
#include "unetback/sim/netfront/frontend_device.hpp"
#include "unetback/sim/netfront/hostile_frontend.hpp"
#include "unetback/sim/netfront/sim_frontend_memory.hpp"
#include "unetback/xs/client.hpp"
#include "world.hpp"

namespace unetback::hostile {

struct hostile_options {
  std::uint32_t queues = 1;
  bool split_event_channels = false;
  bool sg = true;
  bool gso = true;
};

class hostile_guest {
 public:
  static constexpr domid id{2};
  static constexpr const char* mac = "00:16:3e:00:00:02";
  static constexpr const char* vif = "vif2.0";

  /// Creates domain 2 (memory + XenStore) and attaches its vif (the backend
  /// reaches InitWait). Nothing is connected yet.
  hostile_guest(world& w, const hostile_options& options = {});
  ~hostile_guest();
  hostile_guest(const hostile_guest&) = delete;
  hostile_guest& operator=(const hostile_guest&) = delete;

  [[nodiscard]] sim::guest_domain& domain() { return *domain_; }
  [[nodiscard]] sim::sim_frontend_memory& memory() { return *memory_; }
  [[nodiscard]] xs::client& xs() { return *xs_; }
  [[nodiscard]] std::string frontend_path() const;
  [[nodiscard]] const hostile_options& options() const { return options_; }

  // ---- device mode
  /// Runs the normal handshake (frontend_device) until both ends are
  /// Connected; throws on timeout.
  void connect();
  /// Starts the normal handshake with `overrides` written over its own keys
  /// (frontend_device's key_overrides) and returns at once; pump() drives it.
  void offer(const std::vector<std::pair<std::string, std::string>>& overrides);
  /// After the backend closed the vif: closes and re-initialises the
  /// frontend (state 6, 1) and runs the handshake again. False on timeout.
  bool reconnect();
  /// Advances the frontend's handshake once from the backend state.
  void pump();
  [[nodiscard]] sim::frontend_device& device() { return *device_; }
  [[nodiscard]] sim::hostile_frontend& hostile() { return *hostile_; }
  /// Queue q's worker bridges this socket (12-byte vnet header + frame):
  /// writing a frame here makes the well-behaved worker transmit it.
  [[nodiscard]] int tap_peer(std::uint32_t q) const { return tap_peers_.at(q); }
  /// Stops queue q's worker (hostile_frontend::stop_queue) and returns the
  /// queue, whose rings are now the test's alone.
  sim::frontend_queue& stopped_queue(std::uint32_t q);
  [[nodiscard]] world& host() { return world_; }

  /// Backend state of vif2.0.
  [[nodiscard]] std::optional<int> backend_state();
  /// Waits until the backend state is one of `states`.
  bool wait_backend_state(const std::set<int>& states,
                          std::chrono::milliseconds timeout = state_timeout);
  /// Writes our frontend `state` node directly (any text).
  void write_state(const std::string& value);

 private:
  world& world_;
  hostile_options options_;
  std::unique_ptr<sim::guest_domain> domain_;
  std::unique_ptr<sim::sim_frontend_memory> memory_;
  std::unique_ptr<xs::client> xs_;
  std::unique_ptr<sim::frontend_device> device_;
  std::unique_ptr<sim::hostile_frontend> hostile_;
  std::vector<int> tap_peers_;
};

/// Drives queue q's TX ring by hand (its worker is stopped first). Data
/// pages are granted read-only to the backend; each starts with an Ethernet
/// header to the host bridge and carries a known pattern.
class tx_driver {
 public:
  static constexpr std::size_t data_pages = 24;

  /// `q` must not run a worker (hostile_guest::stopped_queue, or manual mode).
  tx_driver(hostile_guest& g, sim::frontend_queue& q);
  ~tx_driver();
  tx_driver(const tx_driver&) = delete;
  tx_driver& operator=(const tx_driver&) = delete;

  /// Grant ref and memory of data page i (< data_pages).
  [[nodiscard]] grant_ref ref(std::size_t i) const { return refs_.at(i); }
  [[nodiscard]] std::span<std::byte, 4096> page(std::size_t i) const;

  /// A data slot over data page `page_index`.
  [[nodiscard]] rings::tx_request slot(std::size_t page_index, std::uint16_t offset,
                                       std::uint16_t size, std::uint16_t flags = 0);
  /// Writes a request / extra at req_prod_pvt (not yet published).
  void put(const rings::tx_request& r);
  void put_extra(const rings::extra_info& e);
  /// Publishes req_prod = req_prod_pvt and kicks the backend.
  void push();
  /// Writes a one-slot valid packet of `size` bytes and pushes it.
  void send_valid(std::uint16_t size = 60);
  /// Waits for `n` responses (consumes them); fewer on timeout.
  std::vector<rings::tx_response> responses(std::size_t n,
                                            std::chrono::milliseconds timeout = state_timeout);
  /// Kicks the backend's TX port.
  void kick();
  /// Publishes any req_prod value (release store) without kicking.
  void publish_req_prod(std::uint32_t value);
  /// The shared slot of free-running index `idx` (for racing writes).
  [[nodiscard]] rings::tx_request* shared_slot(std::uint32_t idx);
  [[nodiscard]] rings::tx_front_ring& ring();

 private:
  hostile_guest& g_;
  sim::frontend_queue& q_;
  std::uint16_t next_id_ = 0;
  std::vector<std::uint32_t> pages_;
  std::vector<grant_ref> refs_;
};

/// Drives queue q's RX ring by hand (worker stopped): posts buffers and
/// reads responses.
class rx_driver {
 public:
  /// `q` must not run a worker.
  rx_driver(hostile_guest& g, sim::frontend_queue& q);
  ~rx_driver();
  rx_driver(const rx_driver&) = delete;
  rx_driver& operator=(const rx_driver&) = delete;

  /// Posts one RX request with any gref; publishes and kicks.
  void post(grant_ref gref);
  /// Posts one buffer of a fresh page granted writable to the backend,
  /// filled with `fill` (to see exactly what the backend wrote).
  void post_buffer(std::byte fill = std::byte{0});
  /// The memory of the i-th buffer post_buffer() posted.
  [[nodiscard]] std::span<std::byte, 4096> buffer(std::size_t i) const;
  /// Waits for `n` responses (consumes them).
  std::vector<rings::rx_response> responses(std::size_t n,
                                            std::chrono::milliseconds timeout = state_timeout);
  /// Responses published but not consumed.
  [[nodiscard]] std::uint32_t unconsumed();
  /// Publishes any req_prod value and kicks the RX port.
  void publish_req_prod(std::uint32_t value);
  [[nodiscard]] rings::rx_front_ring& ring();

 private:
  void kick();
  hostile_guest& g_;
  sim::frontend_queue& q_;
  std::uint16_t next_id_ = 0;
  std::vector<std::uint32_t> pages_;
  std::vector<grant_ref> refs_;
};

/// A raw control ring owned by the test (feature-ctrl-ring): one granted
/// page and one event channel offered to the backend.
class raw_ctrl_ring {
 public:
  explicit raw_ctrl_ring(sim::guest_domain& d, domid backend = domid{0});
  ~raw_ctrl_ring();
  raw_ctrl_ring(const raw_ctrl_ring&) = delete;
  raw_ctrl_ring& operator=(const raw_ctrl_ring&) = delete;

  [[nodiscard]] grant_ref ref() const { return ref_; }
  [[nodiscard]] evtchn_port port() const { return port_; }
  /// Sends one request and waits for its response (nullopt on timeout).
  std::optional<rings::ctrl_response> call(std::uint16_t type, std::uint32_t d0 = 0,
                                           std::uint32_t d1 = 0, std::uint32_t d2 = 0,
                                           std::chrono::milliseconds timeout = state_timeout);
  /// Writes a request without publishing it.
  void put(const rings::ctrl_request& r);
  /// Publishes, kicks.
  void push();
  /// Publishes any req_prod value and kicks.
  void publish_req_prod(std::uint32_t value);
  /// Waits for `n` responses (consumes them).
  std::vector<rings::ctrl_response> responses(std::size_t n, std::chrono::milliseconds timeout);
  /// The shared request slot for free-running index `idx` (for racing writes).
  [[nodiscard]] rings::ctrl_request* slot(std::uint32_t idx);
  [[nodiscard]] rings::ctrl_front_ring& ring() { return ring_; }

 private:
  sim::guest_domain& d_;
  std::unique_ptr<sim::guest_event_channel> ev_;
  std::uint32_t page_ = 0;
  grant_ref ref_;
  evtchn_port port_;
  rings::ctrl_front_ring ring_;
  std::uint16_t next_id_ = 0;
};

/// Manual mode: the test writes the frontend keys. Queues (rings, ports,
/// posted RX buffers) are real frontend_queue objects; keys() is exactly
/// what netfront-sim would write; edits may change or drop any of them.
class manual_frontend {
 public:
  /// nullopt value: remove the key.
  using edits = std::map<std::string, std::optional<std::string>>;

  manual_frontend(hostile_guest& g, std::uint32_t queues, bool split, bool ctrl_ring);
  ~manual_frontend();
  manual_frontend(const manual_frontend&) = delete;
  manual_frontend& operator=(const manual_frontend&) = delete;

  /// The keys netfront would write for this configuration.
  [[nodiscard]] std::vector<std::pair<std::string, std::string>> keys() const;
  /// Writes keys() with `e` applied (one transaction), then state 4.
  void connect(const edits& e = {});
  /// After a refused connect: removes our keys, frontend 6 then 1, and waits
  /// for the backend to re-arm (InitWait). False on timeout.
  bool rearm();
  [[nodiscard]] sim::frontend_queue& queue(std::uint32_t q) { return *queues_.at(q); }
  [[nodiscard]] raw_ctrl_ring& ctrl() { return *ctrl_; }

 private:
  hostile_guest& g_;
  sim::backend_features be_;
  sim::frontend_request req_;
  std::vector<std::unique_ptr<sim::frontend_queue>> queues_;
  std::unique_ptr<raw_ctrl_ring> ctrl_;
  std::set<std::string> written_;
};

}  // namespace unetback::hostile
