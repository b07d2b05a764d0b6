// The vif state machine, exhaustively: every backend state x frontend state x
// online x hotplug x validity x data path x failure x presence, checked
// against invariants, plus the lifecycles the toolstack and guests drive.

#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include "unetback/control/state_machine.hpp"

namespace unetback::control {
namespace {

using S = xenbus_state;
using A = vif_action;

bool has(const vif_step& st, A a) {
  return std::find(st.actions.begin(), st.actions.end(), a) != st.actions.end();
}
std::ptrdiff_t pos(const vif_step& st, A a) {
  return std::find(st.actions.begin(), st.actions.end(), a) - st.actions.begin();
}

std::vector<vif_snapshot> every_snapshot() {
  std::vector<vif_snapshot> all;
  for (int b = 0; b <= 8; ++b) {
    for (int f = 0; f <= 8; ++f) {
      for (unsigned bits = 0; bits < 128; ++bits) {
        vif_snapshot s;
        s.backend = static_cast<S>(b);
        s.frontend = static_cast<S>(f);
        s.online = (bits & 1U) != 0;
        s.hotplug_connected = (bits & 2U) != 0;
        s.backend_valid = (bits & 4U) != 0;
        s.data_connected = (bits & 8U) != 0;
        s.failed = (bits & 16U) != 0;
        s.present = (bits & 32U) != 0;
        s.disabled = (bits & 64U) != 0;
        all.push_back(s);
      }
    }
  }
  return all;
}

// What the vif does with a step when every action succeeds.
vif_snapshot apply(vif_snapshot s, const vif_step& st) {
  for (A a : st.actions) {
    switch (a) {
      case A::write_init_wait:
        s.backend = S::init_wait;
        break;
      case A::publish_connected:
        s.backend = S::connected;
        break;
      case A::write_closing:
        s.backend = S::closing;
        break;
      case A::write_closed:
        s.backend = S::closed;
        break;
      case A::connect:
        s.data_connected = true;
        break;
      case A::disconnect:
        s.data_connected = false;
        break;
      default:
        break;
    }
  }
  return s;
}

// Linux set_backend_state() edges, plus xenbus_dev_fatal's error edge from
// Initialising and the recovery from states we never write.
bool allowed_edge(S from, S to) {
  static const std::set<std::pair<S, S>> edges = {
      {S::initialising, S::init_wait}, {S::init_wait, S::connected}, {S::initialising, S::closed},
      {S::init_wait, S::closing},      {S::connected, S::closing},   {S::closing, S::closed},
      {S::closed, S::init_wait},       {S::closed, S::closing},      {S::initialising, S::closing}};
  if (from == to) {
    return true;
  }
  const bool foreign = from == S::unknown || from == S::initialised || from == S::reconfiguring ||
                       from == S::reconfigured;
  return edges.contains({from, to}) || (foreign && to == S::closing);
}

TEST(VifStateMachine, EveryStepFollowsAnAllowedEdge) {
  for (const vif_snapshot& s : every_snapshot()) {
    const vif_step st = next_step(s);
    if (!s.present) {
      continue;  // nothing is written to a vanished directory
    }
    EXPECT_TRUE(allowed_edge(s.backend, st.next))
        << name_of(s.backend) << " -> " << name_of(st.next) << " (frontend " << name_of(s.frontend)
        << ")";
    EXPECT_EQ(apply(s, st).backend, st.actions.empty() ? s.backend : st.next);
  }
}

TEST(VifStateMachine, DataPathStopsBeforeAnyClosingWrite) {
  for (const vif_snapshot& s : every_snapshot()) {
    const vif_step st = next_step(s);
    for (A a : {A::write_closing, A::write_closed, A::destroy}) {
      if (s.data_connected && has(st, a)) {
        ASSERT_TRUE(has(st, A::disconnect));
        EXPECT_LT(pos(st, A::disconnect), pos(st, a));
      }
    }
  }
}

TEST(VifStateMachine, ConnectedIsPublishedOnlyWithHotplugAndARunningDataPath) {
  for (const vif_snapshot& s : every_snapshot()) {
    if (has(next_step(s), A::publish_connected)) {
      EXPECT_TRUE(s.hotplug_connected && s.data_connected && s.online && !s.failed &&
                  s.backend_valid && s.present);
      EXPECT_EQ(s.frontend, S::connected);
      EXPECT_EQ(s.backend, S::init_wait);
    }
  }
}

TEST(VifStateMachine, ConnectOnlyForAConnectedFrontendInInitWaitOrResumingConnected) {
  for (const vif_snapshot& s : every_snapshot()) {
    if (has(next_step(s), A::connect)) {
      EXPECT_EQ(s.frontend, S::connected);
      EXPECT_TRUE(s.backend == S::init_wait || s.backend == S::connected);
      EXPECT_TRUE(s.online && !s.failed && s.backend_valid && !s.data_connected && s.present &&
                  !s.disabled);
    }
  }
}

TEST(VifStateMachine, DisabledVifNeverRunsADataPathNorChangesItsState) {
  for (const vif_snapshot& s : every_snapshot()) {
    if (!s.disabled || s.frontend != S::connected || !s.online || s.failed || !s.backend_valid ||
        !s.present || (s.backend != S::connected && s.backend != S::init_wait)) {
      continue;
    }
    const vif_step st = next_step(s);
    EXPECT_FALSE(has(st, A::connect));
    EXPECT_EQ(has(st, A::disconnect), s.data_connected);
    EXPECT_EQ(apply(s, st).backend, s.backend);
  }
}

TEST(VifStateMachine, TapExistsBeforeInitWaitIsWritten) {
  for (const vif_snapshot& s : every_snapshot()) {
    const vif_step st = next_step(s);
    if (has(st, A::write_init_wait)) {
      ASSERT_TRUE(has(st, A::create_tap));
      EXPECT_LT(pos(st, A::create_tap), pos(st, A::write_init_wait));
      EXPECT_TRUE(s.online && !s.failed && s.backend_valid);
      if (s.backend == S::initialising) {
        EXPECT_LT(pos(st, A::advertise_features), pos(st, A::write_init_wait));
      }
    }
  }
}

TEST(VifStateMachine, DestroyOnlyWhenGoneOrOfflineAndClosed) {
  for (const vif_snapshot& s : every_snapshot()) {
    const vif_step st = next_step(s);
    if (has(st, A::destroy)) {
      EXPECT_TRUE(!s.present || (!s.online && st.next == S::closed))
          << name_of(s.backend) << "/" << name_of(s.frontend);
    }
  }
}

TEST(VifStateMachine, VanishedBackendDirectoryIsDestroyedAtOnce) {
  for (vif_snapshot s : every_snapshot()) {
    s.present = false;
    EXPECT_TRUE(has(next_step(s), A::destroy));
  }
}

TEST(VifStateMachine, EverySnapshotSettlesWithinFiveSteps) {
  for (vif_snapshot s : every_snapshot()) {
    bool settled = false;
    for (int i = 0; i < 5 && !settled; ++i) {
      const vif_step st = next_step(s);
      settled = st.actions.empty() || has(st, A::destroy);
      s = apply(s, st);
    }
    EXPECT_TRUE(settled) << name_of(s.backend) << "/" << name_of(s.frontend);
  }
}

// A Closing frontend is waited for (it writes Closed next); libxl's removal
// deletes the directories after its timeout, which ends it (present = false).
TEST(VifStateMachine, OfflineWithInactiveFrontendAlwaysEndsDestroyed) {
  for (vif_snapshot s : every_snapshot()) {
    if (s.online || s.frontend == S::init_wait || s.frontend == S::initialised ||
        s.frontend == S::connected || (s.frontend == S::closing && s.backend_valid)) {
      continue;
    }
    bool destroyed = false;
    for (int i = 0; i < 6 && !destroyed; ++i) {
      const vif_step st = next_step(s);
      destroyed = has(st, A::destroy);
      s = apply(s, st);
    }
    EXPECT_TRUE(destroyed);
  }
}

// ---- lifecycles ---------------------------------------------------------

vif_snapshot fresh() {
  vif_snapshot s;
  s.backend = S::initialising;
  s.frontend = S::initialising;
  return s;
}

// A running vif (data path up, hotplug done) whose frontend is now in `frontend`.
vif_snapshot connected_with(S frontend) {
  vif_snapshot s = fresh();
  s.backend = S::connected;
  s.frontend = frontend;
  s.data_connected = true;
  s.hotplug_connected = true;
  return s;
}

TEST(VifLifecycle, NewDeviceCreatesTapAdvertisesAndWaits) {
  const vif_step st = next_step(fresh());
  EXPECT_EQ(st.actions, (std::vector<A>{A::create_tap, A::advertise_features, A::write_init_wait}));
  EXPECT_EQ(st.next, S::init_wait);
}

TEST(VifLifecycle, ConnectedPendingUntilHotplugStatusConnected) {
  vif_snapshot s = fresh();
  s.backend = S::init_wait;
  s.frontend = S::connected;
  EXPECT_EQ(next_step(s).actions, std::vector<A>{A::connect});
  s.data_connected = true;
  EXPECT_TRUE(next_step(s).actions.empty());  // pending
  s.hotplug_connected = true;
  EXPECT_EQ(next_step(s).actions, std::vector<A>{A::publish_connected});
}

TEST(VifLifecycle, FrontendInitialisedIsIgnoredLikeLinux) {
  vif_snapshot s = fresh();
  s.backend = S::init_wait;
  s.frontend = S::initialised;
  EXPECT_TRUE(next_step(s).actions.empty());
}

TEST(VifLifecycle, ToolstackUnplugWaitsForTheFrontendThenCloses) {
  vif_snapshot s = fresh();
  s.backend = S::closing;  // libxl: online=0, state=5
  s.online = false;
  s.frontend = S::connected;
  s.data_connected = true;
  s.hotplug_connected = true;
  EXPECT_EQ(next_step(s).actions, std::vector<A>{A::disconnect});
  s.data_connected = false;
  EXPECT_TRUE(next_step(s).actions.empty());  // frontend still active
  s.frontend = S::closing;
  EXPECT_TRUE(next_step(s).actions.empty());  // and Closing: Closed is its to write
  s.frontend = S::closed;
  EXPECT_EQ(next_step(s).actions, (std::vector<A>{A::write_closed, A::destroy}));
}

// xenbus_reset_frontend() (a kexec or kdump kernel): the frontend writes
// Closing and waits for the backend's Closing, then writes Closed and waits
// for the backend's Closed, then Initialising for a second connection.
TEST(VifLifecycle, FrontendResetHandshakeGetsClosingThenClosedThenASecondConnection) {
  vif_snapshot s = connected_with(S::closing);
  EXPECT_EQ(next_step(s).actions, (std::vector<A>{A::disconnect, A::write_closing}));
  s = apply(s, next_step(s));
  ASSERT_EQ(s.backend, S::closing);
  EXPECT_TRUE(next_step(s).actions.empty());  // not Closed before the frontend is
  s.frontend = S::closed;
  EXPECT_EQ(next_step(s).actions, std::vector<A>{A::write_closed});
  s = apply(s, next_step(s));
  s.frontend = S::initialising;
  EXPECT_EQ(next_step(s).actions, (std::vector<A>{A::create_tap, A::write_init_wait}));
}

TEST(VifLifecycle, DomainDestroyWithVanishedFrontendClosesImmediately) {
  vif_snapshot s = fresh();
  s.backend = S::closing;
  s.online = false;
  s.frontend = S::unknown;
  s.data_connected = true;
  EXPECT_EQ(next_step(s).actions, std::vector<A>{A::disconnect});
  s.data_connected = false;
  EXPECT_EQ(next_step(s).actions, (std::vector<A>{A::write_closed, A::destroy}));
}

TEST(VifLifecycle, FrontendClosedWithOnlineKeepsTheDeviceAndRearms) {
  vif_snapshot s = connected_with(S::closed);
  EXPECT_EQ(next_step(s).actions, (std::vector<A>{A::disconnect, A::write_closing}));
  s.backend = S::closing;
  s.data_connected = false;
  EXPECT_EQ(next_step(s).actions, std::vector<A>{A::write_closed});
  s.backend = S::closed;
  EXPECT_TRUE(next_step(s).actions.empty());  // online: stay, keep the TAP
  s.frontend = S::initialising;
  EXPECT_EQ(next_step(s).actions, (std::vector<A>{A::create_tap, A::write_init_wait}));
}

TEST(VifLifecycle, FrontendResetWhileConnectedWalksClosingClosedInitWait) {
  vif_snapshot s = fresh();
  s.backend = S::connected;
  s.frontend = S::initialising;
  s.data_connected = true;
  s.hotplug_connected = true;
  std::vector<S> path;
  for (int i = 0; i < 5; ++i) {
    const vif_step st = next_step(s);
    if (st.actions.empty()) {
      break;
    }
    s = apply(s, st);
    path.push_back(s.backend);
  }
  EXPECT_EQ(path, (std::vector<S>{S::closing, S::closed, S::init_wait}));
  EXPECT_FALSE(s.data_connected);
}

TEST(VifLifecycle, ConnectFailureGoesClosingAndWaitsForTheFrontend) {
  vif_snapshot s = fresh();
  s.backend = S::init_wait;
  s.frontend = S::connected;
  s.failed = true;
  EXPECT_EQ(next_step(s).actions, std::vector<A>{A::write_closing});
  s.backend = S::closing;
  EXPECT_TRUE(next_step(s).actions.empty());
  s.frontend = S::closed;
  EXPECT_EQ(next_step(s).actions, std::vector<A>{A::write_closed});
  s.backend = S::closed;
  EXPECT_TRUE(next_step(s).actions.empty());  // no re-arm while failed
}

TEST(VifLifecycle, DataPathFaultWhileConnectedDisconnectsAndCloses) {
  vif_snapshot s = fresh();
  s.backend = S::connected;
  s.frontend = S::connected;
  s.data_connected = true;
  s.hotplug_connected = true;
  s.failed = true;
  EXPECT_EQ(next_step(s).actions, (std::vector<A>{A::disconnect, A::write_closing}));
}

TEST(VifLifecycle, ConnectedWithoutDataPathAfterRestartResumesStayingConnected) {
  vif_snapshot s = fresh();
  s.backend = S::connected;
  s.frontend = S::connected;
  const vif_step st = next_step(s);
  EXPECT_EQ(st.actions, std::vector<A>{A::connect});
  EXPECT_EQ(st.next, S::connected);
  s = apply(s, st);
  EXPECT_TRUE(next_step(s).actions.empty());
}

TEST(VifLifecycle, ResumeThatFailsClosesTheVif) {
  vif_snapshot s = fresh();
  s.backend = S::connected;
  s.frontend = S::connected;
  s.failed = true;  // connect found revoked grants or ports
  EXPECT_EQ(next_step(s).actions, std::vector<A>{A::write_closing});
}

TEST(VifLifecycle, OperatorDisableStopsTheDataPathAndEnableResumesIt) {
  vif_snapshot s = fresh();
  s.backend = S::connected;
  s.frontend = S::connected;
  s.hotplug_connected = true;
  s.data_connected = true;
  s.disabled = true;
  EXPECT_EQ(next_step(s).actions, std::vector<A>{A::disconnect});
  s.data_connected = false;
  EXPECT_TRUE(next_step(s).actions.empty());  // stays Connected, carrier off
  s.disabled = false;
  EXPECT_EQ(next_step(s).actions, std::vector<A>{A::connect});
}

TEST(VifLifecycle, DisabledVifPendingHotplugDoesNotConnect) {
  vif_snapshot s = fresh();
  s.backend = S::init_wait;
  s.frontend = S::connected;
  s.disabled = true;
  EXPECT_TRUE(next_step(s).actions.empty());
  s.disabled = false;
  EXPECT_EQ(next_step(s).actions, std::vector<A>{A::connect});
}

TEST(VifLifecycle, DisabledVifStillClosesWhenTheFrontendCloses) {
  vif_snapshot s = fresh();
  s.backend = S::connected;
  s.frontend = S::closing;
  s.disabled = true;
  EXPECT_EQ(next_step(s).actions, std::vector<A>{A::write_closing});
}

TEST(VifLifecycle, InvalidBackendKeysCloseWithoutWaitingForTheFrontend) {
  vif_snapshot s = fresh();
  s.backend_valid = false;
  EXPECT_EQ(next_step(s).actions, std::vector<A>{A::write_closing});
  s.backend = S::closing;
  s.frontend = S::connected;
  EXPECT_EQ(next_step(s).actions, std::vector<A>{A::write_closed});
  s.backend = S::closed;
  s.frontend = S::initialising;
  EXPECT_TRUE(next_step(s).actions.empty());  // never re-armed
}

TEST(VifLifecycle, NewDeviceWithFrontendAlreadyGoneIsClosed) {
  vif_snapshot s = fresh();
  s.frontend = S::unknown;
  EXPECT_EQ(next_step(s).actions, std::vector<A>{A::write_closed});
}

TEST(VifLifecycle, ForeignBackendStateIsTreatedAsAClosingRequest) {
  vif_snapshot s = fresh();
  s.backend = S::reconfiguring;
  s.frontend = S::connected;
  s.data_connected = true;
  EXPECT_EQ(next_step(s).actions, (std::vector<A>{A::disconnect, A::write_closing}));
}

}  // namespace
}  // namespace unetback::control
