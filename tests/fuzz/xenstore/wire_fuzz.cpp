// Feeds arbitrary bytes to sim-xenstored as a client stream: parse_message()
// frames it; requests run through the engine. The low bit of each request's
// req_id picks the connection (dom0, or guest domain 3, introduced first), so
// permission checks, watches and transactions of both identities get
// exercised. Every message the engine emits must be well formed.

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <span>
#include <string>

#include "unetback/xs/sim/engine.hpp"
#include "unetback/xs/sim/wire.hpp"

namespace {

using namespace unetback::xs::sim;

class checking_sink : public engine_sink {
 public:
  void send(conn_id, std::string bytes) override {
    std::uint32_t len = 0;
    if (bytes.size() < header_size) {
      std::abort();
    }
    std::memcpy(&len, bytes.data() + 12, sizeof(len));
    if (len > payload_max || bytes.size() != header_size + len) {
      std::abort();
    }
  }
  void domain_introduced(unetback::domid) override {}
  void domain_released(unetback::domid) override {}
  void log(std::string_view) override {}
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  checking_sink sink;
  engine_limits limits;
  limits.max_nodes = 2000;  // keep snapshots cheap
  engine core(sink, limits);
  const conn_id dom0 = core.connect(unetback::domid{0}, true);
  request intro;
  intro.hdr.type = 8;  // XS_INTRODUCE
  intro.args = {"3", "1", "1"};
  core.handle(dom0, intro);
  const conn_id guest = core.connect(unetback::domid{3}, false);

  std::span<const std::byte> rest(reinterpret_cast<const std::byte*>(data), size);
  for (int n = 0; n < 512 && !rest.empty(); ++n) {
    const parse_result r = parse_message(rest);
    if (r.status == parse_status::incomplete || r.status == parse_status::fatal) {
      break;
    }
    const conn_id who = (r.req.hdr.req_id & 1U) != 0 ? guest : dom0;
    if (r.status == parse_status::error_reply) {
      core.reject(who, r.req.hdr, r.error);
    } else {
      core.handle(who, r.req);
    }
    rest = rest.subspan(r.consumed);
  }
  return 0;
}
