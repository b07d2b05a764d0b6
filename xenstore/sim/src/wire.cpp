#include "unetback/xs/sim/wire.hpp"

// NOLINTNEXTLINE(modernize-deprecated-headers): before xs_wire.h, whose xsd_errors need EINVAL
#include <errno.h>
#include <stdint.h>  // NOLINT(modernize-deprecated-headers): global uint32_t for xs_wire.h
#include <xen/io/xs_wire.h>

#include <array>
#include <cstring>
#include <optional>

namespace unetback::xs::sim {

namespace {

// How a message type's payload is split (docs/misc/xenstore.txt).
enum class arg_shape {
  invalid,        // not a request a client may send
  one_string,     // exactly "<arg>\0" (xenstored onearg())
  strings,        // at least `min_args` NUL-terminated strings
  head_and_data,  // "<arg>\0" then raw bytes (WRITE value, CONTROL data)
  ignored,        // payload unused (TRANSACTION_START, RESET_WATCHES)
};

struct shape_rule {
  arg_shape shape;
  std::size_t min_args;
};

shape_rule shape_of(std::uint32_t type) {
  switch (type) {
    case XS_DIRECTORY:
    case XS_READ:
    case XS_GET_PERMS:
    case XS_MKDIR:
    case XS_RM:
    case XS_GET_DOMAIN_PATH:
    case XS_IS_DOMAIN_INTRODUCED:
    case XS_RELEASE:
    case XS_RESUME:
    case XS_TRANSACTION_END:
      return {arg_shape::one_string, 1};
    case XS_WATCH:
    case XS_UNWATCH:
    case XS_DIRECTORY_PART:
    case XS_SET_TARGET:
    case XS_SET_PERMS:
      return {arg_shape::strings, 2};
    case XS_INTRODUCE:
      return {arg_shape::strings, 3};
    case XS_WRITE:
    case XS_CONTROL:
      return {arg_shape::head_and_data, 1};
    case XS_TRANSACTION_START:
    case XS_RESET_WATCHES:
      return {arg_shape::ignored, 0};
    default:
      return {arg_shape::invalid, 0};
  }
}

// Splits "a\0b\0" into {"a","b"}; nullopt if the last string lacks its NUL.
std::optional<std::vector<std::string>> split_strings(std::string_view payload) {
  std::vector<std::string> out;
  if (payload.empty()) {
    return out;
  }
  if (payload.back() != '\0') {
    return std::nullopt;
  }
  std::size_t start = 0;
  while (start < payload.size()) {
    const std::size_t nul = payload.find('\0', start);
    out.emplace_back(payload.substr(start, nul - start));
    start = nul + 1;
  }
  return out;
}

// Fills `res` for one payload according to its shape; false if malformed.
bool split_args(const shape_rule& rule, std::string_view payload, request& req) {
  switch (rule.shape) {
    case arg_shape::ignored:
      return true;
    case arg_shape::head_and_data: {
      const std::size_t nul = payload.find('\0');
      if (nul == std::string_view::npos) {
        return false;
      }
      req.args.emplace_back(payload.substr(0, nul));
      req.data.assign(payload.substr(nul + 1));
      return true;
    }
    case arg_shape::one_string:
    case arg_shape::strings: {
      auto args = split_strings(payload);
      if (!args || args->size() < rule.min_args) {
        return false;
      }
      if (rule.shape == arg_shape::one_string && args->size() != 1) {
        return false;
      }
      req.args = std::move(*args);
      return true;
    }
    case arg_shape::invalid:
      return false;
  }
  return false;
}

msg_header decode_header(std::span<const std::byte> bytes) {
  std::array<std::uint32_t, 4> words{};
  std::memcpy(words.data(), bytes.data(), header_size);
  return msg_header{words[0], words[1], words[2], words[3]};
}

}  // namespace

parse_result parse_message(std::span<const std::byte> bytes) {
  parse_result res;
  if (bytes.size() < header_size) {
    return res;
  }
  res.req.hdr = decode_header(bytes);
  if (res.req.hdr.len > payload_max) {
    res.status = parse_status::fatal;
    res.reason = "payload length " + std::to_string(res.req.hdr.len) + " exceeds 4096";
    return res;
  }
  if (bytes.size() - header_size < res.req.hdr.len) {
    return res;  // incomplete
  }
  res.consumed = header_size + res.req.hdr.len;
  const std::string_view payload(reinterpret_cast<const char*>(bytes.data()) + header_size,
                                 res.req.hdr.len);
  const shape_rule rule = shape_of(res.req.hdr.type);
  if (rule.shape == arg_shape::invalid || !split_args(rule, payload, res.req)) {
    res.status = parse_status::error_reply;
    res.error = EINVAL;
    res.reason = rule.shape == arg_shape::invalid
                     ? "invalid message type " + type_name(res.req.hdr.type)
                     : "malformed arguments for " + type_name(res.req.hdr.type);
    res.req.args.clear();
    res.req.data.clear();
    return res;
  }
  res.status = parse_status::ok;
  return res;
}

std::string encode_message(std::uint32_t type, std::uint32_t req_id, std::uint32_t tx_id,
                           std::string_view payload) {
  const std::array<std::uint32_t, 4> words{type, req_id, tx_id,
                                           static_cast<std::uint32_t>(payload.size())};
  std::string out(header_size + payload.size(), '\0');
  std::memcpy(out.data(), words.data(), header_size);
  std::memcpy(out.data() + header_size, payload.data(), payload.size());
  return out;
}

std::string encode_error(const msg_header& req, int errnum) {
  std::string payload(errno_name(errnum));
  payload.push_back('\0');
  return encode_message(XS_ERROR, req.req_id, req.tx_id, payload);
}

std::string encode_watch_event(std::string_view path, std::string_view token) {
  std::string payload(path);
  payload.push_back('\0');
  payload.append(token);
  payload.push_back('\0');
  return encode_message(XS_WATCH_EVENT, 0, 0, payload);
}

std::string_view errno_name(int errnum) {
  for (const auto& entry : xsd_errors) {
    if (entry.errnum == errnum) {
      return entry.errstring;
    }
  }
  return "EIO";
}

std::string type_name(std::uint32_t type) {
  static constexpr std::array<const char*, XS_TYPE_COUNT> names = {"CONTROL",
                                                                   "DIRECTORY",
                                                                   "READ",
                                                                   "GET_PERMS",
                                                                   "WATCH",
                                                                   "UNWATCH",
                                                                   "TRANSACTION_START",
                                                                   "TRANSACTION_END",
                                                                   "INTRODUCE",
                                                                   "RELEASE",
                                                                   "GET_DOMAIN_PATH",
                                                                   "WRITE",
                                                                   "MKDIR",
                                                                   "RM",
                                                                   "SET_PERMS",
                                                                   "WATCH_EVENT",
                                                                   "ERROR",
                                                                   "IS_DOMAIN_INTRODUCED",
                                                                   "RESUME",
                                                                   "SET_TARGET",
                                                                   "RESTRICT(removed)",
                                                                   "RESET_WATCHES",
                                                                   "DIRECTORY_PART"};
  if (type < names.size()) {
    return names[type];
  }
  return "INVALID(" + std::to_string(type) + ")";
}

}  // namespace unetback::xs::sim
