#pragma once
// A C++ client over libxenstore (xenstore.h): an RAII handle, node operations
// that throw xs::error, typed permissions, and transactions retried on EAGAIN.
// A client is meant to be used from one control thread (the main io_context).

#include "unetback/xs/xenstore_c.hpp"

#include <cerrno>
#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "unetback/rings/ids.hpp"
#include "unetback/xs/error.hpp"
#include "unetback/xs/permission.hpp"

namespace unetback::xs {

/// Operations on nodes, either directly or inside a transaction (the base of
/// client and transaction). Paths are absolute ("/local/domain/0/...") or
/// relative to the caller's home, /local/domain/<own domid>. Every failure
/// throws xs::error carrying the errno and the path.
class node_ops {
 public:
  /// The node's value, or nullopt if it does not exist (ENOENT). Other
  /// errors (EACCES...) throw.
  [[nodiscard]] std::optional<std::string> read(std::string_view path);
  /// Creates or replaces the value; missing parents are created.
  void write(std::string_view path, std::string_view value);
  /// Creates an empty node (and missing parents); existing nodes are kept.
  void mkdir(std::string_view path);
  /// Removes the node and everything below it; a missing node is not an error.
  void rm(std::string_view path);
  /// The children's names (not paths). A missing node gives an empty list.
  [[nodiscard]] std::vector<std::string> directory(std::string_view path);
  /// The permission list: the first entry is the owner and the default.
  [[nodiscard]] std::vector<permission> get_permissions(std::string_view path);
  /// Replaces the permission list (owner or dom0 only; needs one entry at least).
  void set_permissions(std::string_view path, std::span<const permission> perms);

  /// The libxenstore transaction id these operations use (XBT_NULL: none).
  [[nodiscard]] xs_transaction_t transaction_id() const noexcept { return tx_; }

 protected:
  node_ops(xs_handle* h, xs_transaction_t tx) noexcept : handle_(h), tx_(tx) {}
  ~node_ops() = default;
  node_ops(const node_ops&) = delete;
  node_ops& operator=(const node_ops&) = delete;

  xs_handle* handle_;  // not owned here
  xs_transaction_t tx_;
};

/// An open XenStore transaction. Aborted on destruction unless committed.
class transaction : public node_ops {
 public:
  /// Starts a transaction on `h` (xs_transaction_start). Throws xs::error.
  explicit transaction(xs_handle* h);
  ~transaction();
  transaction(const transaction&) = delete;
  transaction& operator=(const transaction&) = delete;

  /// Commits (xs_transaction_end(h, t, false)). Returns false if another
  /// writer conflicted (EAGAIN: the whole transaction must be redone); throws
  /// xs::error for any other failure. The transaction is closed either way.
  [[nodiscard]] bool commit();
  /// Abandons the transaction. Idempotent.
  void abort() noexcept;

 private:
  bool open_ = true;
};

/// An open connection to xenstored (or sim-xenstored).
class client : public node_ops {
 public:
  /// Attempts before transact() gives up with EAGAIN.
  static constexpr unsigned default_transaction_attempts = 16;

  /// xs_open(0): $XENSTORED_PATH if set, else the daemon socket, else the
  /// xenbus device. Throws xs::error if no connection can be made.
  client();
  /// Sets XENSTORED_PATH to `socket_path`, then opens. Call at startup only,
  /// before other threads run: setenv is not thread-safe.
  static client open(const std::string& socket_path);
  ~client();
  client(client&& other) noexcept;
  client& operator=(client&& other) noexcept;

  /// Replaces the connection with a fresh one, opened like the constructor
  /// did ($XENSTORED_PATH...), e.g. after xenstored restarted. Everything
  /// tied to the old connection (watches, transactions) is gone; references
  /// to this client stay valid. Throws xs::error (the old connection is then
  /// kept, dead or not).
  void reconnect();
  /// True if a cheap request (reading our "domid" key) succeeds: the
  /// connection is alive. Once it fails the client counts as lost() until
  /// reconnect(). Never throws.
  [[nodiscard]] bool alive() noexcept;
  /// alive() has failed since the last (re)connect: requests on the watch
  /// connection would race libxenstore's teardown of it, so watchers skip them.
  [[nodiscard]] bool lost() const noexcept { return lost_; }
  /// Counts reconnects: a watcher made before one must not touch the new
  /// connection (its watches were never registered there).
  [[nodiscard]] unsigned generation() const noexcept { return generation_; }

  /// GET_DOMAIN_PATH: "/local/domain/<d>".
  [[nodiscard]] std::string get_domain_path(domid d);
  /// Our own domain id, read from the relative key "domid" (a driver domain
  /// is not dom0: never assume 0). Throws if missing or malformed.
  [[nodiscard]] domid own_domid();

  /// Runs `body(transaction&)` inside a transaction and commits, redoing the
  /// whole body when the commit conflicts (EAGAIN), at most `max_attempts`
  /// times; then throws xs::error(EAGAIN). The body must therefore only
  /// compute from what it reads through the transaction. An exception from
  /// the body aborts the transaction and propagates. Returns body's result.
  template <class F>
  auto transact(F&& body, unsigned max_attempts = default_transaction_attempts)
      -> std::invoke_result_t<F&, transaction&>;

  /// The libxenstore handle for requests (it never gets a reader thread).
  [[nodiscard]] xs_handle* native_handle() const noexcept { return handle_; }
  /// The libxenstore handle for watches (xs_fileno, xs_watch, xs_check_watch):
  /// a second connection, so that its reader thread never shares a socket
  /// with requests (see client.cpp).
  [[nodiscard]] xs_handle* watch_handle() const noexcept { return watch_handle_; }

 private:
  /// The two connections a client holds (see client.cpp): both open, or
  /// neither (an xs::error, nothing leaked).
  struct handle_pair {
    xs_handle* requests;
    xs_handle* watches;
  };
  static handle_pair open_pair();
  explicit client(handle_pair handles) noexcept;
  void close_handles() noexcept;

  xs_handle* watch_handle_ = nullptr;
  unsigned generation_ = 0;
  bool lost_ = false;
};

template <class F>
auto client::transact(F&& body, unsigned max_attempts) -> std::invoke_result_t<F&, transaction&> {
  using result = std::invoke_result_t<F&, transaction&>;
  for (unsigned attempt = 1;; ++attempt) {
    transaction tx(handle_);
    if constexpr (std::is_void_v<result>) {
      body(tx);
      if (tx.commit()) {
        return;
      }
    } else {
      result value = body(tx);
      if (tx.commit()) {
        return value;
      }
    }
    if (attempt >= max_attempts) {
      throw error(EAGAIN, "transaction", "(commit conflicted on every attempt)");
    }
  }
}

}  // namespace unetback::xs
