#include "toolstack.hpp"

#include <array>

namespace unetback::control::testing {

std::string vif_spec::backend_path() const {
  return "/local/domain/" + std::to_string(backend.value()) + "/backend/vif/" +
         std::to_string(guest.value()) + "/" + std::to_string(devid);
}

std::string vif_spec::frontend_path() const {
  return "/local/domain/" + std::to_string(guest.value()) + "/device/vif/" + std::to_string(devid);
}

void libxl_add(xs::client& tool, const vif_spec& v) {
  const std::string be = v.backend_path();
  const std::string fe = v.frontend_path();
  const std::string dev = std::to_string(v.devid);
  tool.transact([&](xs::transaction& tx) {
    // Backend: owned by the backend domain, readable by the guest.
    tx.mkdir(be);
    const std::array<xs::permission, 2> be_perms{xs::permission{v.backend, xs::access::none},
                                                 xs::permission{v.guest, xs::access::read}};
    tx.set_permissions(be, be_perms);
    tx.write(be + "/frontend", fe);
    tx.write(be + "/frontend-id", std::to_string(v.guest.value()));
    tx.write(be + "/online", "1");
    tx.write(be + "/state", "1");
    tx.write(be + "/script", "/etc/xen/scripts/vif-bridge");
    tx.write(be + "/mac", "00:16:3e:00:00:02");
    tx.write(be + "/bridge", v.bridge);
    tx.write(be + "/handle", dev);
    tx.write(be + "/type", "vif");
    tx.write(be + "/hotplug-status", "");
    if (v.mtu) {
      tx.write(be + "/mtu", std::to_string(*v.mtu));
    }
    if (v.vifname) {
      tx.write(be + "/vifname", *v.vifname);
    }
    // Frontend: owned by the guest, readable by the backend domain.
    tx.mkdir(fe);
    const std::array<xs::permission, 2> fe_perms{xs::permission{v.guest, xs::access::none},
                                                 xs::permission{v.backend, xs::access::read}};
    tx.set_permissions(fe, fe_perms);
    tx.write(fe + "/backend", be);
    tx.write(fe + "/backend-id", std::to_string(v.backend.value()));
    tx.write(fe + "/state", "1");
    tx.write(fe + "/handle", dev);
    tx.write(fe + "/mac", "00:16:3e:00:00:02");
    tx.write(fe + "/trusted", "1");
    tx.write(fe + "/mtu", std::to_string(v.mtu.value_or(1500)));
  });
}

void libxl_remove(xs::client& tool, const vif_spec& v, removal how) {
  tool.transact([&](xs::transaction& tx) {
    tx.write(v.backend_path() + "/online", "0");
    if (tx.read(v.backend_path() + "/state") != "6") {
      tx.write(v.backend_path() + "/state", "5");
    }
    if (how == removal::destroy) {
      tx.rm(v.frontend_path());
    }
  });
}

void libxl_delete(xs::client& tool, const vif_spec& v) {
  tool.transact([&](xs::transaction& tx) {
    tx.rm(v.backend_path());
    tx.rm(v.frontend_path());
  });
}

void hotplug_connected(xs::client& tool, const vif_spec& v) {
  tool.write(v.backend_path() + "/hotplug-status", "connected");
}

void netfront_connect(xs::client& guest, const vif_spec& v, unsigned queues,
                      const std::optional<std::string>& num_queues_value, frontend_sg sg) {
  const std::string fe = v.frontend_path();
  guest.transact([&](xs::transaction& tx) {
    tx.write(fe + "/multi-queue-num-queues", num_queues_value.value_or(std::to_string(queues)));
    for (unsigned q = 0; q < queues; ++q) {
      const std::string dir = queues == 1 ? fe : fe + "/queue-" + std::to_string(q);
      tx.write(dir + "/tx-ring-ref", std::to_string(1032 + 2 * q));
      tx.write(dir + "/rx-ring-ref", std::to_string(1033 + 2 * q));
      tx.write(dir + "/event-channel-tx", std::to_string(15 + 2 * q));
      tx.write(dir + "/event-channel-rx", std::to_string(16 + 2 * q));
    }
    for (const char* key : {"request-rx-copy", "feature-rx-notify", "feature-gso-tcpv4",
                            "feature-gso-tcpv6", "feature-ipv6-csum-offload"}) {
      tx.write(fe + "/" + key, "1");
    }
    if (sg == frontend_sg::on) {
      tx.write(fe + "/feature-sg", "1");
    }
    tx.write(fe + "/state", "4");
  });
}

void netfront_state(xs::client& guest, const vif_spec& v, int state) {
  guest.write(v.frontend_path() + "/state", std::to_string(state));
}

}  // namespace unetback::control::testing
