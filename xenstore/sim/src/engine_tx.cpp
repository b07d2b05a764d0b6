// Engine transactions: TRANSACTION_START takes a snapshot of the tree; node
// operations with that tx_id act on the snapshot and record every node they
// look at; TRANSACTION_END "T" commits only if none of those nodes changed in
// the live tree since (else EAGAIN: the client redoes the transaction), then
// fires the transaction's watch events.

#include <cerrno>

#include "unetback/xs/sim/engine.hpp"

namespace unetback::xs::sim {

engine::op_result engine::do_transaction_start(connection& conn, const request& req) {
  if (req.hdr.tx_id != 0) {
    return {EBUSY, {}};  // no nested transactions
  }
  if (conn.txs.size() >= limits_.max_transactions_per_conn) {
    return {ENOSPC, {}};
  }
  std::uint32_t id = next_tx_++;
  if (id == 0) {
    id = next_tx_++;  // 0 means "no transaction" on the wire
  }
  conn.txs.emplace(id, tx_state{store_, {}, {}, {}});
  std::string payload = std::to_string(id);
  payload.push_back('\0');
  return {0, std::move(payload)};
}

engine::op_result engine::do_transaction_end(connection& conn, const request& req) {
  const auto it = conn.txs.find(req.hdr.tx_id);
  if (it == conn.txs.end()) {
    return {ENOENT, {}};
  }
  const std::string& verdict = req.args.at(0);
  if (verdict != "T" && verdict != "F") {
    return {EINVAL, {}};
  }
  tx_state tx = std::move(it->second);
  conn.txs.erase(it);
  if (verdict == "F") {
    return {0, std::string(ok_payload)};
  }
  if (conflicts(tx)) {
    return {EAGAIN, {}};
  }
  commit(tx);
  return {0, std::string(ok_payload)};
}

bool engine::conflicts(const tx_state& tx) const {
  for (const auto& [path, seen_gen] : tx.seen) {
    const node* live = store_.find(path);
    const std::uint64_t live_gen = live != nullptr ? live->gen : 0;
    if (live_gen != seen_gen) {
      return true;
    }
  }
  return false;
}

void engine::commit(tx_state& tx) {
  // `modified` is ordered, so parents are applied before their children.
  for (const std::string& path : tx.modified) {
    const node* n = tx.snapshot.find(path);
    if (n != nullptr) {
      node copy = *n;
      copy.gen = ++gen_;
      store_.put(path, std::move(copy));
    } else if (store_.find(path) != nullptr) {
      store_.erase_subtree(path);
    }
  }
  for (const change& ch : tx.changes) {
    fire(ch);
  }
}

}  // namespace unetback::xs::sim
