#include "unetback/service/privileges.hpp"

#include <cap-ng.h>
#include <grp.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <memory>
#include <stdexcept>
#include <string>
#include <system_error>
#include <vector>

namespace unetback::service {

namespace {

// Highest capability number we check in the bounding set (kernel 6.x: 40).
constexpr int max_capability = 63;

std::size_t thread_count() {
  std::error_code ec;
  std::size_t n = 0;
  for (std::filesystem::directory_iterator it("/proc/self/task", ec), end; !ec && it != end;
       it.increment(ec)) {
    ++n;
  }
  return n;
}

bool contains(std::span<const int> set, int cap) {
  return std::find(set.begin(), set.end(), cap) != set.end();
}

std::string effective_text() {
  const std::unique_ptr<char, decltype(&std::free)> text(
      capng_print_caps_text(CAPNG_PRINT_BUFFER, CAPNG_EFFECTIVE), &std::free);
  return text ? std::string(text.get()) : std::string("none");
}

void set_no_new_privs() {
  if (::prctl(PR_SET_NO_NEW_PRIVS, 1UL, 0UL, 0UL, 0UL) != 0) {
    throw std::system_error(errno, std::generic_category(), "prctl(PR_SET_NO_NEW_PRIVS)");
  }
}

// The new state: `keep` (where permitted now) in effective, permitted and bounding.
void build_state(std::span<const int> keep) {
  std::vector<int> permitted;
  for (const int cap : keep) {
    if (capng_have_capability(CAPNG_PERMITTED, static_cast<unsigned>(cap)) == 1) {
      permitted.push_back(cap);
    }
  }
  capng_clear(CAPNG_SELECT_ALL);
  const auto sets =
      static_cast<capng_type_t>(CAPNG_EFFECTIVE | CAPNG_PERMITTED | CAPNG_BOUNDING_SET);
  for (const int cap : permitted) {
    if (capng_update(CAPNG_ADD, sets, static_cast<unsigned>(cap)) != 0) {
      throw std::runtime_error("capng_update failed for capability " + std::to_string(cap));
    }
  }
}

void check_bounding_set(std::span<const int> keep) {
  capng_get_caps_process();
  for (int cap = 0; cap <= max_capability; ++cap) {
    if (capng_have_capability(CAPNG_BOUNDING_SET, static_cast<unsigned>(cap)) == 1 &&
        !contains(keep, cap)) {
      throw std::runtime_error(std::string("cannot shrink the capability bounding set (") +
                               capng_capability_to_name(static_cast<unsigned>(cap)) +
                               " is in it) without CAP_SETPCAP; run as root or under "
                               "unetbackd.service (CapabilityBoundingSet=)");
    }
  }
}

void apply(capng_select_t what, const char* step) {
  if (const int rc = capng_apply(what); rc != 0) {
    throw std::runtime_error(std::string("capng_apply (") + step + ") failed (" +
                             std::to_string(rc) + "): " + std::strerror(errno));
  }
}

void check_errno(int rc, const std::string& what) {
  if (rc != 0) {
    throw std::system_error(errno, std::generic_category(), what);
  }
}

// Leaves uid 0 for `a`, keeping the permitted set (PR_SET_KEEPCAPS); the kernel
// clears the effective set at the uid change; the caller then applies the kept
// set, a subset of the permitted one.
void switch_identity(const account& a) {
  check_errno(::prctl(PR_SET_KEEPCAPS, 1UL, 0UL, 0UL, 0UL), "prctl(PR_SET_KEEPCAPS)");
  check_errno(::initgroups(a.name.c_str(), a.gid), "initgroups " + a.name);
  check_errno(::setresgid(a.gid, a.gid, a.gid), "setresgid " + std::to_string(a.gid));
  check_errno(::setresuid(a.uid, a.uid, a.uid), "setresuid " + std::to_string(a.uid));
  check_errno(::prctl(PR_SET_KEEPCAPS, 0UL, 0UL, 0UL, 0UL), "prctl(PR_SET_KEEPCAPS, 0)");
}

}  // namespace

std::string drop_privileges(std::span<const int> keep, const account* run_as) {
  if (const auto threads = thread_count(); threads > 1) {
    throw std::logic_error("drop_privileges: " + std::to_string(threads) +
                           " threads exist; capabilities are per thread, so it must run "
                           "before any thread starts");
  }
  capng_get_caps_process();
  if (capng_have_capabilities(CAPNG_SELECT_CAPS) == CAPNG_NONE) {
    if (run_as != nullptr) {
      throw std::runtime_error("switching to user " + run_as->name +
                               " needs root: this process has no capabilities");
    }
    set_no_new_privs();
    return "none";
  }
  const bool can_drop_bounds = capng_have_capability(CAPNG_EFFECTIVE, CAP_SETPCAP) == 1;
  const bool can_switch = capng_have_capability(CAPNG_EFFECTIVE, CAP_SETUID) == 1 &&
                          capng_have_capability(CAPNG_EFFECTIVE, CAP_SETGID) == 1;
  if (run_as != nullptr && !can_switch) {
    throw std::runtime_error("switching to user " + run_as->name +
                             " needs CAP_SETUID and CAP_SETGID: start unetbackd as root");
  }
  build_state(keep);
  // The bounding set while CAP_SETPCAP is still effective; shrinking it does not
  // take CAP_SETUID/CAP_SETGID from the effective set the switch needs.
  if (can_drop_bounds) {
    apply(CAPNG_SELECT_BOUNDS, "bounding set");
  }
  if (run_as != nullptr) {
    switch_identity(*run_as);
  }
  apply(static_cast<capng_select_t>(CAPNG_SELECT_CAPS | CAPNG_SELECT_AMBIENT), "capability sets");
  if (!can_drop_bounds) {
    check_bounding_set(keep);
  }
  set_no_new_privs();
  capng_get_caps_process();
  return effective_text();
}

}  // namespace unetback::service
