// Connect-time attacks through the frontend's XenStore keys (docs/protocol.md
// §1.7-1.8, §6.2 items 1-5): absurd multi-queue-num-queues, numbers with
// trailing junk, signs, hex or huge values, missing queue-N directories, ring
// refs without ports, half-split event channels, request-rx-copy=0, a huge
// xdp-headroom, a control ring without its port, and refs/ports that parse but
// cannot be mapped/bound. Each is refused for this vif only (backend Closing,
// error node naming the key); after each, the frontend re-initialises and the
// vif re-arms; at the end a valid connect must work.

#include <fmt/format.h>

#include "harness/hostile_fixture.hpp"

namespace unetback::hostile {
namespace {

using edits = manual_frontend::edits;

std::string describe(const edits& e) {
  std::string out;
  for (const auto& [k, v] : e) {
    out += k + "=" + (v ? "'" + *v + "'" : std::string("(removed)")) + " ";
  }
  return out;
}

class XenStoreKeys : public hostile_test {
 protected:
  hostile_options hostile_config() override { return {4, true, true, true}; }
  // More queues than this machine's CPUs, so "3 queues, 2 directories" is
  // a consistency error rather than a range error. Each scenario refuses
  // dozens of connects in a row on purpose: no fault backoff (FaultLoop
  // tests it).
  world_options world_config() override {
    return {{"--max-queues", "4", "--fault-backoff-max-ms", "0"}};
  }

  /// Connects with `e` applied; expects a refusal whose error node contains
  /// `fragment`; re-arms the vif.
  void expect_refused(manual_frontend& m, const edits& e, const std::string& fragment) {
    SCOPED_TRACE(describe(e));
    w().xs().rm("/local/domain/0/error/backend/vif/2");
    m.connect(e);
    expect_connect_refused(fragment);
    ASSERT_TRUE(m.rearm()) << "the vif did not re-arm after a refused connect";
  }
  /// A valid connect works (the vif was not wedged by what came before).
  void expect_valid_connect(manual_frontend& m) {
    // The error node of the last refusal stays (as with Linux netback): clear
    // it, so a new one would show.
    w().xs().rm("/local/domain/0/error/backend/vif/2");
    m.connect();
    EXPECT_TRUE(guest().wait_backend_state({4})) << "a valid connect after the attacks failed";
    expect_vif_connected();
  }
  [[nodiscard]] unsigned max_queues() {
    return static_cast<unsigned>(
        std::stoul(w().read(world::backend_path(hostile_guest::id) + "/multi-queue-max-queues")
                       .value_or("1")));
  }
};

TEST_F(XenStoreKeys, AbsurdQueueCountsAreRefused) {
  manual_frontend m(guest(), 1, false, false);
  begin_attack();
  const std::string key = "multi-queue-num-queues";
  for (const std::string& v : {std::string("0"), std::to_string(max_queues() + 1),
                               std::string("4294967297"), std::string("99999999999999999999999")}) {
    expect_refused(m, {{key, v}}, key);
  }
  expect_valid_connect(m);
  expect_contained();
}

TEST_F(XenStoreKeys, NumbersWithJunkSignsOrHexAreRefused) {
  manual_frontend m(guest(), 1, false, false);
  begin_attack();
  const std::string key = "multi-queue-num-queues";
  for (const char* v : {"1x", " 1", "1 ", "+1", "-1", "0x1", "1.0", "", "1\n", "01a"}) {
    expect_refused(m, {{key, v}}, key);
  }
  for (const char* v : {"12abc", "-5", "0x10", "4294967296", "99999999999999999999"}) {
    expect_refused(m, {{"tx-ring-ref", v}}, "tx-ring-ref");
  }
  for (const char* v : {"0", "131072", "4294967295", "7 "}) {
    expect_refused(m, {{"event-channel", v}}, "event-channel");
  }
  expect_valid_connect(m);
  expect_contained();
}

TEST_F(XenStoreKeys, MissingOrExtraQueueDirectoriesAreRefused) {
  manual_frontend m(guest(), 2, false, false);
  begin_attack();
  expect_refused(m, {{"queue-1/tx-ring-ref", std::nullopt}}, "queue-1/tx-ring-ref");
  expect_refused(m,
                 {{"queue-1/tx-ring-ref", std::nullopt},
                  {"queue-1/rx-ring-ref", std::nullopt},
                  {"queue-1/event-channel", std::nullopt}},
                 "queue-1");
  expect_refused(m, {{"multi-queue-num-queues", "3"}}, "queue-2");
  expect_valid_connect(m);
  expect_contained();
}

TEST_F(XenStoreKeys, RingRefWithoutPortIsRefused) {
  manual_frontend m(guest(), 1, false, false);
  begin_attack();
  expect_refused(m, {{"event-channel", std::nullopt}}, "event-channel");
  expect_refused(m, {{"rx-ring-ref", std::nullopt}}, "rx-ring-ref");
  // One split key alone means the shared one, as for Linux: which is missing.
  expect_refused(m, {{"event-channel", std::nullopt}, {"event-channel-tx", "5"}}, "event-channel");
  expect_valid_connect(m);
  expect_contained();
}

// Half of a split pair falls back to the shared event-channel (Linux's
// netback does the same); without one, the connect is refused.
TEST_F(XenStoreKeys, HalfSplitEventChannelsWithoutASharedOneAreRefused) {
  manual_frontend m(guest(), 1, true, false);
  begin_attack();
  expect_refused(m, {{"event-channel-rx", std::nullopt}}, "event-channel");
  expect_refused(m, {{"event-channel-tx", std::nullopt}}, "event-channel");
  expect_valid_connect(m);
  expect_contained();
}

TEST_F(XenStoreKeys, BadFeatureValuesAreRefused) {
  manual_frontend m(guest(), 1, false, false);
  begin_attack();
  // Any non-zero number is a yes (xenbus_read_unsigned, as Linux reads them).
  for (const char* v : {"0", "yes", "", "4294967296"}) {
    expect_refused(m, {{"request-rx-copy", v}}, "request-rx-copy");
  }
  expect_refused(m, {{"request-rx-copy", std::nullopt}}, "request-rx-copy");
  expect_refused(m, {{"feature-sg", "on"}}, "feature-sg");
  for (const char* v : {"4096", "32767", "65536", "-1"}) {
    expect_refused(m, {{"xdp-headroom", v}}, "xdp-headroom");
  }
  expect_valid_connect(m);
  expect_contained();
}

TEST_F(XenStoreKeys, ControlRingWithoutItsPortIsRefused) {
  manual_frontend m(guest(), 1, false, true);
  begin_attack();
  expect_refused(m, {{"event-channel-ctrl", std::nullopt}}, "event-channel-ctrl");
  expect_refused(m, {{"ctrl-ring-ref", std::nullopt}}, "ctrl-ring-ref");
  expect_refused(m, {{"ctrl-ring-ref", "1x"}}, "ctrl-ring-ref");
  expect_valid_connect(m);
  expect_contained();
}

// Keys that parse but name grants/ports the backend cannot use (XSA-362/367:
// a map or bind failure is a per-device connect error, never an abort).
TEST_F(XenStoreKeys, UnusableRingRefsAndPortsAreRefused) {
  manual_frontend m(guest(), 1, false, false);
  sim::guest_domain& d = guest().domain();
  const grant_ref foreign = d.grant_access(d.alloc_page(), domid{7}, sim::grant_mode::read_write);
  const grant_ref read_only = d.grant_access(d.alloc_page(), domid{0}, sim::grant_mode::read_only);
  auto ev = d.open_event_channel();
  const evtchn_port foreign_port = ev->alloc_unbound(domid{7});
  begin_attack();
  for (const std::string& ref :
       {std::to_string(d.grant_count() - 1), std::string("3"), std::to_string(foreign.value()),
        std::to_string(read_only.value()), std::string("4294967295")}) {
    expect_refused(m, {{"tx-ring-ref", ref}}, "");
  }
  for (const std::string& port : {std::string("1000"), std::to_string(foreign_port.value())}) {
    expect_refused(m, {{"event-channel", port}}, "");
  }
  expect_valid_connect(m);
  expect_contained();
}

}  // namespace
}  // namespace unetback::hostile
