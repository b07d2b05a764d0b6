#include "queue_state.hpp"

#include <fcntl.h>
#include <spdlog/spdlog.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <new>
#include <system_error>

#include "unetback/util/private_file.hpp"

namespace unetback::datapath {
namespace {

constexpr std::size_t state_bytes = sizeof(persistent_queue_state);

[[noreturn]] void fail(const std::string& what) {
  throw std::system_error(errno, std::generic_category(), what);
}

void* map_state(const std::string& file) {
  if (file.empty()) {
    void* p =
        ::mmap(nullptr, state_bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    return p == MAP_FAILED ? nullptr : p;
  }
  const int fd = util::open_private_file(file, O_RDWR | O_CREAT);
  struct stat st {};
  if (::fstat(fd, &st) != 0 || (st.st_size != static_cast<off_t>(state_bytes) &&
                                ::ftruncate(fd, static_cast<off_t>(state_bytes)) != 0)) {
    const int e = errno;
    ::close(fd);
    errno = e == 0 ? EINVAL : e;
    fail("size " + file);
  }
  void* p = ::mmap(nullptr, state_bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  ::close(fd);
  return p == MAP_FAILED ? nullptr : p;
}

bool same_connection(const persistent_queue_state& s, const queue_config& c) {
  return s.magic == persistent_queue_state::magic_value && s.layout_size == state_bytes &&
         s.frontend == c.frontend.value() && s.tx_ring_ref == c.tx_ring_ref.value() &&
         s.rx_ring_ref == c.rx_ring_ref.value();
}

// Counters are read back as the plain snapshot (same fields, same order)
// before the atomics are constructed in place again.
static_assert(sizeof(queue_counters) == sizeof(queue_counters_snapshot));

void restore_counters(queue_counters& c, const queue_counters_snapshot& s) {
#define UNETBACK_RESTORE_COUNTER(name, doc) c.name.store(s.name, std::memory_order_relaxed);
  UNETBACK_QUEUE_COUNTERS(UNETBACK_RESTORE_COUNTER)
#undef UNETBACK_RESTORE_COUNTER
}

}  // namespace

queue_state::queue_state(const queue_config& config) {
  void* mem = nullptr;
  try {
    mem = map_state(config.state_file);
    if (mem == nullptr) {
      fail("map " + config.state_file);
    }
  } catch (const std::system_error& e) {
    spdlog::warn("{}: queue state kept in memory only (a restart will not carry it over): {}",
                 config.name, e.what());
    mem = map_state({});
  }
  if (mem == nullptr) {
    throw std::bad_alloc();
  }
  const auto* old = static_cast<const persistent_queue_state*>(mem);
  carried_over_ = config.resume && !config.state_file.empty() && same_connection(*old, config);
  queue_counters_snapshot counters{};
  std::uint64_t tx_words = 0;
  std::uint64_t rx_words = 0;
  if (carried_over_) {
    std::memcpy(&counters, static_cast<const void*>(&old->counters), sizeof(counters));
    tx_words = old->tx.base_and_count.load(std::memory_order_relaxed);
    rx_words = old->rx.base_and_count.load(std::memory_order_relaxed);
  }
  // The journals' slots are left as they are: replay() reads them.
  state_ = static_cast<persistent_queue_state*>(mem);
  state_->magic = persistent_queue_state::magic_value;
  state_->layout_size = state_bytes;
  state_->frontend = config.frontend.value();
  state_->tx_ring_ref = config.tx_ring_ref.value();
  state_->rx_ring_ref = config.rx_ring_ref.value();
  new (&state_->tx.base_and_count) std::atomic<std::uint64_t>(tx_words);
  new (&state_->rx.base_and_count) std::atomic<std::uint64_t>(rx_words);
  restore_counters(*new (&state_->counters) queue_counters(), counters);
}

queue_state::~queue_state() {
  ::munmap(state_, state_bytes);
}

void queue_state::discard(const std::string& state_file) {
  if (!state_file.empty()) {
    ::unlink(state_file.c_str());
  }
}

}  // namespace unetback::datapath
