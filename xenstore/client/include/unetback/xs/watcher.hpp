#pragma once
// XenStore watches driven by Boost.Asio, on the client's watch connection
// (client::watch_handle()): xs_fileno(h) (the read end of a pipe
// owned by libxenstore) is wrapped as a posix::stream_descriptor; when it polls
// readable, events are drained with xs_check_watch until it fails with EAGAIN,
// as xenstore.h asks, and each (path, token) is handed to the callback.
// A watch event only means "something at or below this path may have
// changed": spurious events are allowed, so the receiver always re-reads.

#include <boost/asio/any_io_executor.hpp>

#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "unetback/xs/client.hpp"

namespace unetback::xs {

/// Delivers the watch events of one client on an Asio executor. The client
/// must outlive the watcher. Not thread-safe: use from the executor's thread.
class watcher {
 public:
  /// Receives (event path, token). Relative watches report relative paths.
  using handler = std::function<void(std::string_view path, std::string_view token)>;

  /// Starts waiting on xs_fileno(c) on `ex`. Throws xs::error on failure.
  watcher(client& c, const boost::asio::any_io_executor& ex, handler on_event);
  /// Removes every watch added here (unless the client is lost() or was
  /// reconnected since: those watches died with their connection), cancels
  /// the wait and releases the fd (it belongs to libxenstore, closed by xs_close).
  ~watcher();
  watcher(const watcher&) = delete;
  watcher& operator=(const watcher&) = delete;

  /// xs_watch(path, token). xenstored fires once right away, then on every
  /// change at or below `path`. Throws xs::error (e.g. EEXIST for a duplicate).
  void add(std::string_view path, std::string_view token);
  /// xs_unwatch(path, token). A watch that is not registered is ignored.
  void remove(std::string_view path, std::string_view token);
  /// Dispatches every event queued now without waiting; returns how many.
  std::size_t drain();
  /// Number of watches currently registered through this watcher.
  [[nodiscard]] std::size_t size() const;

 private:
  struct state;
  std::shared_ptr<state> state_;
};

}  // namespace unetback::xs
