#pragma once
// The vif `rate=` setting as xl takes it ("10Mb/s", "1MB/s@20ms": a rate with
// an optional replenish interval, default 50 ms) turned into the backend key
// libxl writes: "<bytes per interval>,<interval in microseconds>".

#include <string>
#include <string_view>

namespace unetback::toolstack {

/// The backend `rate` value for xl's `rate=` text. Throws
/// std::invalid_argument naming the text when it is not RATE[@INTERVAL] with
/// RATE = N[K|M|G](B|b)/s and INTERVAL = N(s|ms|us), 1 us..1 s.
[[nodiscard]] std::string backend_rate(std::string_view xl_rate);

}  // namespace unetback::toolstack
