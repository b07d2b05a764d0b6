#pragma once
// sim_grant_table: the platform::grant_table of the simulated hypervisor.

#include <cstddef>
#include <filesystem>
#include <memory>

#include "domain_cache.hpp"
#include "grant_ops.hpp"
#include "unetback/platform/grant_table.hpp"
#include "unetback/sim/endpoint.hpp"

namespace unetback::sim {

class sim_grant_table final : public platform::grant_table {
 public:
  /// Most pages one map() call accepts.
  static constexpr std::size_t max_map_pages = 1024;

  sim_grant_table(std::filesystem::path sim_dir, domid self);

  std::unique_ptr<platform::grant_mapping> map(domid granter, std::span<const grant_ref> refs,
                                               bool writable, std::error_code& ec) override;
  bool copy(std::span<platform::grant_copy_segment> batch) override;

 private:
  struct resolved {
    std::int16_t status;
    std::byte* ptr;
    std::shared_ptr<guest_memory> keep;  // keeps ptr mapped for this segment
  };
  resolved resolve(std::uint32_t ref, std::uint16_t offset, std::uint16_t domid_value,
                   std::uint16_t len, detail::access_mode mode);
  std::int16_t copy_one(platform::grant_copy_segment& seg);

  domain_cache cache_;
  domid self_;
  std::shared_ptr<endpoint> holder_;  // liveness token recorded with our mappings
};

}  // namespace unetback::sim
