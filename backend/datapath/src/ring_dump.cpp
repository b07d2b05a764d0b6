#include "ring_dump.hpp"

#include <fmt/format.h>

namespace unetback::datapath {
namespace {

std::int32_t rel(std::uint32_t idx, std::uint32_t base) {
  return static_cast<std::int32_t>(idx - base);  // u32 wrap, shown signed
}

}  // namespace

std::string format_ring(std::string_view title, std::uint32_t nr_ents, const rings::sring_header& s,
                        std::uint32_t req_cons, std::uint32_t rsp_prod_pvt) {
  return fmt::format(
      "{}: nr_ents {}\n"
      "req prod {} ({}) cons {} ({}) event {} ({})\n"
      "rsp prod {} (base) pvt {} ({}) event {} ({})\n",
      title, nr_ents, s.req_prod, rel(s.req_prod, s.rsp_prod), req_cons, rel(req_cons, s.rsp_prod),
      s.req_event, rel(s.req_event, s.rsp_prod), s.rsp_prod, rsp_prod_pvt,
      rel(rsp_prod_pvt, s.rsp_prod), s.rsp_event, rel(s.rsp_event, s.rsp_prod));
}

}  // namespace unetback::datapath
