#pragma once
// An errno value as the std::error_code the platform interfaces return.

#include <system_error>

namespace unetback::sim {

[[nodiscard]] inline std::error_code errc(int e) {
  return {e, std::generic_category()};
}

}  // namespace unetback::sim
