// Engine core: connections and request dispatch.

#include "unetback/xs/sim/engine.hpp"

#include <stdint.h>  // NOLINT(modernize-deprecated-headers): global uint32_t for xs_wire.h
#include <xen/io/xs_wire.h>
#include <cerrno>

#include "unetback/rings/ids.hpp"
#include "unetback/xs/sim/path.hpp"

namespace unetback::xs::sim {

namespace {

std::string with_nul(std::string_view s) {
  std::string out(s);
  out.push_back('\0');
  return out;
}

}  // namespace

engine::engine(engine_sink& sink, engine_limits limits) : sink_(sink), limits_(limits) {
  const std::vector<permission> dom0_only{permission{domid{0}, access::none}};
  special_perms_.emplace("@introduceDomain", dom0_only);
  special_perms_.emplace("@releaseDomain", dom0_only);
  // The tree a freshly booted dom0 has: its home and its domid key
  // (xen-init-dom0 writes /local/domain/0/domid).
  const auto dom0 = connect(domid{0}, true);
  request req;
  req.hdr.type = XS_WRITE;
  req.args = {"/local/domain/0/domid"};
  req.data = "0";
  connection& conn = conns_.at(dom0);
  node_request(conn, req);
  disconnect(dom0);
}

conn_id engine::connect(domid d, bool privileged, std::int32_t peer_pid) {
  const conn_id id = next_conn_++;
  conns_.emplace(id, connection{d, privileged, peer_pid, {}, {}});
  return id;
}

void engine::disconnect(conn_id c) {
  conns_.erase(c);
}

bool engine::is_introduced(domid d) const {
  return d == domid{0} || domains_.contains(d);
}

void engine::reply(conn_id c, const msg_header& hdr, std::string_view payload) {
  sink_.send(c, encode_message(hdr.type, hdr.req_id, hdr.tx_id, payload));
}

void engine::reject(conn_id c, const msg_header& hdr, int errnum) {
  sink_.send(c, encode_error(hdr, errnum));
}

void engine::handle(conn_id c, const request& req) {
  const auto it = conns_.find(c);
  if (it == conns_.end()) {
    return;
  }
  const op_result res = dispatch(c, it->second, req);
  if (res.replied) {
    return;
  }
  if (res.err != 0) {
    reject(c, req.hdr, res.err);
  } else {
    reply(c, req.hdr, res.payload);
  }
}

engine::op_result engine::dispatch(conn_id c, connection& conn, const request& req) {
  switch (req.hdr.type) {
    case XS_READ:
    case XS_WRITE:
    case XS_MKDIR:
    case XS_RM:
    case XS_DIRECTORY:
    case XS_DIRECTORY_PART:
    case XS_GET_PERMS:
    case XS_SET_PERMS:
      return node_request(conn, req);
    case XS_WATCH:
      return do_watch(c, conn, req);
    case XS_UNWATCH:
      return do_unwatch(conn, req);
    case XS_RESET_WATCHES:
      conn.watches.clear();
      conn.txs.clear();
      return {0, std::string(ok_payload)};
    case XS_TRANSACTION_START:
      return do_transaction_start(conn, req);
    case XS_TRANSACTION_END:
      return do_transaction_end(conn, req);
    case XS_INTRODUCE:
      return do_introduce(conn, req);
    case XS_RELEASE:
      return do_release(conn, req);
    case XS_IS_DOMAIN_INTRODUCED:
      return do_is_introduced(req);
    case XS_GET_DOMAIN_PATH:
      return do_get_domain_path(req);
    case XS_RESUME: {
      const auto d = parse_decimal(req.args.at(0), domid_max);
      if (!conn.privileged) {
        return {EACCES, {}};
      }
      return d && domains_.contains(domid{static_cast<std::uint16_t>(*d)})
                 ? op_result{0, std::string(ok_payload)}
                 : op_result{ENOENT, {}};
    }
    case XS_CONTROL:
      return do_control(conn, req);
    default:  // SET_TARGET: device-model stub domains are out of scope
      return {conn.privileged ? ENOSYS : EACCES, {}};
  }
}

engine::op_result engine::node_request(connection& conn, const request& req) {
  tx_state* tx = nullptr;
  if (req.hdr.tx_id != 0) {
    const auto it = conn.txs.find(req.hdr.tx_id);
    if (it == conn.txs.end()) {
      return {ENOENT, {}};
    }
    tx = &it->second;
  }
  op_context ctx{tx != nullptr ? tx->snapshot : store_, tx, conn};
  const std::string& raw = req.args.at(0);
  if (req.hdr.type == XS_GET_PERMS && is_special(raw)) {
    return do_get_perms(ctx, raw);
  }
  if (req.hdr.type == XS_SET_PERMS && is_special(raw)) {
    return do_set_perms(ctx, raw, req.args);
  }
  const auto path = canonicalize(raw, conn.dom);
  if (!path) {
    return {EINVAL, {}};
  }
  switch (req.hdr.type) {
    case XS_READ:
      return do_read(ctx, *path);
    case XS_WRITE:
      return do_write(ctx, *path, req.data);
    case XS_MKDIR:
      return do_mkdir(ctx, *path);
    case XS_RM:
      return do_rm(ctx, *path);
    case XS_DIRECTORY:
      return do_directory(ctx, *path);
    case XS_DIRECTORY_PART:
      return do_directory_part(ctx, *path, req.args.at(1));
    case XS_GET_PERMS:
      return do_get_perms(ctx, *path);
    default:
      return do_set_perms(ctx, *path, req.args);
  }
}

engine::op_result engine::do_get_domain_path(const request& req) {
  const auto d = parse_decimal(req.args.at(0), 0xFFFF);
  if (!d) {
    return {EINVAL, {}};
  }
  return {0, with_nul(home_path(domid{static_cast<std::uint16_t>(*d)}))};
}

engine::op_result engine::do_is_introduced(const request& req) {
  const auto d = parse_decimal(req.args.at(0), 0xFFFF);
  if (!d) {
    return {EINVAL, {}};
  }
  return {0, with_nul(is_introduced(domid{static_cast<std::uint16_t>(*d)}) ? "T" : "F")};
}

engine::op_result engine::do_control(const connection& conn, const request& req) {
  // xenstored's debug/control commands: "print", "watches" and "help".
  if (!conn.privileged) {
    return {EACCES, {}};
  }
  const std::string& cmd = req.args.at(0);
  if (cmd == "print") {
    std::string_view text = req.data;
    while (!text.empty() && text.back() == '\0') {
      text.remove_suffix(1);
    }
    sink_.log(text);
    return {0, std::string(ok_payload)};
  }
  if (cmd == "watches") {
    return {0, with_nul(watch_report())};
  }
  if (cmd == "help") {
    return {0,
            with_nul("print <text>: write <text> to the log\n"
                     "watches: one line per connection: conn <id> dom <d> pid <pid> watches <n>\n"
                     "help: this list\n")};
  }
  return {EINVAL, {}};
}

// One line per connection, for leak checks (tests/soak): a client that
// leaks watches across reconnects or device churn shows a growing count.
std::string engine::watch_report() const {
  std::string out;
  for (const auto& [id, conn] : conns_) {
    out += "conn " + std::to_string(id) + " dom " + std::to_string(conn.dom.value()) + " pid " +
           std::to_string(conn.peer_pid) + " watches " + std::to_string(conn.watches.size()) + "\n";
  }
  return out;
}

}  // namespace unetback::xs::sim
