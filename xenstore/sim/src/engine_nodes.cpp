// Engine node operations: READ, WRITE, MKDIR, RM, DIRECTORY(_PART),
// GET_PERMS, SET_PERMS, with xenstored's permission rules and quotas.

#include <cerrno>

#include <iterator>

#include "unetback/xs/sim/engine.hpp"
#include "unetback/xs/sim/path.hpp"

namespace unetback::xs::sim {

// Every node a transaction looks at is recorded with the generation its
// snapshot had, before the transaction itself changes it.
const node* engine::lookup(op_context& ctx, std::string_view path) {
  const node* n = ctx.tree.find(path);
  if (ctx.tx != nullptr && !ctx.tx->seen.contains(path)) {
    ctx.tx->seen.emplace(std::string(path), n != nullptr ? n->gen : 0);
  }
  return n;
}

// xenstored errno_from_parents: a missing node is ENOENT only for a caller
// that may read its nearest existing ancestor; otherwise EACCES (a guest must
// not learn what exists where it cannot look).
int engine::missing_errno(op_context& ctx, std::string_view path) {
  std::string p = parent_of(path);
  for (;;) {
    const node* n = lookup(ctx, p);
    if (n != nullptr) {
      const access a = effective_access(n->perms, ctx.conn.dom, ctx.conn.privileged);
      return can_read(a) ? ENOENT : EACCES;
    }
    p = parent_of(p);
  }
}

engine::checked_node engine::check_access(op_context& ctx, std::string_view path, access need) {
  const node* n = lookup(ctx, path);
  if (n == nullptr) {
    return {missing_errno(ctx, path), nullptr};
  }
  const access have = effective_access(n->perms, ctx.conn.dom, ctx.conn.privileged);
  if ((can_read(need) && !can_read(have)) || (can_write(need) && !can_write(have))) {
    return {EACCES, n};
  }
  return {0, n};
}

void engine::modify(op_context& ctx, const std::string& path, node n) {
  n.gen = ++gen_;
  ctx.tree.put(path, std::move(n));
  if (ctx.tx != nullptr) {
    ctx.tx->modified.insert(path);
  }
}

void engine::record(op_context& ctx, change ch) {
  if (ctx.tx != nullptr) {
    ctx.tx->changes.push_back(std::move(ch));  // fired at commit
  } else {
    fire(ch);
  }
}

// Creates `path` and any missing parents (xenstored construct_node): each
// copies its parent's permissions; an unprivileged creator becomes the owner.
// Needs write access to the nearest existing ancestor.
int engine::create(op_context& ctx, const std::string& path, std::string_view value) {
  std::vector<std::string> missing{path};
  std::string p = parent_of(path);
  while (lookup(ctx, p) == nullptr) {
    missing.push_back(p);
    p = parent_of(p);
  }
  const node* ancestor = ctx.tree.find(p);
  const bool priv = ctx.conn.privileged;
  if (!can_write(effective_access(ancestor->perms, ctx.conn.dom, priv))) {
    return EACCES;
  }
  if (ctx.tree.size() + missing.size() > limits_.max_nodes ||
      (!priv && ctx.tree.owned_by(ctx.conn.dom) + missing.size() > limits_.max_nodes_per_domain)) {
    return ENOSPC;
  }
  std::vector<permission> perms = ancestor->perms;
  if (!priv) {
    perms.front().id = ctx.conn.dom;
  }
  // The ancestor gains a child: its generation changes too.
  modify(ctx, p, *ancestor);
  for (auto it = missing.rbegin(); it != missing.rend(); ++it) {
    modify(ctx, *it,
           node{it == std::prev(missing.rend()) ? std::string(value) : std::string(), perms, 0});
  }
  record(ctx, change{path, perms, false});
  return 0;
}

engine::op_result engine::do_read(op_context& ctx, const std::string& path) {
  const checked_node c = check_access(ctx, path, access::read);
  if (c.err != 0) {
    return {c.err, {}};
  }
  return {0, c.n->value};
}

engine::op_result engine::do_write(op_context& ctx, const std::string& path,
                                   std::string_view value) {
  if (!ctx.conn.privileged && value.size() > limits_.max_value_unprivileged) {
    return {ENOSPC, {}};
  }
  const checked_node c = check_access(ctx, path, access::write);
  if (c.err == ENOENT) {
    const int err = create(ctx, path, value);
    return {err, err == 0 ? std::string(ok_payload) : std::string()};
  }
  if (c.err != 0) {
    return {c.err, {}};
  }
  node updated = *c.n;
  updated.value.assign(value);
  std::vector<permission> perms = updated.perms;
  modify(ctx, path, std::move(updated));
  record(ctx, change{path, std::move(perms), false});
  return {0, std::string(ok_payload)};
}

engine::op_result engine::do_mkdir(op_context& ctx, const std::string& path) {
  const checked_node c = check_access(ctx, path, access::write);
  if (c.err == ENOENT) {
    const int err = create(ctx, path, {});
    return {err, err == 0 ? std::string(ok_payload) : std::string()};
  }
  return {c.err, c.err == 0 ? std::string(ok_payload) : std::string()};
}

engine::op_result engine::do_rm(op_context& ctx, const std::string& path) {
  if (path == "/") {
    return {EINVAL, {}};
  }
  const checked_node c = check_access(ctx, path, access::write);
  if (c.err == ENOENT) {
    // Already gone: fine if the parent exists (xenstored do_rm).
    return lookup(ctx, parent_of(path)) != nullptr ? op_result{0, std::string(ok_payload)}
                                                   : op_result{ENOENT, {}};
  }
  if (c.err != 0) {
    return {c.err, {}};
  }
  std::vector<permission> perms = c.n->perms;
  for (const std::string& p : ctx.tree.subtree(path)) {
    lookup(ctx, p);
    if (ctx.tx != nullptr) {
      ctx.tx->modified.insert(p);
    }
  }
  ctx.tree.erase_subtree(path);
  const std::string parent = parent_of(path);
  modify(ctx, parent, *lookup(ctx, parent));
  record(ctx, change{path, std::move(perms), true});
  return {0, std::string(ok_payload)};
}

engine::op_result engine::do_directory(op_context& ctx, const std::string& path) {
  const checked_node c = check_access(ctx, path, access::read);
  if (c.err != 0) {
    return {c.err, {}};
  }
  std::string payload;
  for (const std::string& name : ctx.tree.children(path)) {
    payload += name;
    payload.push_back('\0');
  }
  if (payload.size() > payload_max) {
    return {E2BIG, {}};  // libxenstore falls back to DIRECTORY_PART
  }
  return {0, std::move(payload)};
}

// DIRECTORY_PART: "<gen>\0" then the children list from byte `offset`, cut
// at a name boundary to fit the payload; an empty string ends the list.
engine::op_result engine::do_directory_part(op_context& ctx, const std::string& path,
                                            std::string_view offset) {
  const checked_node c = check_access(ctx, path, access::read);
  if (c.err != 0) {
    return {c.err, {}};
  }
  std::string list;
  for (const std::string& name : ctx.tree.children(path)) {
    list += name;
    list.push_back('\0');
  }
  const auto off = parse_decimal(offset, list.size());
  if (!off) {
    return {EINVAL, {}};
  }
  std::string payload = std::to_string(c.n->gen);
  payload.push_back('\0');
  const std::size_t room = payload_max - payload.size() - 1;
  std::string_view rest = std::string_view(list).substr(*off);
  if (rest.size() > room) {
    rest = rest.substr(0, rest.rfind('\0', room - 1) + 1);
    payload.append(rest);
  } else {
    payload.append(rest);
    payload.push_back('\0');  // end of list
  }
  return {0, std::move(payload)};
}

engine::op_result engine::do_get_perms(op_context& ctx, std::string_view path) {
  const std::vector<permission>* perms = nullptr;
  if (is_special(path)) {
    perms = &special_perms_.at(std::string(path));
  } else {
    const checked_node c = check_access(ctx, path, access::read);
    if (c.err != 0) {
      return {c.err, {}};
    }
    perms = &c.n->perms;
  }
  std::string payload;
  for (const permission& p : *perms) {
    payload += to_string(p);
    payload.push_back('\0');
  }
  return {0, std::move(payload)};
}

engine::op_result engine::do_set_perms(op_context& ctx, std::string_view path,
                                       const std::vector<std::string>& args) {
  std::vector<permission> perms;
  for (std::size_t i = 1; i < args.size(); ++i) {
    const auto p = parse_permission(args[i]);
    if (!p) {
      return {EINVAL, {}};
    }
    perms.push_back(*p);
  }
  const bool priv = ctx.conn.privileged;
  if (!priv && perms.size() > limits_.max_perms_unprivileged) {
    return {ENOSPC, {}};
  }
  if (is_special(path)) {
    if (!priv) {
      return {EACCES, {}};
    }
    special_perms_.at(std::string(path)) = std::move(perms);
    return {0, std::string(ok_payload)};
  }
  const checked_node c = check_access(ctx, path, access::write);
  if (c.err != 0) {
    return {c.err, {}};
  }
  // Only the owner (or dom0) may change permissions (XS_PERM_OWNER), and an
  // unprivileged owner may not hand the node to another domain.
  if (!priv && c.n->perms.front().id != ctx.conn.dom) {
    return {EACCES, {}};
  }
  if (!priv && perms.front().id != c.n->perms.front().id) {
    return {EPERM, {}};
  }
  node updated = *c.n;
  updated.perms = perms;
  const std::string p(path);
  modify(ctx, p, std::move(updated));
  record(ctx, change{p, std::move(perms), false});
  return {0, std::string(ok_payload)};
}

}  // namespace unetback::xs::sim
