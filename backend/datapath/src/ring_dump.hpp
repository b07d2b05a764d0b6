#pragma once
// Ring index dumps in the format of Linux netback's debugfs io_ring_qN.

#include <cstdint>
#include <string>
#include <string_view>

#include "unetback/rings/shared_ring.hpp"

namespace unetback::datapath {

/// One ring: shared indices, and the private consumer/producer indices, each
/// also shown relative to rsp_prod as netback does.
[[nodiscard]] std::string format_ring(std::string_view title, std::uint32_t nr_ents,
                                      const rings::sring_header& shared, std::uint32_t req_cons,
                                      std::uint32_t rsp_prod_pvt);

}  // namespace unetback::datapath
