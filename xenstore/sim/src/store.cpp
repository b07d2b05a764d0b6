#include "unetback/xs/sim/store.hpp"

namespace unetback::xs::sim {

access effective_access(const std::vector<permission>& perms, domid d, bool privileged) {
  if (privileged || perms.empty() || perms.front().id == d) {
    return access::both;
  }
  for (std::size_t i = 1; i < perms.size(); ++i) {
    if (perms[i].id == d) {
      return perms[i].acc;
    }
  }
  return perms.front().acc;
}

store::store() {
  nodes_.emplace("/", node{"", {permission{domid{0}, access::none}}, 0});
}

const node* store::find(std::string_view path) const {
  const auto it = nodes_.find(path);
  return it == nodes_.end() ? nullptr : &it->second;
}

node* store::find(std::string_view path) {
  const auto it = nodes_.find(path);
  return it == nodes_.end() ? nullptr : &it->second;
}

void store::put(const std::string& path, node n) {
  nodes_.insert_or_assign(path, std::move(n));
}

std::pair<std::map<std::string, node, std::less<>>::const_iterator,
          std::map<std::string, node, std::less<>>::const_iterator>
store::below(std::string_view path) const {
  std::string prefix(path);
  if (prefix != "/") {
    prefix += '/';
  }
  std::string end = prefix;
  end.back() = '0';  // '/' + 1
  // The root's prefix "/" is also its own key: start after it.
  const auto first = path == "/" ? nodes_.upper_bound(prefix) : nodes_.lower_bound(prefix);
  return {first, nodes_.lower_bound(end)};
}

std::vector<std::pair<std::string, node>> store::erase_subtree(std::string_view path) {
  std::vector<std::pair<std::string, node>> removed;
  if (path == "/") {
    return removed;
  }
  const auto self = nodes_.find(path);
  if (self == nodes_.end()) {
    return removed;
  }
  removed.emplace_back(self->first, self->second);
  const auto [first, last] = below(path);
  for (auto it = first; it != last; ++it) {
    removed.emplace_back(it->first, it->second);
  }
  nodes_.erase(first, last);
  nodes_.erase(self);  // map iterators outside the erased range stay valid
  return removed;
}

std::vector<std::string> store::children(std::string_view path) const {
  std::vector<std::string> names;
  const std::size_t skip = path == "/" ? 1 : path.size() + 1;
  const auto [first, last] = below(path);
  for (auto it = first; it != last; ++it) {
    const std::string_view rest = std::string_view(it->first).substr(skip);
    if (rest.find('/') == std::string_view::npos) {
      names.emplace_back(rest);
    }
  }
  return names;
}

std::vector<std::string> store::subtree(std::string_view path) const {
  std::vector<std::string> paths;
  if (find(path) != nullptr) {
    paths.emplace_back(path);
  }
  const auto [first, last] = below(path);
  for (auto it = first; it != last; ++it) {
    paths.push_back(it->first);
  }
  return paths;
}

std::size_t store::owned_by(domid d) const {
  std::size_t count = 0;
  for (const auto& [path, n] : nodes_) {
    if (!n.perms.empty() && n.perms.front().id == d) {
      ++count;
    }
  }
  return count;
}

}  // namespace unetback::xs::sim
