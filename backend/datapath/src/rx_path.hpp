#pragma once
// Guest RX (TAP -> frontend) for one queue. The TAP is read only while the
// guest has RX requests posted, so the kernel's bounded TAP queue is the
// backlog (XSA-392); at most one frame is held in private memory waiting for
// slots. A sweep, bounded by rx_batch frames and by its private buffer, has
// two halves around the worker step's one grant-copy call (copy_batch.hpp):
// plan() does 1-3 and adds the copies to the step's batch, complete() does 4:
//   1. reads a frame + vnet header, interprets the header for this frontend
//      (rings::vnet_to_guest_rx), applies the multicast filter, attaches a
//      HASH extra when the control ring enabled hashing;
//   2. computes the slots it needs (rings::rx_slots_needed); if fewer are
//      posted, holds it and waits (req_event = req_prod + 1). A guest that
//      posts no usable buffers gets what waits dropped every
//      rx_drain_timeout, and after rx_stall_timeout a stall: the vif's
//      carrier off until it posts buffers again (Linux's netback does both);
//   3. copies the needed requests out of the ring once, builds the copy plan
//      and responses (rings::build_rx), and batches the grant copies;
//   4. after the batch was issued, turns failed segments into
//      NETIF_RSP_ERROR slots, writes every response in place, pushes.

#include <array>
#include <cstdint>
#include <optional>
#include <vector>

#include "copy_batch.hpp"
#include "page_buffer.hpp"
#include "queue_context.hpp"
#include "sweep_fault.hpp"
#include "unetback/rings/ctrl_ring.hpp"
#include "unetback/rings/netif.hpp"
#include "unetback/rings/rx_builder.hpp"

namespace unetback::datapath {

/// What one RX sweep did.
struct rx_sweep_result {
  std::uint32_t delivered = 0;  ///< packets written to the ring
  bool new_requests = false;    ///< req_prod moved since the previous sweep
  /// The guest posted buffers where none were: what a kick for RX buffers is
  /// for (event accounting counts it as work; further postings are not).
  bool slots_arrived = false;
  bool more = false;    ///< stopped at a bound: sweep again
  bool notify = false;  ///< the frontend asked to be notified
  sweep_fault fault;    ///< stop touching the rings (a hostile frontend, a TAP gone)
};

class rx_path {
 public:
  rx_path(queue_context ctx, rings::rx_back_ring& ring);

  /// The first half of a bounded sweep: reads and places frames, their
  /// copies into `batch`. The TAP is read only when `tap_readable` (poll()
  /// said so, or the previous sweep stopped at a bound): a read that finds
  /// nothing is a system call for nothing. A fault leaves the ring untouched.
  [[nodiscard]] rx_sweep_result plan(clock::time_point now, bool tap_readable, copy_batch& batch);
  /// The second half, after `batch` was issued: answers and pushes.
  [[nodiscard]] rx_sweep_result complete(const copy_batch& batch);
  /// Before sleeping: arms req_event for the slots we wait for. True if the
  /// wait is already over (or the ring needs a sweep to report a fault).
  [[nodiscard]] bool final_check();
  /// Whether the worker should poll the TAP fd: slots are posted and no frame
  /// is held.
  [[nodiscard]] bool wants_tap() const { return !held_ && slots_posted_; }
  /// A frame waits for buffers and the guest posted some since the last sweep.
  [[nodiscard]] bool buffers_arrived() const {
    return held_.has_value() && ring_.load_req_prod() != last_req_prod_;
  }
  /// Waiting for the guest to post buffers.
  [[nodiscard]] bool waiting_for_slots() const { return waiting_since_.has_value(); }
  /// When the next drain or the stall is due, if waiting.
  [[nodiscard]] std::optional<clock::time_point> stall_deadline() const;

 private:
  /// The frame held in buf_ while it waits for slots.
  struct held_frame {
    std::uint32_t start = 0;     ///< vnet header offset in buf_
    std::uint32_t data_off = 0;  ///< frame offset in buf_
    std::uint32_t read_len = 0;  ///< header + frame bytes
    rings::rx_packet_desc desc;
    std::uint32_t need = 0;  ///< slots
  };
  /// A frame placed in this sweep: its responses and copies, and its length.
  struct placed_frame {
    rings::rx_plan plan;
    std::uint32_t length = 0;
  };

  /// Reads and places frames until a bound; true when it stopped to wait
  /// for the guest's buffers.
  [[nodiscard]] bool fill(bool tap_readable);
  /// Where the next frame is read: its data (after the vnet header) starts on
  /// a page, so every 4096-byte RX slot is copied from one page of ours (a
  /// grant copy splits a local range at page boundaries: two copies per slot
  /// otherwise).
  [[nodiscard]] std::uint32_t next_read_start() const;
  void refresh_hash();
  /// Reads and classifies one frame; false when the TAP has nothing (or failed).
  [[nodiscard]] bool read_one();
  /// Classifies a frame read at buf_[start, start + len): held, or dropped.
  void accept_frame(std::uint32_t start, std::uint32_t len);
  /// The HASH extra for `frame` when the control ring enabled hashing.
  [[nodiscard]] rings::rx_hash hash_for(std::span<const std::byte> frame) const;
  void count_unfit(rings::rx_error e);
  void place_held();
  void flush(const copy_batch& batch);
  void track_stall(clock::time_point now);
  /// Drops the held frame and what the TAP holds (a bounded number).
  void drop_waiting_frames();
  /// The queue has buffers again after a stall: carrier back on.
  void end_stall();
  void set_carrier_result(long rc, bool on) const;
  void compact();

  queue_context ctx_;
  rings::rx_back_ring& ring_;
  rings::offload_features features_;
  std::uint32_t batch_;
  std::uint32_t hdr_size_;  ///< vnet header bytes before each frame
  std::uint32_t max_read_;  ///< vnet header + largest deliverable frame + 1 (truncation check)
  std::uint32_t last_req_prod_ = 0;
  bool slots_posted_ = false;
  std::optional<held_frame> held_;
  std::optional<clock::time_point> waiting_since_;
  clock::time_point drain_at_{};  // while waiting: the next drop of what waits
  bool stall_counted_ = false;    // this wait was declared a stall (carrier off)
  rings::hash_config hash_;
  std::uint64_t hash_generation_ = 0;
  rx_sweep_result cur_;
  std::array<rings::rx_request, rings::rx_back_ring::size> reqs_{};
  std::vector<placed_frame> placed_;     // batch_ + 1 plans, built in place
  std::uint32_t placed_count_ = 0;       // placed this sweep
  std::uint32_t reads_ = 0;              // frames read this sweep
  clock::time_point now_{};              // the sweep's time (plan() to complete())
  bool waiting_ = false;                 // plan() stopped to wait for buffers
  copy_batch* copies_ = nullptr;         // the step's, between plan() and complete()
  std::size_t first_seg_ = 0;            // our first segment in it
  std::vector<std::uint32_t> seg_plan_;  // placed_ index of each of our segments
  std::vector<std::uint32_t> seg_copy_;  // copy index within that plan
  page_buffer buf_;                      // frames read from the TAP
  std::uint32_t buf_used_ = 0;
};

}  // namespace unetback::datapath
