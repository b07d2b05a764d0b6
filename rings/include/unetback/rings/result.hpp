#pragma once
// A minimal value-or-error type for the protocol core (C++20 has no
// std::expected). Errors are small enums; nothing here allocates or throws.

#include <utility>
#include <variant>

namespace unetback::rings {

/// Holds either a value of type T or an error of type E (an enum).
template <class T, class E>
class result {
 public:
  // Implicit, as std::expected's: `return value;` and `return error;` both work.
  /// A successful result.
  // NOLINTNEXTLINE(google-explicit-constructor)
  constexpr result(T value) : v_(std::in_place_index<0>, std::move(value)) {}
  /// A failed result.
  // NOLINTNEXTLINE(google-explicit-constructor)
  constexpr result(E error) : v_(std::in_place_index<1>, error) {}

  /// True when a value is held.
  [[nodiscard]] constexpr bool has_value() const { return v_.index() == 0; }
  /// Same as has_value().
  constexpr explicit operator bool() const { return has_value(); }
  /// The value; precondition: has_value().
  [[nodiscard]] constexpr const T& value() const { return std::get<0>(v_); }
  /// The value; precondition: has_value().
  [[nodiscard]] constexpr T& value() { return std::get<0>(v_); }
  /// The error; precondition: !has_value().
  [[nodiscard]] constexpr E error() const { return std::get<1>(v_); }
  /// The value, or `fallback` when an error is held.
  [[nodiscard]] constexpr T value_or(T fallback) const {
    return has_value() ? std::get<0>(v_) : fallback;
  }

 private:
  std::variant<T, E> v_;
};

}  // namespace unetback::rings
