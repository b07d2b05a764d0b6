#pragma once
// Distinct types for the protocol's identifiers, so a grant ref can never be
// passed where an event-channel port is expected.

#include <compare>
#include <cstdint>
#include <functional>

namespace unetback {

/// A strongly typed integer: explicit construction, explicit value(), ordering.
template <class Tag, class Rep>
class strong_id {
 public:
  using rep = Rep;
  constexpr strong_id() = default;
  constexpr explicit strong_id(Rep v) : v_(v) {}
  [[nodiscard]] constexpr Rep value() const { return v_; }
  friend constexpr auto operator<=>(strong_id, strong_id) = default;

 private:
  Rep v_{};
};

/// A Xen domain id (domid_t).
using domid = strong_id<struct domid_tag, std::uint16_t>;
/// The highest id a real domain can have: DOMID_FIRST_RESERVED - 1 (xen/xen.h);
/// the ids above name special domains (DOMID_SELF, DOMID_IO, ...).
inline constexpr std::uint16_t domid_max = 0x7FEF;
/// A grant reference (grant_ref_t), local to the granting domain.
using grant_ref = strong_id<struct grant_ref_tag, std::uint32_t>;
/// An event-channel port (evtchn_port_t), local to the domain that owns it.
using evtchn_port = strong_id<struct evtchn_port_tag, std::uint32_t>;
/// A netif queue number: 0 .. multi-queue-num-queues - 1.
using queue_index = strong_id<struct queue_index_tag, std::uint32_t>;

}  // namespace unetback

template <class Tag, class Rep>
struct std::hash<unetback::strong_id<Tag, Rep>> {
  std::size_t operator()(unetback::strong_id<Tag, Rep> id) const noexcept {
    return std::hash<Rep>{}(id.value());
  }
};
