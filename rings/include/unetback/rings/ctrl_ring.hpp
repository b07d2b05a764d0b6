#pragma once
// Control-ring message handling (feature-ctrl-ring; docs/protocol.md §4,
// §6.2 items 26-27) as a pure state machine: a hash_config, and
// handle(request, read_grant) -> response. Every parameter is checked with
// overflow-safe arithmetic; tables are copied into staging, validated, then
// committed whole (XSA-270). Unknown types answer NOT_SUPPORTED. The grant
// reader is the worker's grant copy: it copies dest.size() bytes from offset
// 0 of the page the frontend granted as `ref` and returns false on failure.

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>

#include "unetback/rings/ids.hpp"
#include "unetback/rings/netif.hpp"

namespace unetback::rings {

/// Longest hash key accepted (Linux XEN_NETBK_MAX_HASH_KEY_SIZE).
inline constexpr std::size_t max_hash_key_size = 40;
/// Largest mapping table accepted (Linux XEN_NETBK_MAX_HASH_MAPPING_SIZE).
inline constexpr std::uint32_t max_hash_mapping_size = 128;
/// Hash types we compute: IPV4 | IPV4_TCP | IPV6 | IPV6_TCP.
inline constexpr std::uint32_t supported_hash_types =
    XEN_NETIF_CTRL_HASH_TYPE_IPV4 | XEN_NETIF_CTRL_HASH_TYPE_IPV4_TCP |
    XEN_NETIF_CTRL_HASH_TYPE_IPV6 | XEN_NETIF_CTRL_HASH_TYPE_IPV6_TCP;

/// XEN_NETIF_CTRL_STATUS_*.
namespace ctrl_status {
inline constexpr std::uint32_t success = XEN_NETIF_CTRL_STATUS_SUCCESS;
inline constexpr std::uint32_t not_supported = XEN_NETIF_CTRL_STATUS_NOT_SUPPORTED;
inline constexpr std::uint32_t invalid_parameter = XEN_NETIF_CTRL_STATUS_INVALID_PARAMETER;
inline constexpr std::uint32_t buffer_overflow = XEN_NETIF_CTRL_STATUS_BUFFER_OVERFLOW;
}  // namespace ctrl_status

/// A request as a frontend writes it into the control ring (netif.h: id,
/// type, data[0..2]; the meaning of each data word depends on the type).
[[nodiscard]] constexpr ctrl_request make_ctrl_request(std::uint16_t id, std::uint16_t type,
                                                       std::uint32_t d0 = 0, std::uint32_t d1 = 0,
                                                       std::uint32_t d2 = 0) {
  ctrl_request r{};
  r.id = id;
  r.type = type;
  r.data[0] = d0;
  r.data[1] = d1;
  r.data[2] = d2;
  return r;
}

/// A vif's receive-side hashing configuration, as the frontend set it.
struct hash_config {
  std::uint32_t algorithm = XEN_NETIF_CTRL_HASH_ALGORITHM_NONE;  ///< NONE or TOEPLITZ
  std::uint32_t flags = 0;                                       ///< enabled hash types
  std::array<std::uint8_t, max_hash_key_size> key{};             ///< zero-padded
  std::uint32_t mapping_size = 0;                                ///< 0: hash mod num_queues
  std::array<std::uint32_t, max_hash_mapping_size> mapping{};    ///< entries < num_queues

  /// True when packets get a Toeplitz hash (and a HASH extra).
  [[nodiscard]] bool hashing() const {
    return algorithm == XEN_NETIF_CTRL_HASH_ALGORITHM_TOEPLITZ && flags != 0;
  }
  /// The queue for `hash` (Linux xenvif_select_queue): mapping[hash %
  /// mapping_size], or hash % num_queues without a table.
  [[nodiscard]] std::uint32_t select_queue(std::uint32_t hash, std::uint32_t num_queues) const {
    if (mapping_size == 0) {
      return num_queues == 0 ? 0 : hash % num_queues;
    }
    return mapping[hash % std::min(mapping_size, max_hash_mapping_size)];
  }
  friend bool operator==(const hash_config&, const hash_config&) = default;
};

/// The control-ring state machine of one vif.
class ctrl_handler {
 public:
  /// `num_queues`: multi-queue-num-queues; every mapping entry must be below it.
  explicit ctrl_handler(std::uint32_t num_queues) : num_queues_(num_queues) {}

  /// Handles one request (already copied out of the ring) and returns its
  /// fully initialised response (id and type echoed). `read_grant(ref, dest)`
  /// copies dest.size() <= 4096 bytes from offset 0 of the granted page.
  template <class GrantReader>
  [[nodiscard]] ctrl_response handle(const ctrl_request& req, GrantReader&& read_grant) {
    ctrl_response rsp;
    std::memset(&rsp, 0, sizeof(rsp));
    rsp.id = req.id;
    rsp.type = req.type;
    const outcome out = dispatch(req, read_grant);
    rsp.status = out.status;
    rsp.data = out.status == ctrl_status::success ? out.data : 0;
    return rsp;
  }

  /// The committed configuration.
  [[nodiscard]] const hash_config& config() const { return cfg_; }
  /// Incremented on every committed change (publishers compare it).
  [[nodiscard]] std::uint64_t generation() const { return generation_; }

  /// Takes over a configuration committed before (the backend's own record,
  /// carried across a restart): accepted only if the requests a guest would
  /// send to build it, replayed through the same handlers into a scratch
  /// handler, succeed and build exactly it. False, and nothing changed,
  /// otherwise. One set of rules: no separate checker to drift from them.
  [[nodiscard]] bool restore(const hash_config& c) {
    ctrl_handler scratch(num_queues_);
    if (!scratch.build(c) || scratch.cfg_ != c) {
      return false;
    }
    cfg_ = c;
    ++generation_;
    return true;
  }

 private:
  /// A status and the response's data word.
  struct outcome {
    std::uint32_t status = ctrl_status::success;
    std::uint32_t data = 0;
    // NOLINTNEXTLINE(google-explicit-constructor): most handlers return a bare status
    outcome(std::uint32_t s) : status(s) {}
    outcome(std::uint32_t s, std::uint32_t d) : status(s), data(d) {}
  };

  template <class GrantReader>
  outcome dispatch(const ctrl_request& req, GrantReader& read) {
    switch (req.type) {
      case XEN_NETIF_CTRL_TYPE_GET_HASH_FLAGS:
        return get_hash_flags();
      case XEN_NETIF_CTRL_TYPE_SET_HASH_FLAGS:
        return set_hash_flags(req.data[0]);
      case XEN_NETIF_CTRL_TYPE_SET_HASH_KEY:
        return set_hash_key(grant_ref(req.data[0]), req.data[1], read);
      case XEN_NETIF_CTRL_TYPE_GET_HASH_MAPPING_SIZE:
        return {ctrl_status::success, max_hash_mapping_size};
      case XEN_NETIF_CTRL_TYPE_SET_HASH_MAPPING_SIZE:
        return set_mapping_size(req.data[0]);
      case XEN_NETIF_CTRL_TYPE_SET_HASH_MAPPING:
        return set_mapping(grant_ref(req.data[0]), req.data[1], req.data[2], read);
      case XEN_NETIF_CTRL_TYPE_SET_HASH_ALGORITHM:
        return set_algorithm(req.data[0]);
      default:  // INVALID, static-grant messages (8-10), unknown types
        return ctrl_status::not_supported;
    }
  }

  /// The requests that build `c`, in an order every valid configuration
  /// allows (flags need TOEPLITZ selected; NONE may follow and keeps them).
  /// The key and the table are "granted" from `c` itself.
  bool build(const hash_config& c) {
    const auto from = [](std::span<const std::byte> src) {
      return [src](grant_ref, std::span<std::byte> dest) {
        if (dest.size() > src.size()) {
          return false;
        }
        std::memcpy(dest.data(), src.data(), dest.size());
        return true;
      };
    };
    auto key = from(std::as_bytes(std::span(c.key)));
    auto table = from(std::as_bytes(std::span(c.mapping)));
    const bool flags_set = c.flags == 0 || (set_algorithm(XEN_NETIF_CTRL_HASH_ALGORITHM_TOEPLITZ) ==
                                                ctrl_status::success &&
                                            set_hash_flags(c.flags) == ctrl_status::success);
    return flags_set && set_algorithm(c.algorithm) == ctrl_status::success &&
           set_hash_key(grant_ref(0), max_hash_key_size, key) == ctrl_status::success &&
           set_mapping_size(c.mapping_size) == ctrl_status::success &&
           set_mapping(grant_ref(0), c.mapping_size, 0, table) == ctrl_status::success;
  }

  /// NOT_SUPPORTED until an algorithm is selected (netif.h).
  [[nodiscard]] outcome get_hash_flags() const {
    if (cfg_.algorithm == XEN_NETIF_CTRL_HASH_ALGORITHM_NONE) {
      return ctrl_status::not_supported;
    }
    return {ctrl_status::success, supported_hash_types};
  }

  /// Unknown bits, or no algorithm selected: INVALID_PARAMETER; 0 disables hashing.
  std::uint32_t set_hash_flags(std::uint32_t flags) {
    if ((flags & ~supported_hash_types) != 0 ||
        cfg_.algorithm == XEN_NETIF_CTRL_HASH_ALGORITHM_NONE) {
      return ctrl_status::invalid_parameter;
    }
    cfg_.flags = flags;
    ++generation_;
    return ctrl_status::success;
  }

  /// NONE or TOEPLITZ; anything else INVALID_PARAMETER.
  std::uint32_t set_algorithm(std::uint32_t alg) {
    if (alg != XEN_NETIF_CTRL_HASH_ALGORITHM_NONE &&
        alg != XEN_NETIF_CTRL_HASH_ALGORITHM_TOEPLITZ) {
      return ctrl_status::invalid_parameter;
    }
    cfg_.algorithm = alg;
    ++generation_;
    return ctrl_status::success;
  }

  /// netif.h: a key longer than we support is BUFFER_OVERFLOW (Linux says
  /// INVALID_PARAMETER); length 0 clears the key; unspecified octets are zero.
  template <class GrantReader>
  std::uint32_t set_hash_key(grant_ref ref, std::uint32_t len, GrantReader& read) {
    if (len > max_hash_key_size) {
      return ctrl_status::buffer_overflow;
    }
    std::array<std::uint8_t, max_hash_key_size> staged{};
    if (len != 0 && !read(ref, std::as_writable_bytes(std::span(staged).first(len)))) {
      return ctrl_status::invalid_parameter;
    }
    cfg_.key = staged;
    ++generation_;
    return ctrl_status::success;
  }

  /// Resets the table to zeros (netif.h); > max is INVALID_PARAMETER.
  std::uint32_t set_mapping_size(std::uint32_t size) {
    if (size > max_hash_mapping_size) {
      return ctrl_status::invalid_parameter;
    }
    cfg_.mapping_size = size;
    cfg_.mapping.fill(0);
    ++generation_;
    return ctrl_status::success;
  }

  /// XSA-270: offset + len checked without overflow, len * 4 <= 4096, the
  /// sub-table copied into staging and every entry checked < num_queues
  /// before anything is committed.
  template <class GrantReader>
  std::uint32_t set_mapping(grant_ref ref, std::uint32_t len, std::uint32_t off,
                            GrantReader& read) {
    if (off > cfg_.mapping_size || len > cfg_.mapping_size - off ||
        len > page_size / sizeof(std::uint32_t)) {
      return ctrl_status::invalid_parameter;
    }
    if (len == 0) {
      return ctrl_status::success;
    }
    std::array<std::uint32_t, max_hash_mapping_size> staged{};
    if (!read(ref, std::as_writable_bytes(std::span(staged).first(len)))) {
      return ctrl_status::invalid_parameter;
    }
    for (std::uint32_t i = 0; i < len; ++i) {
      if (staged[i] >= num_queues_) {
        return ctrl_status::invalid_parameter;
      }
    }
    std::copy_n(staged.begin(), len, cfg_.mapping.begin() + off);
    ++generation_;
    return ctrl_status::success;
  }

  std::uint32_t num_queues_;
  hash_config cfg_;
  std::uint64_t generation_ = 0;
};

}  // namespace unetback::rings
