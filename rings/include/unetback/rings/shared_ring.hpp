#pragma once
// The generic Xen shared ring (xen/io/ring.h) over one 4096-byte page passed
// in by the caller. Two views of the same page:
//   back_ring<Req, Rsp>  the backend: consumes requests, produces responses;
//   front_ring<Req, Rsp> the frontend: produces requests, consumes responses
//                        (used by netfront-sim and by tests, as a netfront would).
// Indices are free-running u32 counters; slot = index & (size - 1). All index
// arithmetic is wrapping and compares differences, never indices (`<`).
// Nothing here maps, logs or allocates; peer misbehaviour is a ring_error.

#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <type_traits>

#include "unetback/rings/barrier.hpp"
#include "unetback/rings/result.hpp"

namespace unetback::rings {

/// Size of a ring page (XEN_PAGE_SIZE).
inline constexpr std::size_t page_size = 4096;
/// A whole shared ring page.
using ring_page = std::span<std::byte, page_size>;

/// The 64-byte header at the start of every shared ring page (ring.h
/// `struct __name##_sring` before `ring[]`).
struct sring_header {
  std::uint32_t req_prod;   ///< written by the frontend
  std::uint32_t req_event;  ///< written by the backend: "notify me when req_prod passes this"
  std::uint32_t rsp_prod;   ///< written by the backend
  std::uint32_t rsp_event;  ///< written by the frontend
  std::uint8_t pvt[4];      ///< unused (netif: legacy smartpoll byte)
  std::uint8_t pad[44];     ///< unused
};
static_assert(sizeof(sring_header) == 64 && std::is_standard_layout_v<sring_header>);
static_assert(offsetof(sring_header, rsp_event) == 12 && offsetof(sring_header, pvt) == 16);

/// Bytes of one ring entry: the union of request and response.
template <class Req, class Rsp>
inline constexpr std::size_t ring_entry_size = [] {
  const std::size_t raw = std::max(sizeof(Req), sizeof(Rsp));
  const std::size_t align = std::max(alignof(Req), alignof(Rsp));
  return (raw + align - 1) / align * align;
}();

/// Entries in a one-page ring: (4096 - 64) / entry size rounded down to a
/// power of two, exactly like ring.h __CONST_RING_SIZE.
template <class Req, class Rsp>
inline constexpr std::uint32_t ring_size = std::bit_floor(
    static_cast<std::uint32_t>((page_size - sizeof(sring_header)) / ring_entry_size<Req, Rsp>));

/// What a peer did wrong with the ring indices (a hostile or broken peer).
enum class ring_error : std::uint8_t {
  /// Backend attach: req_prod - rsp_prod > RING_SIZE.
  attach_overflow,
  /// req_prod - req_cons > RING_SIZE or req_prod - rsp_prod_pvt > RING_SIZE
  /// (Linux netback "Impossible number of requests"; XSA-39).
  producer_overflow,
  /// Frontend side: the backend published responses for requests never sent.
  response_overflow,
};

/// A short, stable description of `e` for logs and fault reasons.
[[nodiscard]] constexpr const char* to_string(ring_error e) {
  switch (e) {
    case ring_error::attach_overflow:
      return "ring attach: req_prod - rsp_prod exceeds ring size";
    case ring_error::producer_overflow:
      return "producer index overflow: more requests than ring slots";
    case ring_error::response_overflow:
      return "more responses than outstanding requests";
  }
  return "unknown ring error";
}

namespace detail {

/// Shared-page accessors common to both ring ends.
template <class Req, class Rsp>
class sring_view {
 public:
  static constexpr std::uint32_t size = ring_size<Req, Rsp>;
  static constexpr std::size_t entry_size = ring_entry_size<Req, Rsp>;
  static_assert(std::is_trivially_copyable_v<Req> && std::is_trivially_copyable_v<Rsp>);
  static_assert(sizeof(sring_header) + size * entry_size <= page_size);

  sring_view() = default;
  explicit sring_view(ring_page page) : page_(page.data()) {}

  /// The header, for index accesses through barrier.hpp only.
  [[nodiscard]] sring_header& header() const {
    return *reinterpret_cast<sring_header*>(page_);  // page is 4096-aligned shared memory
  }
  /// Address of the entry for free-running index `idx`.
  [[nodiscard]] std::byte* entry(std::uint32_t idx) const {
    return page_ + sizeof(sring_header) + static_cast<std::size_t>(idx & (size - 1)) * entry_size;
  }
  /// Copies entry `idx` once into a private T (XSA-155: validate the copy only).
  template <class T>
  [[nodiscard]] T read_entry(std::uint32_t idx) const {
    static_assert(std::is_trivially_copyable_v<T> && sizeof(T) <= entry_size);
    T out;
    std::memcpy(&out, entry(idx), sizeof(T));
    compiler_fence();
    return out;
  }
  /// Writes `value` (all of its bytes; callers zero-initialise) at entry `idx`.
  template <class T>
  void write_entry(std::uint32_t idx, const T& value) const {
    static_assert(std::is_trivially_copyable_v<T> && sizeof(T) <= entry_size);
    std::memcpy(entry(idx), &value, sizeof(T));
  }
  [[nodiscard]] bool attached() const { return page_ != nullptr; }
  /// The four shared indices, each read once (relaxed): for diagnostics.
  [[nodiscard]] sring_header header_snapshot() const {
    sring_header& h = header();
    sring_header s{};
    s.req_prod = load_relaxed(h.req_prod);
    s.req_event = load_relaxed(h.req_event);
    s.rsp_prod = load_relaxed(h.rsp_prod);
    s.rsp_event = load_relaxed(h.rsp_event);
    return s;
  }

 private:
  std::byte* page_ = nullptr;
};

/// True iff the peer's event threshold lies in (old_idx, new_idx] (u32
/// wrapping), i.e. ring.h's "(new - event) < (new - old)" notify rule.
[[nodiscard]] constexpr bool event_in_range(std::uint32_t old_idx, std::uint32_t new_idx,
                                            std::uint32_t event) {
  return static_cast<std::uint32_t>(new_idx - event) <
         static_cast<std::uint32_t>(new_idx - old_idx);
}

}  // namespace detail

/// The backend end of a shared ring. Never initialises the header (attach
/// only; docs/protocol.md §2.1). Not thread-safe: one worker owns it.
template <class Req, class Rsp>
class back_ring {
 public:
  /// Number of entries (__CONST_RING_SIZE).
  static constexpr std::uint32_t size = ring_size<Req, Rsp>;

  /// An unattached ring; only attach() results are usable.
  back_ring() = default;

  /// Attaches to a ring the frontend initialised: rsp_prod_pvt = req_cons =
  /// rsp_prod (ring.h BACK_RING_ATTACH). Fails with attach_overflow when
  /// req_prod - rsp_prod > size (docs/protocol.md §6.2 item 6).
  [[nodiscard]] static result<back_ring, ring_error> attach(ring_page page) {
    back_ring r;
    r.view_ = detail::sring_view<Req, Rsp>(page);
    const std::uint32_t rsp_prod = load_relaxed(r.view_.header().rsp_prod);
    const std::uint32_t req_prod = load_acquire(r.view_.header().req_prod);
    if (static_cast<std::uint32_t>(req_prod - rsp_prod) > size) {
      return ring_error::attach_overflow;
    }
    r.req_cons_ = rsp_prod;
    r.rsp_prod_pvt_ = rsp_prod;
    return r;
  }

  /// Reads the frontend's req_prod once (acquire: entries read afterwards are
  /// at least as new as this index).
  [[nodiscard]] std::uint32_t load_req_prod() const {
    return load_acquire(view_.header().req_prod);
  }

  /// Requests that may be consumed given a req_prod read by load_req_prod():
  /// min(req_prod - req_cons, size - (req_cons - rsp_prod_pvt)) (ring.h
  /// RING_UNCONSUMED_REQUESTS). A req_prod more than `size` ahead of req_cons
  /// or of rsp_prod_pvt is producer_overflow (hostile frontend, XSA-39).
  [[nodiscard]] result<std::uint32_t, ring_error> unconsumed_requests(
      std::uint32_t req_prod) const {
    const std::uint32_t published = req_prod - req_cons_;
    if (published > size || static_cast<std::uint32_t>(req_prod - rsp_prod_pvt_) > size) {
      return ring_error::producer_overflow;
    }
    const std::uint32_t room = size - static_cast<std::uint32_t>(req_cons_ - rsp_prod_pvt_);
    return std::min(published, room);
  }
  /// Same, reading req_prod now.
  [[nodiscard]] result<std::uint32_t, ring_error> unconsumed_requests() const {
    return unconsumed_requests(load_req_prod());
  }

  /// Copies request `idx` (free-running) out of shared memory, once
  /// (RING_COPY_REQUEST). Call only for indices counted by unconsumed_requests().
  [[nodiscard]] Req copy_request(std::uint32_t idx) const {
    return view_.template read_entry<Req>(idx);
  }
  /// Copies `out.size()` consecutive requests starting at req_cons (a batch
  /// copy into private memory; the shared entries are never read again).
  void copy_requests(std::span<Req> out) const {
    for (std::uint32_t i = 0; i < out.size(); ++i) {
      out[i] = view_.template read_entry<Req>(req_cons_ + i);
    }
  }
  /// Marks `n` requests consumed (req_cons += n).
  void consume(std::uint32_t n) { req_cons_ += n; }

  /// Writes the next response at rsp_prod_pvt and advances it (not yet
  /// published). The response for the request consumed at index i lands at
  /// index i as long as every consumed request is answered in order.
  void write_response(const Rsp& rsp) { write_response_as(rsp); }
  /// Writes any trivially copyable slot-sized value (e.g. an RX extra-info
  /// slot) as the next response. Every byte of `value` is copied: callers
  /// zero-initialise (XSA-216).
  template <class T>
  void write_response_as(const T& value) {
    view_.write_entry(rsp_prod_pvt_, value);
    ++rsp_prod_pvt_;
  }

  /// Publishes rsp_prod = rsp_prod_pvt (release + full barrier), returns true
  /// iff the frontend asked to be notified (rsp_event in (old, new]) (ring.h
  /// RING_PUSH_RESPONSES_AND_CHECK_NOTIFY).
  [[nodiscard]] bool push_responses_and_check_notify() {
    sring_header& h = view_.header();
    const std::uint32_t old_prod = load_relaxed(h.rsp_prod);
    const std::uint32_t new_prod = rsp_prod_pvt_;
    publish(h.rsp_prod, new_prod);  // bodies before the index; index before rsp_event
    return detail::event_in_range(old_prod, new_prod, load_acquire(h.rsp_event));
  }

  /// Before sleeping: if no request is pending, sets req_event = req_cons + 1
  /// (with a full barrier) and checks again (RING_FINAL_CHECK_FOR_REQUESTS). Returns the
  /// number of unconsumed requests (0: safe to sleep) or producer_overflow.
  [[nodiscard]] result<std::uint32_t, ring_error> final_check_for_requests() {
    auto pending = unconsumed_requests();
    if (!pending || pending.value() != 0) {
      return pending;
    }
    set_req_event(req_cons_ + 1);
    return unconsumed_requests();
  }

  /// Asks to be notified when req_prod passes `event - 1`, ordered before the
  /// next load of req_prod, so a re-check afterwards sees any request published
  /// before the frontend read the new threshold. RX waiting for `n` slots: set_req_event(req_prod +
  /// 1) as Linux does, or further ahead to batch wake-ups.
  void set_req_event(std::uint32_t event) { publish(view_.header().req_event, event); }

  /// Private consumer index.
  [[nodiscard]] std::uint32_t req_cons() const { return req_cons_; }
  /// Private response producer index (not yet published beyond rsp_prod).
  [[nodiscard]] std::uint32_t rsp_prod_pvt() const { return rsp_prod_pvt_; }
  /// Shared header, for diagnostics (ring dumps): relaxed single reads.
  [[nodiscard]] sring_header header_snapshot() const { return view_.header_snapshot(); }
  /// True once attach() succeeded.
  [[nodiscard]] bool attached() const { return view_.attached(); }

 private:
  detail::sring_view<Req, Rsp> view_;
  std::uint32_t req_cons_ = 0;
  std::uint32_t rsp_prod_pvt_ = 0;
};

/// The frontend end of a shared ring, as a netfront drives it
/// (docs/protocol.md §2.4). Usage:
///   auto ring = front_ring<Req, Rsp>::init(page);  // fresh page, header initialised
///   ring.write_request(req) ...;                   // a whole packet's slots
///   if (ring.push_requests_and_check_notify()) kick();
///   ring.take_responses([](const Rsp& rsp, std::uint32_t idx) { ... });
///   if (ring.final_check_for_responses().value() == 0) sleep;
/// Publish complete packets only: the backend treats a packet whose slots run
/// past req_prod as hostile (Linux xenvif_count_requests does the same).
/// Never more than `size` requests outstanding: write_request() refuses.
template <class Req, class Rsp>
class front_ring {
 public:
  /// Number of entries (__CONST_RING_SIZE).
  static constexpr std::uint32_t size = ring_size<Req, Rsp>;

  /// An unattached ring; only init() results are usable.
  front_ring() = default;

  /// Initialises the shared page as a frontend does before granting it
  /// (SHARED_RING_INIT + FRONT_RING_INIT): the page is zeroed, req_prod =
  /// rsp_prod = 0, req_event = rsp_event = 1; req_prod_pvt = rsp_cons = 0.
  [[nodiscard]] static front_ring init(ring_page page) {
    std::memset(page.data(), 0, page.size());
    front_ring r;
    r.view_ = detail::sring_view<Req, Rsp>(page);
    sring_header& h = r.view_.header();
    store_relaxed(h.req_event, 1);
    store_relaxed(h.rsp_event, 1);
    publish(h.req_prod, 0);
    publish(h.rsp_prod, 0);
    return r;
  }

  /// Request slots that may still be filled: size - (req_prod_pvt - rsp_cons)
  /// (RING_FREE_REQUESTS).
  [[nodiscard]] std::uint32_t free_requests() const { return size - (req_prod_pvt_ - rsp_cons_); }

  /// Writes `req` at req_prod_pvt (not yet published). Returns false (and
  /// writes nothing) when the ring is full.
  bool write_request(const Req& req) { return write_request_as(req); }
  /// Writes any trivially copyable slot-sized value (e.g. a TX extra-info
  /// slot) as the next request; the rest of the entry is zeroed. False if full.
  template <class T>
  bool write_request_as(const T& value) {
    if (free_requests() == 0) {
      return false;
    }
    std::memset(view_.entry(req_prod_pvt_), 0, detail::sring_view<Req, Rsp>::entry_size);
    view_.write_entry(req_prod_pvt_, value);
    ++req_prod_pvt_;
    return true;
  }

  /// Publishes req_prod = req_prod_pvt (release + full barrier), returns true
  /// iff the backend asked to be notified (req_event in (old, new]) (ring.h
  /// RING_PUSH_REQUESTS_AND_CHECK_NOTIFY).
  [[nodiscard]] bool push_requests_and_check_notify() {
    sring_header& h = view_.header();
    const std::uint32_t old_prod = load_relaxed(h.req_prod);
    publish(h.req_prod, req_prod_pvt_);  // bodies before the index; index before req_event
    return detail::event_in_range(old_prod, req_prod_pvt_, load_acquire(h.req_event));
  }

  /// Responses published and not yet consumed: rsp_prod - rsp_cons (acquire
  /// on rsp_prod). response_overflow if the backend claims more responses than
  /// requests were published (a hostile backend; hardened frontends check).
  [[nodiscard]] result<std::uint32_t, ring_error> unconsumed_responses() const {
    const std::uint32_t rsp_prod = load_acquire(view_.header().rsp_prod);
    const std::uint32_t available = rsp_prod - rsp_cons_;
    if (available > static_cast<std::uint32_t>(req_prod_pvt_ - rsp_cons_)) {
      return ring_error::response_overflow;
    }
    return available;
  }

  /// Copies response `idx` (free-running) out of shared memory, once.
  [[nodiscard]] Rsp copy_response(std::uint32_t idx) const { return copy_response_as<Rsp>(idx); }
  /// Copies slot `idx` as any slot-sized type (e.g. an RX extra-info slot).
  template <class T>
  [[nodiscard]] T copy_response_as(std::uint32_t idx) const {
    return view_.template read_entry<T>(idx);
  }
  /// Marks `n` responses consumed (rsp_cons += n), freeing their slots.
  void consume_responses(std::uint32_t n) { rsp_cons_ += n; }

  /// Copies out and consumes the published responses in order, at most
  /// `max`, handing each to `on(response, index)` after it is consumed.
  /// Returns how many; response_overflow (nothing taken) if the backend
  /// claims more responses than requests were published.
  template <class F>
  result<std::uint32_t, ring_error> take_responses(F&& on, std::uint32_t max = size) {
    const auto available = unconsumed_responses();
    if (!available) {
      return available;
    }
    const std::uint32_t n = std::min(available.value(), max);
    for (std::uint32_t k = 0; k < n; ++k) {
      const std::uint32_t idx = rsp_cons_;
      const Rsp rsp = copy_response(idx);
      ++rsp_cons_;
      on(rsp, idx);
    }
    return n;
  }

  /// Before sleeping: if no response is pending, sets rsp_event = rsp_cons + 1
  /// (with a full barrier), checks again (RING_FINAL_CHECK_FOR_RESPONSES). Returns the
  /// number of unconsumed responses (0: safe to sleep).
  [[nodiscard]] result<std::uint32_t, ring_error> final_check_for_responses() {
    auto pending = unconsumed_responses();
    if (!pending || pending.value() != 0) {
      return pending;
    }
    publish(view_.header().rsp_event, rsp_cons_ + 1);
    return unconsumed_responses();
  }

  /// Private request producer index (next slot to fill).
  [[nodiscard]] std::uint32_t req_prod_pvt() const { return req_prod_pvt_; }
  /// Private response consumer index.
  [[nodiscard]] std::uint32_t rsp_cons() const { return rsp_cons_; }
  /// Shared header, for diagnostics and tests: relaxed single reads.
  [[nodiscard]] sring_header header_snapshot() const { return view_.header_snapshot(); }

 private:
  detail::sring_view<Req, Rsp> view_;
  std::uint32_t req_prod_pvt_ = 0;
  std::uint32_t rsp_cons_ = 0;
};

}  // namespace unetback::rings
