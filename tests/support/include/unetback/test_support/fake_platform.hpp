#pragma once
// An in-process fake of the Xen platform for data-path tests: the guest's
// pages live in this process, the grant table copies between them and our
// buffers with fault injection (bad ref, revoked grant, read-only grant,
// forced failure), and event channels follow xenevtchn semantics (a pending
// port is masked until unmasked; kicks while masked are latched). Like Xen
// and the sim, the grant table answers only for the guest that owns the
// memory (a segment or mapping naming another domain fails with
// GNTST_bad_domain / ESRCH, as does binding its event channel) and refuses to write a read-only
// grant (a writable mapping of one fails with EPERM).

#include <sys/eventfd.h>
#include <unistd.h>
#include <xen/grant_table.h>

#include <array>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <vector>

#include "unetback/platform/platform.hpp"

namespace unetback::test_support {

/// One page of guest memory.
struct alignas(4096) guest_page {
  std::array<std::byte, 4096> bytes{};
};

/// The guest's granted pages, by grant ref.
class fake_guest_memory {
 public:
  /// The domain the tests' frontends are, unless told otherwise.
  static constexpr domid default_owner{7};

  explicit fake_guest_memory(domid owner = default_owner) : owner_(owner) {}
  /// The guest whose grants these are.
  [[nodiscard]] domid owner() const { return owner_; }

  /// A new zeroed page granted to the backend; returns its ref.
  std::uint32_t grant_page() {
    std::lock_guard lock(mu_);
    const std::uint32_t ref = next_ref_++;
    pages_[ref] = std::make_unique<guest_page>();
    return ref;
  }
  /// The page behind `ref` (the guest's own view), or nullptr.
  std::byte* page(std::uint32_t ref) {
    std::lock_guard lock(mu_);
    const auto it = pages_.find(ref);
    return it == pages_.end() || revoked_.count(ref) != 0 ? nullptr : it->second->bytes.data();
  }
  /// The guest's own view even of a revoked page (for test setup).
  std::byte* raw_page(std::uint32_t ref) {
    std::lock_guard lock(mu_);
    return pages_.at(ref)->bytes.data();
  }
  void revoke(std::uint32_t ref) {
    std::lock_guard lock(mu_);
    revoked_.insert(ref);
  }
  void make_readonly(std::uint32_t ref) {
    std::lock_guard lock(mu_);
    readonly_.insert(ref);
  }
  [[nodiscard]] bool readonly(std::uint32_t ref) {
    std::lock_guard lock(mu_);
    return readonly_.count(ref) != 0;
  }

  std::atomic<int> copy_calls{0};
  std::atomic<int> copy_segments{0};
  std::atomic<bool> fail_whole_call{false};

 private:
  domid owner_;
  std::mutex mu_;
  std::uint32_t next_ref_ = 8;
  std::map<std::uint32_t, std::unique_ptr<guest_page>> pages_;
  std::set<std::uint32_t> revoked_;
  std::set<std::uint32_t> readonly_;
};

class fake_mapping final : public platform::grant_mapping {
 public:
  explicit fake_mapping(std::byte* p) : p_(p) {}
  [[nodiscard]] void* data() const override { return p_; }
  [[nodiscard]] std::size_t page_count() const override { return 1; }

 private:
  std::byte* p_;
};

class fake_grant_table final : public platform::grant_table {
 public:
  explicit fake_grant_table(fake_guest_memory& mem) : mem_(mem) {}

  std::unique_ptr<platform::grant_mapping> map(domid granter, std::span<const grant_ref> refs,
                                               bool writable, std::error_code& ec) override {
    if (granter != mem_.owner()) {
      ec = std::error_code(ESRCH, std::generic_category());
      return nullptr;
    }
    std::byte* p = refs.size() == 1 ? mem_.page(refs[0].value()) : nullptr;
    if (p == nullptr) {
      ec = std::error_code(ENOENT, std::generic_category());
      return nullptr;
    }
    if (writable && mem_.readonly(refs[0].value())) {
      ec = std::error_code(EPERM, std::generic_category());
      return nullptr;
    }
    ec.clear();
    return std::make_unique<fake_mapping>(p);
  }

  bool copy(std::span<platform::grant_copy_segment> batch) override {
    ++mem_.copy_calls;
    mem_.copy_segments += static_cast<int>(batch.size());
    if (mem_.fail_whole_call) {
      for (auto& s : batch) {
        s.status = GNTST_general_error;
      }
      return false;
    }
    for (auto& s : batch) {
      s.status = copy_one(s);
    }
    return true;
  }

 private:
  std::int16_t copy_one(platform::grant_copy_segment& s) {
    std::byte* src = static_cast<std::byte*>(s.source.virt);
    std::byte* dst = static_cast<std::byte*>(s.dest.virt);
    if ((s.flags & GNTCOPY_source_gref) != 0) {
      if (s.source.foreign.domid != mem_.owner().value()) {
        return GNTST_bad_domain;
      }
      std::byte* page = mem_.page(s.source.foreign.ref);
      if (page == nullptr) {
        return GNTST_bad_gntref;
      }
      if (s.source.foreign.offset + s.len > 4096U) {
        return GNTST_bad_copy_arg;
      }
      src = page + s.source.foreign.offset;
    }
    if ((s.flags & GNTCOPY_dest_gref) != 0) {
      if (s.dest.foreign.domid != mem_.owner().value()) {
        return GNTST_bad_domain;
      }
      std::byte* page = mem_.page(s.dest.foreign.ref);
      if (page == nullptr) {
        return GNTST_bad_gntref;
      }
      if (mem_.readonly(s.dest.foreign.ref)) {
        return GNTST_permission_denied;
      }
      if (s.dest.foreign.offset + s.len > 4096U) {
        return GNTST_bad_copy_arg;
      }
      dst = page + s.dest.foreign.offset;
    }
    std::memcpy(dst, src, s.len);
    return GNTST_okay;
  }

  fake_guest_memory& mem_;
};

/// xenevtchn-like: pending() hands out a port and masks it; kicks while
/// masked are latched and delivered on unmask.
class fake_event_channel final : public platform::event_channel {
 public:
  static constexpr std::uint32_t local_offset = 100;

  /// `remote`: the only domain whose ports may be bound.
  explicit fake_event_channel(domid remote = fake_guest_memory::default_owner)
      : remote_(remote), fd_(::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC)) {}
  ~fake_event_channel() override { ::close(fd_); }

  evtchn_port bind_interdomain(domid remote, evtchn_port remote_port,
                               std::error_code& ec) override {
    std::lock_guard lock(mu_);
    if (remote != remote_) {
      ec = std::error_code(ESRCH, std::generic_category());
      return evtchn_port{};
    }
    if (remote_port.value() == refuse_port) {
      ec = std::error_code(EINVAL, std::generic_category());
      return evtchn_port{};
    }
    ec.clear();
    const evtchn_port local{remote_port.value() + local_offset};
    bound_.insert(local.value());
    return local;
  }
  void unbind(evtchn_port local) override {
    std::lock_guard lock(mu_);
    bound_.erase(local.value());
    ++unbinds;
  }
  void notify(evtchn_port local) override {
    std::lock_guard lock(mu_);
    ++notifies_[local.value()];
  }
  [[nodiscard]] int fd() const override { return fd_; }
  std::optional<evtchn_port> pending() override {
    std::lock_guard lock(mu_);
    if (queue_.empty()) {
      std::uint64_t v = 0;
      (void)!::read(fd_, &v, sizeof(v));
      return std::nullopt;
    }
    const std::uint32_t p = queue_.front();
    queue_.pop_front();
    masked_.insert(p);
    return evtchn_port{p};
  }
  void unmask(evtchn_port local) override {
    std::lock_guard lock(mu_);
    ++unmasks_;
    masked_.erase(local.value());
    if (latched_.erase(local.value()) != 0) {
      enqueue(local.value());
    }
  }

  /// The guest kicks its end `remote_port`.
  void kick(std::uint32_t remote_port) {
    std::lock_guard lock(mu_);
    const std::uint32_t local = remote_port + local_offset;
    if (bound_.count(local) == 0) {
      return;
    }
    if (masked_.count(local) != 0) {
      latched_.insert(local);
      return;
    }
    enqueue(local);
  }
  /// Kicks the backend sent to the guest's `remote_port`.
  int notifies_to(std::uint32_t remote_port) {
    std::lock_guard lock(mu_);
    return notifies_[remote_port + local_offset];
  }
  int unmask_count() {
    std::lock_guard lock(mu_);
    return unmasks_;
  }
  bool is_bound(std::uint32_t remote_port) {
    std::lock_guard lock(mu_);
    return bound_.count(remote_port + local_offset) != 0;
  }

  std::uint32_t refuse_port = 0xFFFFFFFF;
  int unbinds = 0;

 private:
  void enqueue(std::uint32_t local) {
    if (std::find(queue_.begin(), queue_.end(), local) == queue_.end()) {
      queue_.push_back(local);
    }
    const std::uint64_t one = 1;
    (void)!::write(fd_, &one, sizeof(one));
  }

  domid remote_;
  int fd_;
  std::mutex mu_;
  std::set<std::uint32_t> bound_;
  std::set<std::uint32_t> masked_;
  std::set<std::uint32_t> latched_;
  std::deque<std::uint32_t> queue_;
  std::map<std::uint32_t, int> notifies_;
  int unmasks_ = 0;
};

/// Opens fakes over one guest's memory and remembers the event channels it
/// handed out (the queue owns them).
class fake_platform : public platform::platform {
 public:
  explicit fake_platform(fake_guest_memory& mem) : mem_(mem) {}
  [[nodiscard]] std::string_view name() const override { return "fake"; }
  [[nodiscard]] domid self() const override { return domid{0}; }
  std::unique_ptr<::unetback::platform::grant_table> open_grant_table() override {
    return std::make_unique<fake_grant_table>(mem_);
  }
  std::unique_ptr<::unetback::platform::event_channel> open_event_channel() override {
    auto ch = std::make_unique<fake_event_channel>(mem_.owner());
    channels.push_back(ch.get());
    return ch;
  }

  std::vector<fake_event_channel*> channels;

 private:
  fake_guest_memory& mem_;
};

}  // namespace unetback::test_support
