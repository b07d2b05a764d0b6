#pragma once
// Guest TX (frontend -> TAP) for one queue. A sweep has two halves around
// the worker step's one grant-copy call (copy_batch.hpp):
//   plan():
//   1. reads req_prod once and copies every unconsumed request (<= 256) into
//      a private window (the shared ring is never read again for them);
//   2. parses packets from the window with rings::parse_tx_packet, at most
//      tx_batch slots, and adds one grant copy per non-empty data slot into
//      a contiguous private buffer per packet (XSA-423) to the step's batch;
//   complete(), after the batch was issued:
//   3. checks every one of its segments' status;
//   4. builds each packet's vnet header from the private copy and writes
//      header + frame to the TAP;
//   5. answers every consumed slot (NETIF_RSP_NULL for extras), pushes, and
//      reports whether the frontend asked for a kick.
// A fatal parse result or a producer-index overflow stops the sweep before
// anything is consumed or answered: the worker reports the fault.

#include <array>
#include <cstdint>
#include <vector>

#include "copy_batch.hpp"
#include "page_buffer.hpp"
#include "queue_context.hpp"
#include "sweep_fault.hpp"
#include "unetback/rings/netif.hpp"
#include "unetback/rings/tx_parser.hpp"

namespace unetback::datapath {

/// What one TX sweep did.
struct tx_sweep_result {
  std::uint32_t consumed = 0;  ///< ring slots consumed and answered
  bool new_requests = false;   ///< req_prod moved since the previous sweep
  bool more = false;           ///< stopped at a bound with requests left: sweep again
  bool throttled = false;      ///< out of `rate` credit until credit_ready_at()
  bool notify = false;         ///< the frontend asked to be notified
  sweep_fault fault;           ///< stop touching the rings (a hostile frontend, a TAP gone)
};

class tx_path {
 public:
  tx_path(queue_context ctx, rings::tx_back_ring& ring);

  /// The first half of a bounded sweep: consumes and plans; its copies go
  /// into `batch`. A fault leaves the ring untouched and nothing planned.
  [[nodiscard]] tx_sweep_result plan(clock::time_point now, copy_batch& batch);
  /// The second half, after `batch` was issued: sends and answers.
  [[nodiscard]] tx_sweep_result complete(const copy_batch& batch);
  /// Before sleeping: arms req_event; true if requests arrived meanwhile.
  /// A producer overflow is reported through `fault` on the next sweep.
  [[nodiscard]] bool final_check();
  /// Requests wait in the ring (read from shared memory: no system call).
  [[nodiscard]] bool has_requests() const { return ring_.load_req_prod() != ring_.req_cons(); }
  /// When a throttled queue may send again.
  /// When the vif's `rate` credit covers the packet that stopped the sweep.
  [[nodiscard]] clock::time_point credit_ready_at(clock::time_point now) const {
    return ctx_.shared.credit().ready_at(throttled_size_, now);
  }

 private:
  /// A packet of this sweep, parsed from window_[pos, pos + slots).
  struct pending_packet {
    std::uint32_t pos = 0;
    std::uint32_t slots = 0;
    std::uint32_t extras = 0;
    std::int16_t status = rings::netif_rsp::okay;
    bool send = false;          ///< a frame to write to the TAP
    std::uint32_t buf_off = 0;  ///< its bytes in buf_
    std::uint16_t len = 0;
    rings::tx_offload offload;
  };

  /// Parses and plans packets from the window; returns the slots planned.
  [[nodiscard]] std::uint32_t plan_packets(std::uint32_t n, clock::time_point now);
  /// Plans one parsed packet; false when a bound (credit, buffer) stops the sweep.
  [[nodiscard]] bool plan_one(const rings::tx_parse_result& p, std::uint32_t pos,
                              clock::time_point now);
  void plan_copies(const rings::tx_packet& pkt, std::uint32_t packet_index, std::uint32_t off);
  [[nodiscard]] std::int16_t apply_mcast(const rings::tx_packet& pkt);
  void count_drop(rings::tx_error e);
  void check_copies(const copy_batch& batch);
  void deliver(pending_packet& pkt);
  void respond(const pending_packet& pkt);

  queue_context ctx_;
  rings::tx_back_ring& ring_;
  rings::tx_parser_limits limits_;
  std::uint32_t throttled_size_ = 0;  ///< bytes of the packet waiting for credit
  std::uint32_t last_req_prod_ = 0;
  tx_sweep_result cur_;  ///< the sweep in progress
  std::array<rings::tx_request, rings::tx_back_ring::size> window_{};
  std::vector<pending_packet> packets_;    // capacity: ring size
  copy_batch* copies_ = nullptr;           // the step's, between plan() and complete()
  std::size_t first_seg_ = 0;              // our first segment in it
  std::vector<std::uint32_t> seg_packet_;  // packet index of each of our segments
  page_buffer buf_;                        // contiguous private packet copies
  std::uint32_t buf_used_ = 0;
};

}  // namespace unetback::datapath
