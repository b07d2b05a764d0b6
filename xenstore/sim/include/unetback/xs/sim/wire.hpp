#pragma once
// The xenstored wire protocol (xen/io/xs_wire.h, docs/misc/xenstore.txt) as a
// pure unit: framing and argument splitting from bytes to a parsed request or
// an error, and the encoders for replies and watch events. No I/O, so a
// libFuzzer harness can drive it directly.

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace unetback::xs::sim {

/// XENSTORE_PAYLOAD_MAX: a longer payload is a protocol violation and the
/// client is disconnected (xenstored does the same).
inline constexpr std::size_t payload_max = 4096;
/// sizeof(struct xsd_sockmsg).
inline constexpr std::size_t header_size = 16;

/// struct xsd_sockmsg, host byte order.
struct msg_header {
  std::uint32_t type = 0;    ///< enum xsd_sockmsg_type
  std::uint32_t req_id = 0;  ///< echoed in the reply
  std::uint32_t tx_id = 0;   ///< transaction id, 0 if none
  std::uint32_t len = 0;     ///< payload bytes that follow
};

/// A request split into its NUL-terminated string arguments. For WRITE the
/// value (everything after the path's NUL, may contain any byte) is in `data`.
struct request {
  msg_header hdr;
  std::vector<std::string> args;
  std::string data;
};

/// Outcome of parse_message().
enum class parse_status {
  incomplete,   ///< need more bytes; nothing consumed
  ok,           ///< `req` holds the request; drop `consumed` bytes
  error_reply,  ///< well-framed but invalid: reply ERROR `error` and go on
  fatal,        ///< framing violated (payload too long): drop the connection
};

/// What parse_message() found at the start of a byte stream.
struct parse_result {
  parse_status status = parse_status::incomplete;
  std::size_t consumed = 0;  ///< bytes to drop (header + payload) for ok/error_reply
  request req;               ///< valid for ok; req.hdr also valid for error_reply
  int error = 0;             ///< errno to report for error_reply (EINVAL...)
  std::string reason;        ///< human-readable cause for error_reply / fatal
};

/// Parses the first message of `bytes`. Rules: len > payload_max is fatal;
/// unknown or server-only types (WATCH_EVENT, ERROR, removed 20, >=
/// XS_TYPE_COUNT) and malformed argument lists (missing NUL terminator,
/// too few strings) are error_reply EINVAL.
[[nodiscard]] parse_result parse_message(std::span<const std::byte> bytes);

/// Encodes a reply (or any message) with the given header fields.
[[nodiscard]] std::string encode_message(std::uint32_t type, std::uint32_t req_id,
                                         std::uint32_t tx_id, std::string_view payload);
/// An ERROR reply to `req`: payload is the errno name ("ENOENT") plus NUL.
[[nodiscard]] std::string encode_error(const msg_header& req, int errnum);
/// A WATCH_EVENT: "path\0token\0", req_id = tx_id = 0.
[[nodiscard]] std::string encode_watch_event(std::string_view path, std::string_view token);
/// The errno name xenstored uses on the wire ("EIO" for unknown values).
[[nodiscard]] std::string_view errno_name(int errnum);
/// The name of a message type, for logs ("READ", "INVALID(99)"...).
[[nodiscard]] std::string type_name(std::uint32_t type);

}  // namespace unetback::xs::sim
