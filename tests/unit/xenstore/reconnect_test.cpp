// xs::client after xenstored restarts (issue #7 item 4): the dead connection
// is detected by alive(), reconnect() opens a fresh one in place, and a
// watcher built on the new connection receives events again.

#include <gtest/gtest.h>

#include <boost/asio/io_context.hpp>
#include <string>
#include <utility>
#include <vector>

#include "sim_fixture.hpp"
#include "unetback/xs/watcher.hpp"

namespace unetback::xs::testing {
namespace {

class XsReconnect : public sim_xenstore_test {
 protected:
  void restart_server() {
    server_.reset();
    server_ = std::make_unique<sim::threaded_server>(dir_->path());
  }
};

TEST_F(XsReconnect, ALiveConnectionIsReportedAlive) {
  client xs = dom0();
  EXPECT_TRUE(xs.alive());
}

TEST_F(XsReconnect, RestartedXenstoredMakesTheOldConnectionDeadAndReconnectWorks) {
  client xs = dom0();
  xs.write("/before", "1");
  restart_server();
  EXPECT_FALSE(xs.alive());
  xs.reconnect();
  EXPECT_TRUE(xs.alive());
  EXPECT_EQ(xs.read("/before"), std::nullopt);  // a fresh store
  xs.write("/after", "2");
  EXPECT_EQ(xs.read("/after"), "2");
}

TEST_F(XsReconnect, WatchesCanBeReestablishedOnTheNewConnection) {
  client xs = dom0();
  boost::asio::io_context io;
  std::vector<std::pair<std::string, std::string>> events;
  auto record = [&](std::string_view p, std::string_view t) { events.emplace_back(p, t); };
  auto w = std::make_unique<watcher>(xs, io.get_executor(), record);
  w->add("/watched", "old");
  ASSERT_TRUE(run_until(io, [&] { return !events.empty(); }));
  restart_server();
  ASSERT_FALSE(xs.alive());
  w.reset();  // unwatching on the dead connection must not throw or hang
  xs.reconnect();
  events.clear();
  w = std::make_unique<watcher>(xs, io.get_executor(), record);
  w->add("/watched", "new");
  xs.write("/watched/x", "1");
  EXPECT_TRUE(run_until(io, [&] {
    for (const auto& [path, token] : events) {
      if (path == "/watched/x" && token == "new") {
        return true;
      }
    }
    return false;
  }));
}

}  // namespace
}  // namespace unetback::xs::testing
