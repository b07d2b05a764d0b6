// Watches through xs::watcher on an io_context: initial event, descendants,
// removal of an ancestor, relative paths, permission filtering, and that a
// transaction's events fire at commit.

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <string>
#include <utility>
#include <vector>

#include "sim_fixture.hpp"
#include "unetback/xs/watcher.hpp"

namespace unetback::xs::testing {
namespace {

using event = std::pair<std::string, std::string>;

class XsWatch : public sim_xenstore_test {
 protected:
  bool saw(const std::vector<event>& events, const std::string& path, const std::string& token) {
    return std::find(events.begin(), events.end(), event{path, token}) != events.end();
  }
  bool wait_for(std::vector<event>& events, const std::string& path, const std::string& token) {
    return run_until(io_, [&] { return saw(events, path, token); });
  }
  boost::asio::io_context io_;
};

TEST_F(XsWatch, WatchFiresOnceRightAwayThenOnChangesBelow) {
  client xs = dom0();
  std::vector<event> events;
  watcher w(xs, io_.get_executor(),
            [&](std::string_view p, std::string_view t) { events.emplace_back(p, t); });
  w.add("/w", "tok");
  ASSERT_TRUE(wait_for(events, "/w", "tok"));  // the initial event
  events.clear();
  xs.write("/w/a/b", "1");
  ASSERT_TRUE(wait_for(events, "/w/a/b", "tok"));
  xs.write("/wother", "1");  // a sibling with a common prefix does not match
  xs.write("/w", "2");
  ASSERT_TRUE(wait_for(events, "/w", "tok"));
  EXPECT_FALSE(saw(events, "/wother", "tok"));
}

TEST_F(XsWatch, RemovingAnAncestorFiresWatchesBelowWithTheirOwnPath) {
  client xs = dom0();
  xs.write("/be/vif/1/0/state", "4");
  std::vector<event> events;
  watcher w(xs, io_.get_executor(),
            [&](std::string_view p, std::string_view t) { events.emplace_back(p, t); });
  w.add("/be/vif/1/0/state", "state");
  ASSERT_TRUE(wait_for(events, "/be/vif/1/0/state", "state"));
  events.clear();
  xs.rm("/be/vif/1");
  ASSERT_TRUE(wait_for(events, "/be/vif/1/0/state", "state"));
  EXPECT_EQ(xs.read("/be/vif/1/0/state"), std::nullopt);
}

TEST_F(XsWatch, RelativeWatchReportsRelativePaths) {
  client xs = dom0();
  std::vector<event> events;
  watcher w(xs, io_.get_executor(),
            [&](std::string_view p, std::string_view t) { events.emplace_back(p, t); });
  w.add("backend/vif", "be");
  ASSERT_TRUE(wait_for(events, "backend/vif", "be"));
  xs.write("/local/domain/0/backend/vif/2/0/online", "1");
  ASSERT_TRUE(wait_for(events, "backend/vif/2/0/online", "be"));
}

// A guest that makes watch events arrive faster than they are handled must
// not monopolise the event loop: other handlers run between bounded drains.
TEST_F(XsWatch, WatchEventFloodDoesNotStarveTheEventLoop) {
  client xs = dom0();
  client writer = dom0();
  std::vector<event> events;
  bool posted = false;
  bool posted_ran = false;
  std::size_t seen_when_posted_ran = 0;
  watcher w(xs, io_.get_executor(), [&](std::string_view p, std::string_view t) {
    events.emplace_back(p, t);
    if (events.size() == 2 && !posted) {  // the first flood event (after the initial one)
      posted = true;
      boost::asio::post(io_, [&] {
        posted_ran = true;
        seen_when_posted_ran = events.size();
      });
    }
  });
  w.add("/flood", "f");
  ASSERT_TRUE(wait_for(events, "/flood", "f"));
  constexpr std::size_t writes = 1000;
  for (std::size_t i = 0; i < writes; ++i) {
    writer.write("/flood/k", std::to_string(i));
  }
  // A round trip on the watching connection returns after every event has
  // reached it: one unbounded drain would now handle all of them.
  (void)xs.read("/flood/k");
  ASSERT_TRUE(run_until(io_, [&] { return posted_ran && events.size() >= writes + 1; }));
  EXPECT_LT(seen_when_posted_ran, writes / 2);
}

TEST_F(XsWatch, RemovedWatchStopsFiring) {
  client xs = dom0();
  std::vector<event> events;
  watcher w(xs, io_.get_executor(),
            [&](std::string_view p, std::string_view t) { events.emplace_back(p, t); });
  w.add("/rw", "a");
  w.add("/rw2", "b");
  ASSERT_TRUE(wait_for(events, "/rw2", "b"));
  w.remove("/rw", "a");
  EXPECT_EQ(w.size(), 1U);
  xs.write("/rw/x", "1");
  xs.write("/rw2/x", "1");
  ASSERT_TRUE(wait_for(events, "/rw2/x", "b"));
  EXPECT_FALSE(saw(events, "/rw/x", "a"));
}

TEST_F(XsWatch, DuplicateWatchIsRefused) {
  client xs = dom0();
  watcher w(xs, io_.get_executor(), [](std::string_view, std::string_view) {});
  w.add("/dup", "t");
  EXPECT_THROW(w.add("/dup", "t"), xs::error);
}

TEST_F(XsWatch, TransactionEventsFireAtCommit) {
  client xs = dom0();
  client writer = dom0();
  std::vector<event> events;
  watcher w(xs, io_.get_executor(),
            [&](std::string_view p, std::string_view t) { events.emplace_back(p, t); });
  w.add("/txw", "t");
  ASSERT_TRUE(wait_for(events, "/txw", "t"));
  transaction tx(writer.native_handle());
  tx.write("/txw/k", "1");
  EXPECT_FALSE(run_until(
      io_, [&] { return saw(events, "/txw/k", "t"); }, std::chrono::milliseconds(200)));
  ASSERT_TRUE(tx.commit());
  ASSERT_TRUE(wait_for(events, "/txw/k", "t"));
}

TEST_F(XsWatch, GuestGetsNoEventsForNodesItCannotRead) {
  client tool = dom0();
  client g = guest(domid{3});
  std::vector<event> events;
  watcher w(g, io_.get_executor(),
            [&](std::string_view p, std::string_view t) { events.emplace_back(p, t); });
  w.add("/local/domain/0/backend/vif/3/0", "be");
  ASSERT_TRUE(wait_for(events, "/local/domain/0/backend/vif/3/0", "be"));
  events.clear();
  tool.write("/local/domain/0/backend/vif/3/0/hidden", "x");  // n0: not readable by 3
  const std::array<permission, 2> ro{permission{domid{0}, access::none},
                                     permission{domid{3}, access::read}};
  tool.write("/local/domain/0/backend/vif/3/0/state", "2");
  tool.set_permissions("/local/domain/0/backend/vif/3/0/state", ro);
  ASSERT_TRUE(wait_for(events, "/local/domain/0/backend/vif/3/0/state", "be"));
  EXPECT_FALSE(saw(events, "/local/domain/0/backend/vif/3/0/hidden", "be"));
}

TEST_F(XsWatch, SpecialWatchesAreForDom0Only) {
  client tool = dom0();
  client g = guest(domid{3});
  std::vector<event> dom0_events;
  std::vector<event> guest_events;
  watcher wd(tool, io_.get_executor(),
             [&](std::string_view p, std::string_view t) { dom0_events.emplace_back(p, t); });
  watcher wg(g, io_.get_executor(),
             [&](std::string_view p, std::string_view t) { guest_events.emplace_back(p, t); });
  wd.add("@introduceDomain", "intro");
  wg.add("@introduceDomain", "intro");
  ASSERT_TRUE(wait_for(dom0_events, "@introduceDomain", "intro"));
  ASSERT_TRUE(wait_for(guest_events, "@introduceDomain", "intro"));  // the initial event
  dom0_events.clear();
  guest_events.clear();
  introduce(domid{4});
  ASSERT_TRUE(wait_for(dom0_events, "@introduceDomain", "intro"));
  EXPECT_FALSE(run_until(
      io_, [&] { return !guest_events.empty(); }, std::chrono::milliseconds(200)));
}

}  // namespace
}  // namespace unetback::xs::testing
