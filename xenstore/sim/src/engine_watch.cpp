// Engine watches (WATCH, UNWATCH, event delivery) and domain lifecycle
// (INTRODUCE, RELEASE and the special @introduceDomain/@releaseDomain nodes).

#include <stdint.h>  // NOLINT(modernize-deprecated-headers): global uint32_t for xs_wire.h
#include <xen/io/xs_wire.h>
#include <cerrno>

#include <algorithm>

#include "unetback/rings/ids.hpp"
#include "unetback/xs/sim/engine.hpp"
#include "unetback/xs/sim/path.hpp"

namespace unetback::xs::sim {

namespace {

// Removes the entries after the first (the owner's) that name `d`.
void drop_grants(std::vector<permission>& perms, domid d) {
  if (perms.size() > 1) {
    perms.erase(std::remove_if(perms.begin() + 1, perms.end(),
                               [&](const permission& p) { return p.id == d; }),
                perms.end());
  }
}

}  // namespace

std::string engine::report_path(const connection& conn, const watch& w, std::string_view abs) {
  if (!w.relative) {
    return std::string(abs);
  }
  // A relative watch lies below home + "/", and so does every path it sees.
  const std::string home = home_path(conn.dom) + "/";
  return std::string(abs.substr(std::min(home.size(), abs.size())));
}

engine::op_result engine::do_watch(conn_id c, connection& conn, const request& req) {
  const std::string& given = req.args.at(0);
  const std::string& token = req.args.at(1);
  std::string abs;
  if (is_special(given)) {
    abs = given;
  } else if (auto canon = canonicalize(given, conn.dom)) {
    abs = std::move(*canon);
  } else {
    return {EINVAL, {}};
  }
  const bool dup = std::any_of(conn.watches.begin(), conn.watches.end(),
                               [&](const watch& w) { return w.abs == abs && w.token == token; });
  if (dup) {
    return {EEXIST, {}};
  }
  if (conn.watches.size() >= limits_.max_watches_per_conn) {
    return {E2BIG, {}};
  }
  const bool relative = !given.empty() && given.front() != '/' && !is_special(given);
  conn.watches.push_back(watch{abs, token, relative});
  // Ack first, then fire once right away (xenstored do_watch).
  reply(c, req.hdr, ok_payload);
  sink_.send(c, encode_watch_event(report_path(conn, conn.watches.back(), abs), token));
  return {0, {}, true};
}

engine::op_result engine::do_unwatch(connection& conn, const request& req) {
  const std::string& given = req.args.at(0);
  const auto abs =
      is_special(given) ? std::optional<std::string>(given) : canonicalize(given, conn.dom);
  if (!abs) {
    return {EINVAL, {}};
  }
  const auto it = std::find_if(conn.watches.begin(), conn.watches.end(), [&](const watch& w) {
    return w.abs == *abs && w.token == req.args.at(1);
  });
  if (it == conn.watches.end()) {
    return {ENOENT, {}};
  }
  conn.watches.erase(it);
  return {0, std::string(ok_payload)};
}

// A change at P fires every watch on P or an ancestor of P (reporting P); a
// removal of P also fires every watch below P (reporting the watch's own
// path). Only connections that may read the node see the event.
void engine::fire(const change& ch) {
  for (auto& [id, conn] : conns_) {
    if (!conn.privileged && !can_read(effective_access(ch.perms, conn.dom, false))) {
      continue;
    }
    for (const watch& w : conn.watches) {
      if (is_special(w.abs)) {
        continue;
      }
      if (is_at_or_below(ch.path, w.abs)) {
        sink_.send(id, encode_watch_event(report_path(conn, w, ch.path), w.token));
      } else if (ch.removal && is_at_or_below(w.abs, ch.path)) {
        sink_.send(id, encode_watch_event(report_path(conn, w, w.abs), w.token));
      }
    }
  }
}

// Special watches are privileged information (XSA-115) unless the special
// node's permissions grant read access.
void engine::fire_special(std::string_view name) {
  const auto& perms = special_perms_.at(std::string(name));
  for (auto& [id, conn] : conns_) {
    if (!can_read(effective_access(perms, conn.dom, conn.privileged))) {
      continue;
    }
    for (const watch& w : conn.watches) {
      if (w.abs == name) {
        sink_.send(id, encode_watch_event(name, w.token));
      }
    }
  }
}

engine::op_result engine::do_introduce(const connection& conn, const request& req) {
  if (!conn.privileged) {
    return {EACCES, {}};
  }
  // "<domid>\0<mfn>\0<port>\0"; dom0 and reserved ids cannot be introduced.
  const auto d = parse_decimal(req.args.at(0), domid_max);
  const auto mfn = parse_decimal(req.args.at(1), UINT64_MAX);
  const auto port = parse_decimal(req.args.at(2), UINT32_MAX);
  if (!d || *d == 0 || !mfn || !port) {
    return {EINVAL, {}};
  }
  const domid dom{static_cast<std::uint16_t>(*d)};
  const auto it = domains_.find(dom);
  if (it != domains_.end()) {
    // Re-introducing with the same ring page only re-binds (xenstored).
    return it->second == *mfn ? op_result{0, std::string(ok_payload)} : op_result{EINVAL, {}};
  }
  domains_.emplace(dom, *mfn);
  sink_.domain_introduced(dom);
  fire_special("@introduceDomain");
  return {0, std::string(ok_payload)};
}

engine::op_result engine::do_release(const connection& conn, const request& req) {
  if (!conn.privileged) {
    return {EACCES, {}};
  }
  const auto d = parse_decimal(req.args.at(0), domid_max);
  if (!d || *d == 0) {
    return {EINVAL, {}};
  }
  const domid dom{static_cast<std::uint16_t>(*d)};
  if (domains_.erase(dom) == 0) {
    return {ENOENT, {}};
  }
  std::erase_if(conns_, [&](const auto& entry) { return entry.second.dom == dom; });
  sink_.domain_released(dom);
  forget_domain_nodes(dom);
  fire_special("@releaseDomain");
  return {0, std::string(ok_payload)};
}

// XSA-419: nodes owned by a released domain are deleted; XSA-322: entries
// granting it access elsewhere are dropped, so a new domain reusing the id
// inherits nothing.
void engine::forget_domain_nodes(domid d) {
  std::vector<std::string> owned;
  store_.for_each([&](const std::string& path, node& n) {
    if (path != "/" && !n.perms.empty() && n.perms.front().id == d) {
      owned.push_back(path);
    }
  });
  for (const std::string& path : owned) {
    const node* n = store_.find(path);
    if (n == nullptr) {
      continue;  // went with an owned ancestor
    }
    std::vector<permission> perms = n->perms;
    store_.erase_subtree(path);
    node parent = *store_.find(parent_of(path));
    parent.gen = ++gen_;
    store_.put(parent_of(path), std::move(parent));
    fire(change{path, std::move(perms), true});
  }
  store_.for_each([&](const std::string&, node& n) { drop_grants(n.perms, d); });
  for (auto& [name, perms] : special_perms_) {
    drop_grants(perms, d);
  }
}

}  // namespace unetback::xs::sim
