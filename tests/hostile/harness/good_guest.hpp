#pragma once
// The well-behaved second guest of every scenario: a netfront-sim process
// (domid 1, two queues) in its own network namespace, attached to the host
// bridge by sim-xl, with IP 198.18.0.11. Its traffic_monitor proves that the
// daemon keeps serving other guests while one attacks.

#include <memory>
#include <string>

#include "child_process.hpp"
#include "net_tools.hpp"
#include "world.hpp"

namespace unetback::hostile {

class good_guest {
 public:
  static constexpr domid id{1};
  static constexpr const char* ip = "198.18.0.11";

  /// Creates the namespace and domain, attaches the vif, starts netfront-sim
  /// and waits until both ends are Connected and UDP echoes pass. Throws.
  explicit good_guest(world& w, unsigned queues = 2);
  /// Stops netfront-sim and removes the namespace.
  ~good_guest();
  good_guest(const good_guest&) = delete;
  good_guest& operator=(const good_guest&) = delete;

  [[nodiscard]] const std::string& netns() const { return ns_; }
  [[nodiscard]] bool alive() { return frontend_->alive(); }
  [[nodiscard]] traffic_monitor& traffic() { return *traffic_; }
  /// Both ends Connected.
  [[nodiscard]] bool connected();

 private:
  world& world_;
  std::string ns_;
  std::unique_ptr<child_process> frontend_;
  std::unique_ptr<traffic_monitor> traffic_;
};

}  // namespace unetback::hostile
