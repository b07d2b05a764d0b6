#pragma once
// The protocol engine of sim-xenstored, independent of sockets: connections
// (identified by domain, privileged or not), the node tree with xenstored's
// permission rules, watches, transactions and domain introduction. Input is
// parsed requests; output goes to an engine_sink. The socket server and the
// fuzz harness both drive it.
//
// Rules followed (xenstored 4.17, docs/misc/xenstore.txt):
//  * perms[0] is the owner and the access of unlisted domains; dom0 and the
//    owner have full access; a new node copies its parent's permissions and
//    an unprivileged creator becomes its owner; creating needs write access
//    to the nearest existing ancestor; a missing node reads as ENOENT only if
//    that ancestor is readable, EACCES otherwise.
//  * only the owner (or dom0) may SET_PERMS; an unprivileged owner may not
//    give the node away (EPERM).
//  * watches fire for changes at or below the watched path; removing an
//    ancestor fires watches below it with their own path; events go only to
//    connections that may read the node; @introduceDomain/@releaseDomain go
//    to privileged connections (or those granted read on the special node).
//  * a transaction works on a snapshot; its commit fails with EAGAIN if any
//    node it read or wrote changed meanwhile; its events fire at commit.
//  * RELEASE removes the nodes the domain owned (XSA-419) and its entries in
//    other nodes' permissions (XSA-322).
//  * quotas bound memory: nodes per unprivileged domain, value size, watches
//    and transactions per connection, permission entries.

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "unetback/rings/ids.hpp"
#include "unetback/xs/sim/store.hpp"
#include "unetback/xs/sim/wire.hpp"

namespace unetback::xs::sim {

/// Identifies one client connection inside the engine.
using conn_id = std::uint64_t;

/// Receives the engine's output.
class engine_sink {
 public:
  virtual ~engine_sink() = default;
  /// Queue one encoded message (reply or watch event) for connection `c`.
  virtual void send(conn_id c, std::string bytes) = 0;
  /// Domain `d` was introduced: start serving its socket.
  virtual void domain_introduced(domid d) = 0;
  /// Domain `d` was released: the engine already forgot its connections;
  /// close them and stop serving its socket.
  virtual void domain_released(domid d) = 0;
  /// A CONTROL "print" message or an engine diagnostic.
  virtual void log(std::string_view line) = 0;
};

/// Resource bounds (defaults follow xenstored's quotas).
struct engine_limits {
  std::size_t max_nodes = 100000;           ///< whole tree
  std::size_t max_nodes_per_domain = 1000;  ///< owned by one unprivileged domain
  std::size_t max_value_unprivileged = 2048;
  std::size_t max_watches_per_conn = 128;
  std::size_t max_transactions_per_conn = 10;
  std::size_t max_perms_unprivileged = 5;
};

/// The xenstored state machine. Single-threaded.
class engine {
 public:
  /// Creates the initial tree: /local/domain/0 with domid = "0".
  explicit engine(engine_sink& sink, engine_limits limits = {});

  /// Registers a connection of domain `d`. Only dom0's socket is privileged.
  /// `peer_pid` (SO_PEERCRED, 0 if unknown) only labels the connection in
  /// the "watches" control command.
  conn_id connect(domid d, bool privileged, std::int32_t peer_pid = 0);
  /// Forgets a connection: its watches and open transactions are discarded.
  void disconnect(conn_id c);
  /// Executes one request; replies (and watch events) go to the sink.
  void handle(conn_id c, const request& req);
  /// Answers a request that failed to parse (parse_status::error_reply).
  void reject(conn_id c, const msg_header& hdr, int errnum);

  /// True for dom0 and for domains introduced and not yet released.
  [[nodiscard]] bool is_introduced(domid d) const;
  /// The live tree (for tests and dumps).
  [[nodiscard]] const store& tree() const { return store_; }
  /// Connections currently registered.
  [[nodiscard]] std::size_t connection_count() const { return conns_.size(); }

 private:
  /// The payload of a successful reply that carries no data.
  static constexpr std::string_view ok_payload{"OK\0", 3};

  struct watch {
    std::string abs;  // canonical path or special name
    std::string token;
    bool relative;  // registered with a relative path: report relative
  };
  struct change {
    std::string path;
    std::vector<permission> perms;  // who may see the event
    bool removal;                   // also fire watches below `path`
  };
  struct tx_state {
    store snapshot;
    std::map<std::string, std::uint64_t, std::less<>> seen;  // path -> gen (0: absent)
    std::set<std::string, std::less<>> modified;
    std::vector<change> changes;
  };
  struct connection {
    domid dom;
    bool privileged;
    std::int32_t peer_pid;
    std::vector<watch> watches;
    std::map<std::uint32_t, tx_state> txs;
  };
  // Where a node operation acts: the live tree, or a transaction's snapshot.
  struct op_context {
    store& tree;
    tx_state* tx;
    const connection& conn;
  };
  // Result of an operation: errno (0 = success) and the reply payload;
  // `replied` when the operation already sent its reply (WATCH: ack first,
  // then the initial event).
  struct op_result {
    int err = 0;
    std::string payload;
    bool replied = false;
  };
  // A permission check: errno (0 = allowed) and the node when it exists.
  struct checked_node {
    int err = 0;
    const node* n = nullptr;
  };

  // dispatch (engine.cpp)
  void reply(conn_id c, const msg_header& hdr, std::string_view payload);
  op_result dispatch(conn_id c, connection& conn, const request& req);
  op_result node_request(connection& conn, const request& req);
  op_result do_control(const connection& conn, const request& req);
  [[nodiscard]] std::string watch_report() const;
  op_result do_get_domain_path(const request& req);
  op_result do_is_introduced(const request& req);
  // watches (engine_watch.cpp)
  op_result do_watch(conn_id c, connection& conn, const request& req);
  op_result do_unwatch(connection& conn, const request& req);
  void fire(const change& ch);
  void fire_special(std::string_view name);
  [[nodiscard]] static std::string report_path(const connection& conn, const watch& w,
                                               std::string_view abs);
  // domains (engine_watch.cpp)
  op_result do_introduce(const connection& conn, const request& req);
  op_result do_release(const connection& conn, const request& req);
  void forget_domain_nodes(domid d);
  // node operations (engine_nodes.cpp)
  const node* lookup(op_context& ctx, std::string_view path);
  int missing_errno(op_context& ctx, std::string_view path);
  checked_node check_access(op_context& ctx, std::string_view path, access need);
  void modify(op_context& ctx, const std::string& path, node n);
  void record(op_context& ctx, change ch);
  int create(op_context& ctx, const std::string& path, std::string_view value);
  op_result do_read(op_context& ctx, const std::string& path);
  op_result do_write(op_context& ctx, const std::string& path, std::string_view value);
  op_result do_mkdir(op_context& ctx, const std::string& path);
  op_result do_rm(op_context& ctx, const std::string& path);
  op_result do_directory(op_context& ctx, const std::string& path);
  op_result do_directory_part(op_context& ctx, const std::string& path, std::string_view off);
  op_result do_get_perms(op_context& ctx, std::string_view path);
  op_result do_set_perms(op_context& ctx, std::string_view path,
                         const std::vector<std::string>& args);
  // transactions (engine_tx.cpp)
  op_result do_transaction_start(connection& conn, const request& req);
  op_result do_transaction_end(connection& conn, const request& req);
  [[nodiscard]] bool conflicts(const tx_state& tx) const;
  void commit(tx_state& tx);

  engine_sink& sink_;
  engine_limits limits_;
  store store_;
  std::uint64_t gen_ = 0;
  conn_id next_conn_ = 1;
  std::uint32_t next_tx_ = 1;
  std::map<conn_id, connection> conns_;
  std::map<domid, std::uint64_t> domains_;  // introduced domid -> mfn
  std::map<std::string, std::vector<permission>, std::less<>> special_perms_;
};

}  // namespace unetback::xs::sim
