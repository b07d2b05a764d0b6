#pragma once
// The node tree of sim-xenstored: a flat ordered map from absolute path to
// node, so a subtree is one contiguous key range. Each node keeps its value,
// its permission list and a generation number (the global modification count
// at its last change; a node whose child list changed counts as changed),
// which transactions compare to detect conflicts.

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "unetback/xs/permission.hpp"

namespace unetback::xs::sim {

/// One XenStore node.
struct node {
  std::string value;              ///< raw bytes
  std::vector<permission> perms;  ///< perms[0]: owner and default access
  std::uint64_t gen = 0;          ///< modification generation
};

/// What `d` may do with a node whose permissions are `perms`
/// (xenstored perm_for_conn): privileged connections and the owner get
/// everything; otherwise the first entry naming `d`, else the default.
[[nodiscard]] access effective_access(const std::vector<permission>& perms, domid d,
                                      bool privileged);

/// A tree of nodes keyed by absolute path. The root "/" always exists.
class store {
 public:
  /// A store holding only "/" (owner dom0, no access for others).
  store();

  /// The node at `path`, or nullptr.
  [[nodiscard]] const node* find(std::string_view path) const;
  [[nodiscard]] node* find(std::string_view path);
  /// Inserts or replaces the node at `path` (the parent must exist).
  void put(const std::string& path, node n);
  /// Removes `path` and everything below it; returns the removed paths and
  /// their nodes, parents before children. The root is never removed.
  std::vector<std::pair<std::string, node>> erase_subtree(std::string_view path);
  /// Children names of `path`, in lexicographic order.
  [[nodiscard]] std::vector<std::string> children(std::string_view path) const;
  /// Every node path at or below `path`.
  [[nodiscard]] std::vector<std::string> subtree(std::string_view path) const;
  /// Number of nodes, root included.
  [[nodiscard]] std::size_t size() const { return nodes_.size(); }
  /// Number of nodes whose owner (perms[0]) is `d`.
  [[nodiscard]] std::size_t owned_by(domid d) const;
  /// Calls f(path, node&) for every node.
  template <class F>
  void for_each(F&& f) {
    for (auto& [path, n] : nodes_) {
      f(path, n);
    }
  }

 private:
  // Keys below `path` share the prefix path + "/" ("/" for the root): the
  // first key not below is the prefix with its '/' replaced by '0' ('/'+1).
  [[nodiscard]] std::pair<std::map<std::string, node, std::less<>>::const_iterator,
                          std::map<std::string, node, std::less<>>::const_iterator>
  below(std::string_view path) const;

  std::map<std::string, node, std::less<>> nodes_;
};

}  // namespace unetback::xs::sim
