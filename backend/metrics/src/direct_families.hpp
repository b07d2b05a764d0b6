#pragma once
// The direct path's metric families (docs/direct-path.md): per queue of each
// vif that offers it, the frames it moved past the TAP (the TAP's statistics
// cannot count them), its drops, and why the other frames went to the host.
// Vifs without the direct path have no samples.

#include <vector>

#include "unetback/control/vif_status.hpp"
#include "unetback/metrics/exposition.hpp"

namespace unetback::metrics {

void direct_families(exposition& out, const std::vector<control::vif_status>& vifs);

}  // namespace unetback::metrics
