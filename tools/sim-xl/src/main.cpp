// sim-xl: the toolstack commands the simulation needs, doing in XenStore what
// libxl 4.17 does (see toolstack.hpp). Usage: sim-xl --help.
#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>
#include <vector>

#include "toolstack.hpp"
#include "unetback/util/guarded_main.hpp"

namespace {

using unetback::domid;
using namespace unetback::toolstack;

domid to_domid(unsigned v) {
  if (v == 0 || v > 32752) {  // DOMID_FIRST_RESERVED
    throw CLI::ValidationError("domid", fmt::format("{} is not a guest domid (1..32752)", v));
  }
  return domid{static_cast<std::uint16_t>(v)};
}

}  // namespace

namespace {

int run_program(int argc, char** argv) {
  CLI::App app{"sim-xl: libxl's part of a vif's life, for the simulated platform"};
  std::string xenstore;
  app.add_option("--xenstore", xenstore, "xenstored socket (default: $XENSTORED_PATH)");
  app.require_subcommand(1);

  unsigned dom = 0;
  unsigned devid = 0;
  std::vector<std::string> spec_items;
  double timeout_s = 10;
  std::string state;
  auto* create = app.add_subcommand("domain-create", "introduce a guest domain");
  create->add_option("domid", dom)->required();
  auto* destroy = app.add_subcommand("domain-destroy", "destroy a guest's devices and nodes");
  destroy->add_option("domid", dom)->required();
  auto* attach = app.add_subcommand("network-attach", "xl network-attach DOMID [vifspec]");
  attach->add_option("domid", dom)->required();
  attach->add_option("vifspec", spec_items,
                     "key=value[,key=value]: mac bridge script ip rate "
                     "vifname mtu devid backend");
  auto* detach = app.add_subcommand("network-detach", "xl network-detach DOMID DEVID");
  detach->add_option("domid", dom)->required();
  detach->add_option("devid", devid)->required();
  auto* list = app.add_subcommand("network-list", "xl network-list DOMID");
  list->add_option("domid", dom)->required();
  auto* wait = app.add_subcommand("wait-state", "wait until a vif's backend state is STATE");
  wait->add_option("domid", dom)->required();
  wait->add_option("devid", devid)->required();
  wait->add_option("state", state)->required();
  wait->add_option("--timeout", timeout_s, "seconds");
  CLI11_PARSE(app, argc, argv);

  try {
    if (!xenstore.empty()) {
      ::setenv("XENSTORED_PATH", xenstore.c_str(), 1);  // the hotplug scripts' xenstore-* tools
    }
    auto client = xenstore.empty() ? unetback::xs::client() : unetback::xs::client::open(xenstore);
    toolstack ts(client);
    const domid guest = to_domid(dom);
    if (*create) {
      ts.domain_create(guest);
    } else if (*destroy) {
      ts.domain_destroy(guest);
    } else if (*attach) {
      vif_spec spec;
      spec.guest = guest;
      spec.script = UNETBACK_DEFAULT_HOTPLUG;
      spec.mac = fmt::format("00:16:3e:00:{:02x}:{:02x}", (dom >> 8) & 0xff, dom & 0xff);
      for (const auto& item : spec_items) {
        apply_vifspec(spec, item);
      }
      ts.network_attach(spec);
    } else if (*detach) {
      const auto spec = read_vif_spec(client, guest, devid, domid{0});
      if (!ts.network_detach(spec, detach::graceful)) {
        std::fprintf(stderr, "sim-xl: backend did not reach Closed within 10 s\n");
        return 1;
      }
    } else if (*list) {
      for (const auto& line : ts.network_list(guest)) {
        std::puts(line.c_str());
      }
    } else if (*wait) {
      vif_spec spec;
      spec.guest = guest;
      spec.devid = devid;
      const auto ms = std::chrono::milliseconds(static_cast<long>(timeout_s * 1000));
      if (!ts.wait_value(backend_path(spec) + "/state", state, ms)) {
        std::fprintf(stderr, "sim-xl: state did not reach %s\n", state.c_str());
        return 1;
      }
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "sim-xl: %s\n", e.what());
    return 1;
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  return unetback::util::guarded_main("sim-xl", [&] { return run_program(argc, argv); });
}
