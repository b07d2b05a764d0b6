#include "unetback/direct/pairing.hpp"

#include <algorithm>
#include <stdexcept>

namespace unetback::direct {

namespace {

/// The keys of both maps, once each.
template <class Map>
std::set<typename Map::key_type> keys_of(const Map& a, const Map& b) {
  std::set<typename Map::key_type> keys;
  for (const auto& [k, v] : a) {
    keys.insert(k);
  }
  for (const auto& [k, v] : b) {
    keys.insert(k);
  }
  return keys;
}

template <class Map>
const typename Map::mapped_type::element_type* find_table(const Map& m,
                                                          const typename Map::key_type& k) {
  const auto it = m.find(k);
  return it == m.end() ? nullptr : it->second.get();
}

}  // namespace

pairing::pairing(std::size_t ring_bytes, std::size_t max_record)
    : ring_bytes_(ring_bytes), max_record_(max_record) {
  handoff_ring probe(0, max_record);  // the same checks a real ring makes, now
}

pairing::~pairing() {
  publish_all({});
}

void pairing::add(vif_key key, paired_vif vif) {
  if (vif.queues.empty() || vifs_.contains(key)) {
    throw std::invalid_argument("direct path: a vif added twice or without queues");
  }
  vifs_.emplace(key, std::move(vif));
}

void pairing::remove(vif_key key) {
  if (!vifs_.contains(key)) {
    return;
  }
  std::erase_if(pairs_, [key](const auto& p) { return p.first == key || p.second == key; });
  republish();  // it has no peers now: its ports get no table, no table names its rings
  vifs_.erase(key);
}

void pairing::set_pairs(std::span<const std::pair<vif_key, vif_key>> pairs) {
  std::set<std::pair<vif_key, vif_key>> next;
  for (const auto& [a, b] : pairs) {
    if (a != b && vifs_.contains(a) && vifs_.contains(b)) {
      next.emplace(std::min(a, b), std::max(a, b));
    }
  }
  if (next != pairs_) {
    pairs_ = std::move(next);
    republish();
  }
}

void pairing::set_mtu(vif_key key, std::uint32_t mtu) {
  const auto it = vifs_.find(key);
  if (it == vifs_.end() || it->second.guest.mtu == mtu) {
    return;
  }
  it->second.guest.mtu = mtu;
  if (!peers_of(key).empty()) {
    republish();
  }
}

bool pairing::paired(vif_key a, vif_key b) const {
  return pairs_.contains({std::min(a, b), std::max(a, b)});
}

std::vector<vif_key> pairing::vifs() const {
  std::vector<vif_key> keys;
  for (const auto& [k, v] : vifs_) {
    keys.push_back(k);
  }
  return keys;
}

std::vector<vif_key> pairing::peers_of(vif_key key) const {
  std::vector<vif_key> peers;
  for (const auto& [a, b] : pairs_) {
    if (a == key || b == key) {
      peers.push_back(a == key ? b : a);
    }
  }
  return peers;
}

std::set<pairing::ring_id> pairing::wanted_rings() const {
  std::set<ring_id> wanted;
  for (const auto& [a, b] : pairs_) {
    for (const auto& [from, to] : {std::pair{a, b}, std::pair{b, a}}) {
      for (unsigned q = 0; q < vifs_.at(from).queues.size(); ++q) {
        wanted.emplace(from, q, to);
      }
    }
  }
  return wanted;
}

handoff_ring* pairing::ring(const ring_id& id) {
  auto& slot = rings_[id];
  if (!slot) {
    slot = std::make_unique<handoff_ring>(ring_bytes_, max_record_);
  }
  return slot.get();
}

// Queue q of a vif sends to queue q mod n of each peer with n queues, and
// takes what every queue k of a peer with k mod (its own queue count) == q sends.
lane_table pairing::table_for(vif_key key, unsigned q) {
  const paired_vif& self = vifs_.at(key);
  lane_table t;
  t.source_mac = self.guest.mac;
  for (const vif_key p : peers_of(key)) {
    const paired_vif& peer = vifs_.at(p);
    direct_peer as_peer = peer.guest;
    as_peer.pair = static_cast<std::uint16_t>(t.peers.size());
    t.peers.push_back(as_peer);
    t.lanes.push_back(
        outbound_lane{ring({key, q, p}), &peer.queues[q % peer.queues.size()]->bell()});
    for (unsigned k = 0; k < peer.queues.size(); ++k) {
      if (k % self.queues.size() == q) {
        t.inbound.push_back(ring({p, k, key}));
      }
    }
  }
  return t;
}

void pairing::republish() {
  table_map next;
  for (const auto& [key, vif] : vifs_) {
    for (unsigned q = 0; q < vif.queues.size(); ++q) {
      auto t = table_for(key, q);
      if (!t.peers.empty()) {
        next[{key, q}] = std::make_unique<lane_table>(std::move(t));
      }
    }
  }
  const auto wanted = wanted_rings();
  std::set<const handoff_ring*> kept;
  for (const auto& id : wanted) {
    kept.insert(rings_.at(id).get());
  }
  // Step one: consumers learn of new rings before any producer uses them, and
  // producers drop lanes to rings about to go while consumers still drain them.
  table_map step;
  for (const auto& id : keys_of(tables_, next)) {
    const lane_table* old = find_table(tables_, id);
    const lane_table* now = find_table(next, id);
    auto t = std::make_unique<lane_table>();
    t->source_mac = (now != nullptr ? now : old)->source_mac;
    for (std::size_t i = 0; old != nullptr && i < old->lanes.size(); ++i) {
      if (kept.contains(old->lanes[i].ring)) {
        t->peers.push_back(old->peers[i]);
        t->lanes.push_back(old->lanes[i]);
      }
    }
    for (const lane_table* from : {old, now}) {
      for (std::size_t i = 0; from != nullptr && i < from->inbound.size(); ++i) {
        if (std::find(t->inbound.begin(), t->inbound.end(), from->inbound[i]) == t->inbound.end()) {
          t->inbound.push_back(from->inbound[i]);
        }
      }
    }
    step[id] = std::move(t);
  }
  publish_all(std::move(step));
  publish_all(std::move(next));
  std::erase_if(rings_, [&wanted](const auto& r) { return !wanted.contains(r.first); });
}

void pairing::publish_all(table_map next) {
  for (const auto& id : keys_of(tables_, next)) {
    const lane_table* t = find_table(next, id);
    vifs_.at(id.first).queues.at(id.second)->publish(t);
  }
  tables_ = std::move(next);  // every port has left the old tables: free them
}

}  // namespace unetback::direct
