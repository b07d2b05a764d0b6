// A structure-aware fuzzer for one whole netif queue. The input is decoded
// into a sequence of operations by three actors:
//   * a hostile frontend: writes TX requests and extra-info slots anywhere,
//     publishes any req_prod (TX and RX), posts RX buffers with any grant,
//     kicks, revokes grants, makes them read-only, scribbles on data pages,
//     consumes responses (checking them as a hardened netfront would);
//   * the host: injects frames (with any vnet header) into the TAP, drains
//     what the backend wrote to it, drives the control-ring handler and the
//     multicast filter of the vif;
//   * the backend: one step of the worker (worker::step: events, TX and RX
//     sweeps with their one grant-copy call, settle/backoff), its final
//     check, time passing; what the step may read is what poll() would say.
// It runs the REAL data-path code (worker, tx_path, rx_path, event_pump of
// backend/datapath/src) as tests/support's stepped_worker, over its fake
// platform (guest memory, grant copies, event channels) with a
// SOCK_SEQPACKET socketpair as the TAP, single-threaded and deterministic
// (the fuzzer plays the worker's thread). After every step it checks what the worker
// and the guest rely on; a violation aborts:
//   * every consumed TX/RX slot is answered in the same sweep, in place;
//   * the backend never consumes past the published req_prod, and a sweep
//     that reports a fault consumed and answered nothing (the data path then
//     stops touching the rings, as the worker does);
//   * TX statuses are NETIF_RSP_*; RX response chains parse (sim::rx_assembler)
//     without overruns, unknown extras or more than 18 data slots;
//   * frames written to the TAP carry a vnet header and >= ETH_HLEN bytes,
//     <= 65535.

#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <span>
#include <vector>

#include <spdlog/spdlog.h>

#include "queue_context.hpp"
#include "unetback/datapath/vif_shared_state.hpp"
#include "unetback/rings/ctrl_ring.hpp"
#include "unetback/sim/netfront/rx_assembler.hpp"
#include "unetback/test_support/fake_platform.hpp"
#include "unetback/test_support/socket_frame_port.hpp"
#include "unetback/test_support/stepped_worker.hpp"
#include "worker.hpp"

namespace {

using namespace unetback;            // NOLINT(google-build-using-namespace)
using namespace unetback::datapath;  // NOLINT(google-build-using-namespace)
using test_support::fake_event_channel;
using test_support::fake_guest_memory;
using test_support::fake_platform;
using test_support::socket_frame_port;
using test_support::stepped_worker;

void require(bool ok) {
  if (!ok) {
    std::abort();
  }
}

/// Reads the fuzzer input; past the end everything reads as zero.
class input {
 public:
  input(const std::uint8_t* data, std::size_t size) : data_(data), size_(size) {}
  [[nodiscard]] bool empty() const { return pos_ >= size_; }
  std::uint8_t u8() { return pos_ < size_ ? data_[pos_++] : 0; }
  std::uint16_t u16() { return static_cast<std::uint16_t>(u8() | (u8() << 8)); }
  std::uint32_t u32() { return static_cast<std::uint32_t>(u16() | (std::uint32_t{u16()} << 16)); }

 private:
  const std::uint8_t* data_;
  std::size_t size_;
  std::size_t pos_ = 0;
};

constexpr domid guest{7};
constexpr std::uint32_t tx_port = 5;
constexpr std::uint32_t rx_port = 6;
constexpr std::size_t data_refs = 8;
constexpr std::size_t vnet_size = 12;

enum op : std::uint8_t {
  tx_slot,
  tx_extra,
  tx_publish,
  kick,
  backend_step,
  rx_post,
  rx_publish,
  tap_inject,
  grant_op,
  advance_time,
  guest_tx_responses,
  guest_rx_responses,
  tap_drain,
  ctrl_request,
  multicast,
  scribble,
  op_count,
};

/// The initial contents of data page i: byte b is b * 31 + i. Computed once
/// (filling the pages byte by byte per input took a sixth of the fuzzer's
/// time in coverage callbacks); every input copies them into fresh pages.
const std::array<std::array<std::byte, 4096>, data_refs>& page_patterns() {
  static const auto patterns = [] {
    std::array<std::array<std::byte, 4096>, data_refs> p{};
    for (std::size_t i = 0; i < data_refs; ++i) {
      for (std::size_t b = 0; b < 4096; ++b) {
        p[i][b] = static_cast<std::byte>(b * 31 + i);
      }
    }
    return p;
  }();
  return patterns;
}

/// Everything one input runs against.
class queue_under_fuzz {
 public:
  explicit queue_under_fuzz(input& in) : in_(in) {
    tx_ref_ = mem_.grant_page();
    rx_ref_ = mem_.grant_page();
    const auto& patterns = page_patterns();
    for (std::size_t i = 0; i < data_refs; ++i) {
      refs_.push_back(mem_.grant_page());
      std::memcpy(mem_.raw_page(refs_.back()), patterns[i].data(), 4096);
    }
    (void)rings::tx_front_ring::init(page_span(tx_ref_));
    (void)rings::rx_front_ring::init(page_span(rx_ref_));
    configure();
    int sv[2];
    require(::socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) == 0);
    peer_ = sv[1];
    shared_ = std::make_shared<vif_shared_state>(num_queues_);
    shared_->set_multicast_filtering(config_.features.multicast_control);
    shared_->credit().set_rate(config_.tuning.rate_bytes, config_.tuning.rate_interval);
    worker_ = std::make_unique<stepped_worker>(
        platform_, config_, std::make_unique<socket_frame_port>(sv[0], vnet_size), shared_);
    channel_ = platform_.channels.back();
    ctrl_ = std::make_unique<rings::ctrl_handler>(num_queues_);
  }
  ~queue_under_fuzz() { ::close(peer_); }
  queue_under_fuzz(const queue_under_fuzz&) = delete;
  queue_under_fuzz& operator=(const queue_under_fuzz&) = delete;

  void run() {
    for (int steps = 0; steps < 1000 && !in_.empty(); ++steps) {
      switch (static_cast<op>(in_.u8() % op_count)) {
        case tx_slot:
          write_tx_slot();
          break;
        case tx_extra:
          write_tx_extra();
          break;
        case tx_publish:
          publish(tx_ref_, tx_prod_);
          break;
        case kick:
          channel_->kick(config_.split_event_channels && (in_.u8() & 1) ? rx_port : tx_port);
          break;
        case backend_step:
          step();
          break;
        case rx_post:
          post_rx();
          break;
        case rx_publish:
          publish(rx_ref_, rx_prod_);
          break;
        case tap_inject:
          inject();
          break;
        case grant_op:
          grant_change();
          break;
        case advance_time:
          now_ += std::chrono::milliseconds(std::uint32_t{in_.u16()} * 16);
          break;
        case guest_tx_responses:
          read_tx_responses();
          break;
        case guest_rx_responses:
          read_rx_responses();
          break;
        case tap_drain:
          drain_tap();
          break;
        case ctrl_request:
          control();
          break;
        case multicast:
          mcast();
          break;
        case scribble:
          scribble_page();
          break;
        case op_count:
          break;
      }
    }
    for (int i = 0; i < 4; ++i) {  // let the backend finish what is pending
      step();
    }
    read_tx_responses();
    read_rx_responses();
    drain_tap();
  }

 private:
  std::span<std::byte, 4096> page_span(std::uint32_t ref) {
    return std::span<std::byte, 4096>(mem_.raw_page(ref), 4096);
  }
  rings::sring_header& header(std::uint32_t ring_ref) {
    return *reinterpret_cast<rings::sring_header*>(mem_.raw_page(ring_ref));
  }

  void configure() {
    const std::uint8_t f = in_.u8();
    config_.name = "vif7.0-q0";
    config_.frontend = guest;
    config_.index = queue_index{0};
    config_.tx_ring_ref = grant_ref{tx_ref_};
    config_.rx_ring_ref = grant_ref{rx_ref_};
    config_.split_event_channels = (f & 0x80) != 0;
    config_.tx_port = evtchn_port{tx_port};
    config_.rx_port = evtchn_port{config_.split_event_channels ? rx_port : tx_port};
    config_.features = frontend_features{(f & 1) != 0,  (f & 2) != 0,  (f & 4) != 0, (f & 8) != 0,
                                         (f & 16) != 0, (f & 32) != 0, (f & 64) != 0};
    queue_tuning& t = config_.tuning;
    t.tx_batch = in_.u8();
    t.rx_batch = in_.u8();
    t.max_tx_slots_drop = in_.u8() % 40;
    t.max_tx_slots_fatal = in_.u8() % 70;
    t.rx_backlog_bytes = std::size_t{in_.u8()} * 4096;
    t.rx_stall_timeout = std::chrono::milliseconds(std::uint32_t{in_.u8()} * 100);
    t.rx_drain_timeout = std::chrono::milliseconds(std::uint32_t{in_.u8()} * 50);
    const std::uint8_t rate = in_.u8();
    t.rate_bytes = (rate & 0x80) != 0 ? std::uint64_t{rate & 0x7FU} * 1024 : 0;
    t.rate_interval = std::chrono::microseconds(t.rate_bytes != 0 ? 10000 : 0);
    num_queues_ = 1 + in_.u8() % 8;
  }

  std::uint32_t pick_ref() {
    const std::uint8_t sel = in_.u8();
    switch (sel % 16) {
      case 8:
        return tx_ref_;
      case 9:
        return rx_ref_;
      case 10:
        return 0xFFFFFFFFU;
      case 11:
        return 0;
      case 12:
        return in_.u32();
      default:
        return refs_[sel % data_refs];
    }
  }

  // A hostile guest writes any slot, also one whose response it has not
  // read yet; the checking netfront validates every published response
  // before its own writes can overwrite one (responses are the backend's).
  void write_tx_slot() {
    read_tx_responses();
    rings::tx_request r{};
    r.gref = pick_ref();
    r.offset = in_.u16();
    r.flags = in_.u8();
    r.id = in_.u16();
    r.size = in_.u16();
    std::memcpy(tx_entry(tx_prod_++), &r, sizeof r);
  }
  void write_tx_extra() {
    read_tx_responses();
    rings::extra_info e{};
    e.type = in_.u8();
    e.flags = in_.u8();
    for (auto& b : e.u.pad) {
      b = in_.u16();
    }
    std::byte* slot = tx_entry(tx_prod_++);
    std::memset(slot, 0, 12);
    std::memcpy(slot, &e, sizeof e);
  }
  std::byte* tx_entry(std::uint32_t idx) {
    return mem_.raw_page(tx_ref_) + sizeof(rings::sring_header) + (idx & 255U) * 12;
  }
  std::byte* rx_entry(std::uint32_t idx) {
    return mem_.raw_page(rx_ref_) + sizeof(rings::sring_header) + (idx & 255U) * 8;
  }

  /// Mostly the honest index; sometimes anything (XSA-39).
  void publish(std::uint32_t ring_ref, std::uint32_t honest) {
    const std::uint8_t mode = in_.u8();
    const std::uint32_t value = (mode & 7) == 0 ? in_.u32() : honest;
    std::atomic_ref<std::uint32_t>(header(ring_ref).req_prod)
        .store(value, std::memory_order_release);
  }

  void post_rx() {
    read_rx_responses();
    rings::rx_request r{};
    r.id = static_cast<std::uint16_t>(rx_prod_);
    r.gref = pick_ref();
    // A guest may offer its own ring pages as RX buffers: the backend then
    // (legitimately) writes packet data over the guest's rings, and the
    // guest-side checks of response contents no longer mean anything.
    aliased_ = aliased_ || r.gref == tx_ref_ || r.gref == rx_ref_;
    std::memcpy(rx_entry(rx_prod_++), &r, sizeof r);
  }

  void inject() {
    std::array<std::uint8_t, vnet_size> hdr{};
    hdr[0] = in_.u8() & 0x03;  // NEEDS_CSUM, DATA_VALID
    hdr[1] = in_.u8();         // gso_type (any value)
    const std::uint16_t hdr_len = in_.u16();
    const std::uint16_t gso_size = in_.u16();
    const std::uint16_t csum_start = in_.u16();
    const std::uint16_t csum_offset = in_.u16();
    std::memcpy(&hdr[2], &hdr_len, 2);
    std::memcpy(&hdr[4], &gso_size, 2);
    std::memcpy(&hdr[6], &csum_start, 2);
    std::memcpy(&hdr[8], &csum_offset, 2);
    const std::size_t len = in_.u16() % 9100;
    std::vector<std::uint8_t> frame(vnet_size + len);
    std::memcpy(frame.data(), hdr.data(), vnet_size);
    frame_template(std::span(frame).subspan(vnet_size), in_.u8());
    (void)::send(peer_, frame.data(), frame.size(), MSG_DONTWAIT);
  }

  /// Fills `f` with an Ethernet frame shaped by `kind` (so the header parsers
  /// get past the first checks) and input bytes.
  void frame_template(std::span<std::uint8_t> f, std::uint8_t kind) {
    for (std::size_t i = 0; i < f.size() && i < 64; ++i) {
      f[i] = in_.u8();
    }
    if (f.size() < 14) {
      return;
    }
    f[0] = (kind & 0x10) != 0 ? 0x01 : 0x00;  // multicast destination or not
    const bool v6 = (kind & 1) != 0;
    f[12] = v6 ? 0x86 : 0x08;
    f[13] = v6 ? 0xDD : 0x00;
    if (f.size() >= 34) {
      f[14] = v6 ? 0x60 : 0x45;
      f[v6 ? 20 : 23] = (kind & 2) != 0 ? 17 : 6;  // UDP or TCP
    }
  }

  void grant_change() {
    const std::uint8_t sel = in_.u8();
    const std::uint32_t ref = refs_[sel % data_refs];
    if ((sel & 0x80) != 0) {
      mem_.make_readonly(ref);
    } else {
      mem_.revoke(ref);
    }
  }

  void scribble_page() {
    const std::uint32_t ref = pick_ref();
    if (ref == tx_ref_ || ref == rx_ref_ || mem_.page(ref) == nullptr) {
      return;  // ring pages change through the ring ops only
    }
    const std::uint16_t off = in_.u16() % 4096;
    mem_.raw_page(ref)[off] = static_cast<std::byte>(in_.u8());
  }

  void mcast() {
    const std::uint8_t what = in_.u8();
    mac_address mac{0x01, 0x00, 0x5e, 0x00, 0x00, static_cast<std::uint8_t>(what & 0x3F)};
    if ((what & 0xC0) == 0) {
      (void)shared_->multicast_add(mac);
    } else if ((what & 0xC0) == 0x40) {
      shared_->multicast_del(mac);
    } else {
      shared_->set_multicast_filtering((what & 1) != 0);
    }
  }

  /// A control-ring request, handled as the control-ring thread does (grant
  /// reads are copies from the fake memory), publishing committed changes.
  void control() {
    rings::ctrl_request req{};
    req.id = in_.u16();
    req.type = static_cast<std::uint16_t>(in_.u8() % 12);
    req.data[0] = (in_.u8() & 1) != 0 ? refs_[0] : in_.u32();
    req.data[1] = in_.u8() < 200 ? in_.u8() : in_.u32();
    req.data[2] = in_.u8() < 200 ? in_.u8() : in_.u32();
    const auto before = ctrl_->generation();
    const auto rsp = ctrl_->handle(req, [&](grant_ref ref, std::span<std::byte> dest) {
      const std::byte* p = mem_.page(ref.value());
      if (p == nullptr || dest.size() > 4096) {
        return false;
      }
      std::memcpy(dest.data(), p, dest.size());
      return true;
    });
    require(rsp.id == req.id && rsp.type == req.type && rsp.status <= 3);
    if (ctrl_->generation() != before) {
      for (std::uint32_t i = 0; i < ctrl_->config().mapping_size; ++i) {
        require(ctrl_->config().mapping[i] < num_queues_);  // XSA-270
      }
      shared_->publish_hash(ctrl_->config());
    }
  }

  /// One step of the worker and its final check, with the invariants checked.
  void step() {
    if (faulted_) {
      return;  // a worker stops touching the rings after a fault
    }
    const ring_indices tx_before = indices(worker_->tx_ring().req_cons(), tx_ref_);
    const ring_indices rx_before = indices(worker_->rx_ring().req_cons(), rx_ref_);
    const step_result r = worker_->step(now_);
    if (r.fault) {
      // The faulting ring was left as it was; the other one answered all it took.
      const bool tx = r.fault.source == fault_source::tx_ring;
      require(tx || r.fault.source == fault_source::rx_ring);
      const ring_indices after =
          indices(tx ? worker_->tx_ring().req_cons() : worker_->rx_ring().req_cons(),
                  tx ? tx_ref_ : rx_ref_);
      const ring_indices& before = tx ? tx_before : rx_before;
      require(after.req_cons == before.req_cons && (aliased_ || after.rsp_prod == before.rsp_prod));
      require(worker_->tx_ring().rsp_prod_pvt() == worker_->tx_ring().req_cons());
      faulted_ = true;
      return;
    }
    check_ring(worker_->tx_ring().req_cons(), worker_->tx_ring().rsp_prod_pvt(), tx_ref_,
               tx_before.req_prod);
    check_ring(worker_->rx_ring().req_cons(), worker_->rx_ring().rsp_prod_pvt(), rx_ref_,
               rx_before.req_prod);
    (void)worker_->final_check();
  }

  struct ring_indices {
    std::uint32_t req_cons = 0;
    std::uint32_t rsp_prod = 0;
    std::uint32_t req_prod = 0;  ///< as published before the step
    bool operator==(const ring_indices&) const = default;
  };
  ring_indices indices(std::uint32_t req_cons, std::uint32_t ref) {
    return {req_cons, std::atomic_ref<std::uint32_t>(header(ref).rsp_prod).load(),
            std::atomic_ref<std::uint32_t>(header(ref).req_prod).load()};
  }

  /// Every consumed slot answered and published, never past the req_prod the
  /// step began with (a guest offering its own ring page as an RX buffer has
  /// the step's RX copies overwrite the TX ring after TX read it).
  void check_ring(std::uint32_t req_cons, std::uint32_t rsp_prod_pvt, std::uint32_t ref,
                  std::uint32_t published) {
    require(rsp_prod_pvt == req_cons);
    require(static_cast<std::uint32_t>(published - req_cons) <= 256U);
    require(aliased_ ||
            std::atomic_ref<std::uint32_t>(header(ref).rsp_prod).load() == rsp_prod_pvt);
  }

  void read_tx_responses() {
    if (aliased_) {
      return;
    }
    const std::uint32_t prod = std::atomic_ref<std::uint32_t>(header(tx_ref_).rsp_prod).load();
    require(static_cast<std::uint32_t>(prod - tx_rsp_cons_) <= 256U);
    for (; tx_rsp_cons_ != prod; ++tx_rsp_cons_) {
      rings::tx_response r{};
      std::memcpy(&r, tx_entry(tx_rsp_cons_), sizeof r);
      require(r.status >= rings::netif_rsp::dropped && r.status <= rings::netif_rsp::null);
    }
  }

  void read_rx_responses() {
    if (aliased_) {
      return;
    }
    const std::uint32_t prod = std::atomic_ref<std::uint32_t>(header(rx_ref_).rsp_prod).load();
    require(static_cast<std::uint32_t>(prod - rx_rsp_cons_) <= 256U);
    for (; rx_rsp_cons_ != prod; ++rx_rsp_cons_) {
      rings::rx_response r{};
      std::memcpy(&r, rx_entry(rx_rsp_cons_), sizeof r);
      const auto s = assembler_.feed(rx_rsp_cons_, r);
      if (s == sim::rx_assembler::state::failed) {
        // Only a failed grant copy may make a packet bad (a negative status).
        require(assembler_.error() == sim::rx_error::slot_status);
        assembler_.reset();
      } else if (s == sim::rx_assembler::state::complete) {
        require(assembler_.packet().total > 0 && assembler_.packet().total <= 65535);
        assembler_.reset();
      }
    }
  }

  void drain_tap() {
    // Only the lengths are checked: one buffer serves every call.
    static std::vector<std::uint8_t> buf(70000);
    for (;;) {
      const ssize_t n = ::recv(peer_, buf.data(), buf.size(), MSG_DONTWAIT);
      if (n <= 0) {
        return;
      }
      const auto len = static_cast<std::size_t>(n);
      require(len >= vnet_size + 14 && len <= vnet_size + 65535);
    }
  }

  input& in_;
  fake_guest_memory mem_;
  fake_platform platform_{mem_};
  fake_event_channel* channel_ = nullptr;  ///< the worker's (platform_ keeps a pointer)
  std::uint32_t tx_ref_ = 0;
  std::uint32_t rx_ref_ = 0;
  std::vector<std::uint32_t> refs_;
  queue_config config_;
  std::uint32_t num_queues_ = 1;
  int peer_ = -1;
  std::shared_ptr<vif_shared_state> shared_;
  std::unique_ptr<stepped_worker> worker_;  ///< the real worker, stepped by the input
  std::unique_ptr<rings::ctrl_handler> ctrl_;
  sim::rx_assembler assembler_;
  clock::time_point now_{std::chrono::seconds(1000)};
  std::uint32_t tx_prod_ = 0;
  std::uint32_t rx_prod_ = 0;
  std::uint32_t tx_rsp_cons_ = 0;
  std::uint32_t rx_rsp_cons_ = 0;
  bool faulted_ = false;
  bool aliased_ = false;
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  // The data path logs (rate-limited) every drop; the fuzzer wants speed.
  static const bool quiet = [] {
    spdlog::set_level(spdlog::level::off);
    return true;
  }();
  (void)quiet;
  input in(data, size);
  queue_under_fuzz q(in);
  q.run();
  return 0;
}
