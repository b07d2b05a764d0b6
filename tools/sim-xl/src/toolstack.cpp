#include "toolstack.hpp"

#include <fmt/format.h>

#include <stdexcept>
#include <thread>

#include "hotplug.hpp"
#include "unetback/xs/xenstore_c.hpp"

namespace unetback::toolstack {

namespace {

using xs::access;
using xs::permission;
using namespace std::chrono_literals;

std::string domain_path(domid d) {
  return fmt::format("/local/domain/{}", d.value());
}

std::vector<unsigned> vif_devids(xs::client& client, domid guest) {
  std::vector<unsigned> ids;
  for (const auto& name : client.directory(domain_path(guest) + "/device/vif")) {
    ids.push_back(static_cast<unsigned>(std::stoul(name)));
  }
  return ids;
}

}  // namespace

void toolstack::domain_create(domid d) {
  // libxl__domain_make: the domain dir is dom0's, readable by the guest; the
  // guest writes its own device/ entries under dirs the toolstack creates.
  const std::vector<permission> ro{{domid{0}, access::none}, {d, access::read}};
  const std::vector<permission> rw{{d, access::none}};
  client_.transact([&](xs::transaction& t) {
    const auto dom = domain_path(d);
    t.rm(dom);
    t.mkdir(dom);
    t.set_permissions(dom, ro);
    t.write(dom + "/domid", std::to_string(d.value()));
    t.set_permissions(dom + "/domid", ro);
    t.write(dom + "/name", fmt::format("guest{}", d.value()));
    t.set_permissions(dom + "/name", ro);
    for (const char* sub : {"/device", "/control"}) {
      t.mkdir(dom + sub);
      t.set_permissions(dom + sub, ro);
    }
    for (const char* sub : {"/data", "/drivers", "/feature", "/attr", "/error"}) {
      t.mkdir(dom + sub);
      t.set_permissions(dom + sub, rw);
    }
  });
  // The ring mfn and port are meaningless in the simulation; sim-xenstored
  // opens the guest's socket.
  if (!xs_introduce_domain(client_.native_handle(), d.value(), 0, 0)) {
    xs::throw_errno("introduce", domain_path(d));
  }
}

void toolstack::domain_destroy(domid d) {
  for (unsigned devid : vif_devids(client_, d)) {
    auto spec = read_vif_spec(client_, d, devid, domid{0});
    network_detach(spec, detach::force);
  }
  client_.rm(domain_path(d));
  client_.rm(fmt::format("/libxl/{}", d.value()));
  xs_release_domain(client_.native_handle(), d.value());
}

void toolstack::network_attach(const vif_spec& spec) {
  const auto nodes = vif_nodes(spec);
  client_.transact([&](xs::transaction& t) {
    if (t.read(backend_path(spec))) {
      throw std::runtime_error(fmt::format("device already exists at {}", backend_path(spec)));
    }
    for (const auto& n : nodes) {
      t.write(n.path, n.value);
      t.set_permissions(n.path, n.perms);
    }
  });
  const auto state = backend_path(spec) + "/state";
  if (!wait_value(state, "2", init_timeout)) {
    throw std::runtime_error(fmt::format(
        "device_backend_callback: unable to add device with path {}", backend_path(spec)));
  }
  const int rc = run_hotplug_script(spec, "online");
  if (rc != 0) {
    const auto why = client_.read(backend_path(spec) + "/hotplug-error");
    throw std::runtime_error(fmt::format("hotplug script {} failed (rc {}): {}", spec.script, rc,
                                         why.value_or("no hotplug-error")));
  }
}

bool toolstack::network_detach(const vif_spec& spec, detach how) {
  const auto be = backend_path(spec);
  client_.transact([&](xs::transaction& t) {
    if (!t.read(be + "/state")) {
      return;
    }
    t.write(be + "/online", "0");
    if (t.read(be + "/state") != "6") {
      t.write(be + "/state", "5");
    }
    if (how == detach::force) {
      t.rm(frontend_path(spec));
    }
  });
  const bool closed = wait_value(be + "/state", "6", destroy_timeout);
  run_hotplug_script(spec, "offline");  // libxl ignores offline failures
  client_.transact([&](xs::transaction& t) {
    t.rm(be);
    t.rm(frontend_path(spec));
    t.rm(libxl_path(spec));
  });
  return closed;
}

std::vector<std::string> toolstack::network_list(domid d) {
  std::vector<std::string> lines{
      "Idx BE Mac Addr.         handle state evt-ch   tx-/rx-ring-ref BE-path"};
  for (unsigned devid : vif_devids(client_, d)) {
    const auto fe = fmt::format("{}/device/vif/{}", domain_path(d), devid);
    auto key = [&](const std::string& k) { return client_.read(fe + "/" + k).value_or("-1"); };
    const auto evtchn = client_.read(fe + "/event-channel").value_or(key("event-channel-tx"));
    lines.push_back(fmt::format("{:<3} {:<2} {:<17} {:<6} {:<5} {:<8} {:>7}/{:<7} {}", devid,
                                key("backend-id"), key("mac"), key("handle"), key("state"), evtchn,
                                key("tx-ring-ref"), key("rx-ring-ref"), key("backend")));
  }
  return lines;
}

bool toolstack::wait_value(const std::string& path, const std::string& value,
                           std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    if (client_.read(path) == value) {
      return true;
    }
    std::this_thread::sleep_for(20ms);
  }
  return false;
}

vif_spec read_vif_spec(xs::client& client, domid guest, unsigned devid, domid backend) {
  vif_spec spec;
  spec.guest = guest;
  spec.devid = devid;
  spec.backend = backend;
  const auto be = backend_path(spec);
  spec.script = client.read(be + "/script").value_or("");
  spec.bridge = client.read(be + "/bridge").value_or("");
  spec.mac = client.read(be + "/mac").value_or("");
  return spec;
}

}  // namespace unetback::toolstack
