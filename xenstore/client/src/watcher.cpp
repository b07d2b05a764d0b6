#include "unetback/xs/watcher.hpp"

#include <boost/asio/posix/stream_descriptor.hpp>

#include <cerrno>
#include <cstdlib>
#include <memory>
#include <set>
#include <utility>

namespace unetback::xs {

namespace {

// Watch events handled per wake-up. A guest can make events arrive as fast as
// they are handled (a frontend flipping its state key): draining until the
// queue is empty would then never return, and nothing else on the event loop
// (refreshes, faults, the control socket) would run. libxenstore keeps its
// watch pipe readable while events are queued, so the rest are handled on
// the next wake-up, after the handlers queued meanwhile.
constexpr std::size_t max_events_per_wakeup = 64;

}  // namespace

// Shared with the pending async_wait so a completion that races destruction
// finds `closed` set instead of a dangling watcher.
struct watcher::state : std::enable_shared_from_this<watcher::state> {
  state(client& c, const boost::asio::any_io_executor& ex, handler h)
      : xs(c), generation(c.generation()), descriptor(ex), on_event(std::move(h)) {}

  // Requests on a connection that alive() found lost would race
  // libxenstore's reader thread closing its socket; after a reconnect the
  // handle is a different one. Either way the watches are gone already.
  [[nodiscard]] bool connection_usable() const {
    return !xs.lost() && xs.generation() == generation;
  }

  void arm() {
    descriptor.async_wait(boost::asio::posix::stream_descriptor::wait_read,
                          [self = shared_from_this()](const boost::system::error_code& ec) {
                            if (ec || self->closed) {
                              return;
                            }
                            self->drain();
                            if (!self->closed) {
                              self->arm();
                            }
                          });
  }

  std::size_t drain() {
    std::size_t count = 0;
    while (!closed && xs.generation() == generation && count < max_events_per_wakeup) {
      errno = 0;
      std::unique_ptr<char*, decltype(&std::free)> event(xs_check_watch(xs.watch_handle()),
                                                         &std::free);
      if (!event) {
        // EAGAIN: queue empty. Anything else: the connection is broken and
        // later requests will report it; stop draining either way.
        break;
      }
      ++count;
      on_event(event.get()[XS_WATCH_PATH], event.get()[XS_WATCH_TOKEN]);
    }
    return count;
  }

  client& xs;
  unsigned generation;
  boost::asio::posix::stream_descriptor descriptor;
  handler on_event;
  std::set<std::pair<std::string, std::string>> watches;
  bool closed = false;
};

watcher::watcher(client& c, const boost::asio::any_io_executor& ex, handler on_event)
    : state_(std::make_shared<state>(c, ex, std::move(on_event))) {
  errno = 0;
  const int fd = xs_fileno(c.watch_handle());
  if (fd < 0) {
    throw_errno("fileno", "(watch pipe)");
  }
  state_->descriptor.assign(fd);
  state_->arm();
}

watcher::~watcher() {
  state_->closed = true;
  if (state_->connection_usable()) {
    for (const auto& [path, token] : state_->watches) {
      xs_unwatch(state_->xs.watch_handle(), path.c_str(), token.c_str());
    }
  }
  boost::system::error_code ignored;
  state_->descriptor.cancel(ignored);
  // The fd belongs to libxenstore: release, never close.
  (void)state_->descriptor.release();
}

void watcher::add(std::string_view path, std::string_view token) {
  std::string p(path);
  std::string t(token);
  errno = 0;
  if (!xs_watch(state_->xs.watch_handle(), p.c_str(), t.c_str())) {
    throw_errno("watch", path);
  }
  state_->watches.emplace(std::move(p), std::move(t));
}

void watcher::remove(std::string_view path, std::string_view token) {
  auto it = state_->watches.find({std::string(path), std::string(token)});
  if (it == state_->watches.end()) {
    return;
  }
  if (state_->connection_usable()) {
    xs_unwatch(state_->xs.watch_handle(), it->first.c_str(), it->second.c_str());
  }
  state_->watches.erase(it);
}

std::size_t watcher::drain() {
  return state_->drain();
}

std::size_t watcher::size() const {
  return state_->watches.size();
}

}  // namespace unetback::xs
