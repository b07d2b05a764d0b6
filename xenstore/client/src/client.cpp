#include <cerrno>
#include <cstdlib>
#include <memory>
#include <string>
#include <utility>

#include "c_ptr.hpp"
#include "unetback/rings/ids.hpp"
#include "unetback/xs/client.hpp"

namespace unetback::xs {

// ---- transaction --------------------------------------------------------

namespace {

xs_transaction_t start_transaction(xs_handle* h) {
  errno = 0;
  const xs_transaction_t t = xs_transaction_start(h);
  if (t == XBT_NULL) {
    throw_errno("transaction_start", "(transaction)");
  }
  return t;
}

xs_handle* open_handle() {
  errno = 0;
  xs_handle* h = xs_open(0);
  if (h == nullptr) {
    const char* env = std::getenv("XENSTORED_PATH");
    throw_errno("open", env != nullptr ? env : "(default xenstored socket)");
  }
  return h;
}

}  // namespace

transaction::transaction(xs_handle* h) : node_ops(h, start_transaction(h)) {}

transaction::~transaction() {
  abort();
}

bool transaction::commit() {
  open_ = false;
  errno = 0;
  if (xs_transaction_end(handle_, tx_, false)) {
    return true;
  }
  if (errno == EAGAIN) {
    return false;
  }
  throw_errno("transaction_end", "(transaction)");
}

void transaction::abort() noexcept {
  if (open_) {
    open_ = false;
    xs_transaction_end(handle_, tx_, true);
  }
}

// ---- client -------------------------------------------------------------

// Two connections, because libxenstore's reader thread (started by the first
// xs_watch) closes the socket when it hits EOF while a request failing on the
// same handle closes it too: xenstored dying mid-request meant a double close
// that could hit an fd another thread had just opened. Requests go on
// `handle_`, which never gets a reader thread; watches on `watch_handle_`.
client::handle_pair client::open_pair() {
  handle_pair fresh{open_handle(), nullptr};
  try {
    fresh.watches = open_handle();
  } catch (...) {
    xs_close(fresh.requests);
    throw;
  }
  return fresh;
}

client::client() : client(open_pair()) {}

client::client(handle_pair handles) noexcept
    : node_ops(handles.requests, XBT_NULL), watch_handle_(handles.watches) {}

client client::open(const std::string& socket_path) {
  // setenv is not thread-safe: only called during single-threaded startup.
  if (::setenv("XENSTORED_PATH", socket_path.c_str(), 1) != 0) {
    throw_errno("setenv XENSTORED_PATH", socket_path);
  }
  return client();
}

client::~client() {
  close_handles();
}

client::client(client&& other) noexcept
    : node_ops(std::exchange(other.handle_, nullptr), XBT_NULL),
      watch_handle_(std::exchange(other.watch_handle_, nullptr)),
      generation_(other.generation_),
      lost_(other.lost_) {}

client& client::operator=(client&& other) noexcept {
  if (this != &other) {
    close_handles();
    handle_ = std::exchange(other.handle_, nullptr);
    watch_handle_ = std::exchange(other.watch_handle_, nullptr);
    generation_ = other.generation_ + 1;
    lost_ = other.lost_;
  }
  return *this;
}

void client::close_handles() noexcept {
  // xs_close cancels and joins the reader thread before closing its socket.
  if (watch_handle_ != nullptr) {
    xs_close(std::exchange(watch_handle_, nullptr));
  }
  if (handle_ != nullptr) {
    xs_close(std::exchange(handle_, nullptr));
  }
}

void client::reconnect() {
  const handle_pair fresh = open_pair();  // throws before the old pair is touched
  close_handles();
  handle_ = fresh.requests;
  watch_handle_ = fresh.watches;
  ++generation_;
  lost_ = false;
}

bool client::alive() noexcept {
  if (handle_ == nullptr) {
    return false;
  }
  // libxenstore closes a connection whose socket hit EOF or an error; every
  // later request then fails (EBADF/EINVAL). "domid" always exists.
  unsigned int len = 0;
  errno = 0;
  const c_ptr<void> value(xs_read(handle_, XBT_NULL, "domid", &len));
  if (value == nullptr && errno != ENOENT && errno != EACCES) {
    lost_ = true;
  }
  return !lost_;
}

std::string client::get_domain_path(domid d) {
  errno = 0;
  std::unique_ptr<char, decltype(&std::free)> path(xs_get_domain_path(handle_, d.value()),
                                                   &std::free);
  if (!path) {
    throw_errno("get_domain_path", std::to_string(d.value()));
  }
  return std::string(path.get());
}

domid client::own_domid() {
  // Relative "domid" resolves to /local/domain/<our id>/domid (written by
  // xen-init-dom0 for dom0 and by the toolstack for driver domains).
  const auto value = read("domid");
  if (!value) {
    throw error(ENOENT, "read", "domid");
  }
  // DOMID_FIRST_RESERVED (0x7FF0) and above are not real domains.
  const auto id = parse_decimal(*value, domid_max);
  if (!id) {
    throw error(EINVAL, "parse", "domid");
  }
  return domid{static_cast<std::uint16_t>(*id)};
}

}  // namespace unetback::xs
