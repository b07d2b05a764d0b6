#pragma once
// Reads keys through a key_reader and remembers the first error, so parsers
// read as a list of keys instead of a ladder of checks.

#include <cstdint>
#include <optional>
#include <string>

#include "unetback/control/frontend_keys.hpp"
#include "unetback/control/key_error.hpp"

namespace unetback::control::detail {

class key_parser {
 public:
  explicit key_parser(const key_reader& read, std::string prefix = {})
      : read_(read), prefix_(std::move(prefix)) {}

  /// A required decimal in [lo, hi]; 0 after an error.
  std::uint64_t number(const std::string& key, std::uint64_t lo, std::uint64_t hi);
  /// An optional decimal in [lo, hi]; `fallback` when absent.
  std::uint64_t number_or(const std::string& key, std::uint64_t lo, std::uint64_t hi,
                          std::uint64_t fallback);
  /// A decimal flag, on when non-zero (xenbus_read_unsigned() as Linux's
  /// netback reads them: netfronts write "1", but any non-zero means on);
  /// false when absent.
  bool flag(const std::string& key);
  /// True if the key exists (any value).
  bool present(const std::string& key);
  /// The raw value, if any.
  std::optional<std::string> raw(const std::string& key);
  /// Records an error unless one is already recorded.
  void fail(key_error::kind what, const std::string& key, std::string detail);

  [[nodiscard]] bool ok() const { return !error_; }
  [[nodiscard]] const key_error& error() const { return *error_; }
  [[nodiscard]] std::string full(const std::string& key) const { return prefix_ + key; }

 private:
  std::uint64_t parse(const std::string& key, const std::string& value, std::uint64_t lo,
                      std::uint64_t hi);

  const key_reader& read_;
  std::string prefix_;
  std::optional<key_error> error_;
};

}  // namespace unetback::control::detail
