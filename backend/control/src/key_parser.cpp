#include "key_parser.hpp"

#include "unetback/xs/permission.hpp"

namespace unetback::control::detail {

void key_parser::fail(key_error::kind what, const std::string& key, std::string detail) {
  if (!error_) {
    error_ = key_error{what, full(key), std::move(detail)};
  }
}

std::optional<std::string> key_parser::raw(const std::string& key) {
  if (error_) {
    return std::nullopt;
  }
  return read_(full(key));
}

bool key_parser::present(const std::string& key) {
  return raw(key).has_value();
}

std::uint64_t key_parser::parse(const std::string& key, const std::string& value, std::uint64_t lo,
                                std::uint64_t hi) {
  const auto n = xs::parse_decimal(value, UINT64_MAX);
  if (!n) {
    fail(key_error::kind::malformed, key, "not a plain decimal number");
    return 0;
  }
  if (*n < lo || *n > hi) {
    fail(key_error::kind::out_of_range, key,
         "must be " + std::to_string(lo) + ".." + std::to_string(hi));
    return 0;
  }
  return *n;
}

std::uint64_t key_parser::number(const std::string& key, std::uint64_t lo, std::uint64_t hi) {
  const auto value = raw(key);
  if (!value) {
    fail(key_error::kind::missing, key, {});
    return 0;
  }
  return parse(key, *value, lo, hi);
}

std::uint64_t key_parser::number_or(const std::string& key, std::uint64_t lo, std::uint64_t hi,
                                    std::uint64_t fallback) {
  const auto value = raw(key);
  return value ? parse(key, *value, lo, hi) : fallback;
}

bool key_parser::flag(const std::string& key) {
  return number_or(key, 0, UINT32_MAX, 0) != 0;
}

}  // namespace unetback::control::detail
