// A vif driven end to end through sim-xenstored: the toolstack writes what
// libxl writes, the test plays netfront and the hotplug script, and the
// supervisor runs with a fake TAP and a fake data path.

#include <gtest/gtest.h>

#include <boost/asio/io_context.hpp>
#include <thread>

#include "../xenstore/sim_fixture.hpp"
#include "fakes.hpp"
#include "toolstack.hpp"
#include "unetback/control/supervisor.hpp"

namespace unetback::control::testing {
namespace {

using xs::testing::run_until;

class VifOnSimXenstore : public xs::testing::sim_xenstore_test {
 protected:
  void SetUp() override {
    sim_xenstore_test::SetUp();
    tool_.emplace(dom0());
    daemon_.emplace(dom0());
    guest_.emplace(guest(domid{1}));
  }
  void TearDown() override {
    sup_.reset();
    guest_.reset();
    daemon_.reset();
    tool_.reset();
    sim_xenstore_test::TearDown();
  }

  void start(vif_options opts = {}) {
    opts.max_queues = 4;
    sup_.emplace(io_.get_executor(), *daemon_, queues_, taps_, supervisor_options{opts, {}});
    sup_->start();
  }
  std::optional<std::string> be(const std::string& key) {
    return tool_->read(vif_.backend_path() + "/" + key);
  }
  bool wait_state(const char* state) {
    return run_until(io_, [&] { return be("state") == state; });
  }
  // Runs the io_context a little and checks the state did not move.
  bool stays(const char* state) {
    run_until(
        io_, [] { return false; }, std::chrono::milliseconds(150));
    return be("state") == state;
  }
  // Up to Connected: add, InitWait, frontend connects, hotplug, Connected.
  void bring_up(unsigned queues = 2) {
    libxl_add(*tool_, vif_);
    ASSERT_TRUE(wait_state("2"));
    netfront_connect(*guest_, vif_, queues);
    ASSERT_TRUE(run_until(
        io_, [&] { return !queues_.created.empty() && queues_.created.back()->started; }));
    hotplug_connected(*tool_, vif_);
    ASSERT_TRUE(wait_state("4"));
  }
  /// From Closed, the frontend re-initialises and connects: a second connection.
  void reinitialise_and_connect() {
    netfront_state(*guest_, vif_, 1);
    ASSERT_TRUE(wait_state("2"));
    netfront_connect(*guest_, vif_, 1);
    ASSERT_TRUE(wait_state("4"));
    ASSERT_EQ(queues_.created.size(), 2U);
    EXPECT_TRUE(queues_.created[1]->started);
  }
  /// Queue 0 of the running connection reports a fault; the vif goes Closing.
  void fault_queue0(datapath::fault_source source, const char* detail) {
    queues_.created[0]->on_fault(datapath::fault{source, detail, queue_index{0}});
    ASSERT_TRUE(wait_state("5"));
  }

  boost::asio::io_context io_;
  std::optional<xs::client> tool_;
  std::optional<xs::client> daemon_;
  std::optional<xs::client> guest_;
  fake_tap_factory taps_;
  fake_queue_factory queues_;
  std::optional<supervisor> sup_;
  vif_spec vif_;
};

TEST_F(VifOnSimXenstore, TapExistsBeforeInitWaitAndFeaturesAreAdvertised) {
  std::optional<std::string> state_at_tap_creation;
  taps_.on_create = [&](const tap_request&) { state_at_tap_creation = be("state"); };
  start();
  libxl_add(*tool_, vif_);
  ASSERT_TRUE(wait_state("2"));
  ASSERT_EQ(taps_.created.size(), 1U);
  EXPECT_EQ(state_at_tap_creation, "1");
  EXPECT_EQ(taps_.created[0]->name, "vif1.0");
  EXPECT_EQ(taps_.created[0]->mtu, 1500U);
  EXPECT_EQ(be("feature-rx-copy"), "1");
  EXPECT_EQ(be("feature-rx-flip"), "0");
  EXPECT_EQ(be("feature-split-event-channels"), "1");
  EXPECT_EQ(be("feature-ctrl-ring"), "1");
  EXPECT_EQ(be("multi-queue-max-queues"), "4");
  EXPECT_EQ(sup_->self(), domid{0});
  // The guest may read what we advertise (inherited from the backend dir).
  EXPECT_EQ(guest_->read(vif_.backend_path() + "/feature-sg"), "1");
}

// Linux xenvif_carrier_on: a frontend without feature-sg takes each frame in
// one RX slot, so with a larger MTU every larger frame would be lost.
TEST_F(VifOnSimXenstore, MtuIsLoweredTo1500ForAFrontendWithoutSg) {
  vif_.mtu = 9000;
  start();
  libxl_add(*tool_, vif_);
  ASSERT_TRUE(wait_state("2"));
  ASSERT_EQ(taps_.created.at(0)->mtu, 9000U);
  netfront_connect(*guest_, vif_, 1, std::nullopt, frontend_sg::off);
  ASSERT_TRUE(
      run_until(io_, [&] { return !queues_.created.empty() && queues_.created.back()->started; }));
  EXPECT_EQ(taps_.created.at(0)->mtu, 1500U);
  EXPECT_FALSE(queues_.created.back()->configs.at(0).features.sg);
}

TEST_F(VifOnSimXenstore, MtuStaysForAFrontendWithSg) {
  vif_.mtu = 9000;
  start();
  bring_up(1);
  EXPECT_EQ(taps_.created.at(0)->mtu, 9000U);
}

TEST_F(VifOnSimXenstore, ConnectedWaitsForHotplugStatus) {
  start();
  libxl_add(*tool_, vif_);
  ASSERT_TRUE(wait_state("2"));
  netfront_connect(*guest_, vif_, 2);
  ASSERT_TRUE(
      run_until(io_, [&] { return !queues_.created.empty() && queues_.created[0]->started; }));
  const auto& q = *queues_.created[0];
  ASSERT_EQ(q.configs.size(), 2U);
  EXPECT_EQ(q.taps, 2U);
  EXPECT_EQ(q.configs[1].tx_ring_ref, grant_ref{1034});
  EXPECT_EQ(q.configs[1].rx_port, evtchn_port{18});
  EXPECT_TRUE(taps_.created[0]->carrier);
  EXPECT_TRUE(stays("2"));  // Connected pending
  hotplug_connected(*tool_, vif_);
  EXPECT_TRUE(wait_state("4"));
}

TEST_F(VifOnSimXenstore, UnplugGoesClosedThenTheDeviceIsDestroyed) {
  start();
  bring_up();
  libxl_remove(*tool_, vif_, removal::detach);
  ASSERT_TRUE(run_until(io_, [&] { return queues_.created[0]->stopped.load(); }));
  EXPECT_TRUE(stays("5"));  // the frontend is still Connected
  netfront_state(*guest_, vif_, 5);
  netfront_state(*guest_, vif_, 6);
  ASSERT_TRUE(wait_state("6"));
  ASSERT_TRUE(run_until(io_, [&] { return taps_.created[0]->removed; }));
  EXPECT_EQ(be("hotplug-status"), std::nullopt);  // removed only now
  EXPECT_EQ(sup_->vif_count(), 0U);
  libxl_delete(*tool_, vif_);
  run_until(
      io_, [] { return false; }, std::chrono::milliseconds(100));
  EXPECT_EQ(sup_->vif_count(), 0U);
}

TEST_F(VifOnSimXenstore, DomainDestroyClosesWithoutTheFrontend) {
  start();
  bring_up();
  const auto t0 = std::chrono::steady_clock::now();
  libxl_remove(*tool_, vif_, removal::destroy);  // frontend dir gone too
  ASSERT_TRUE(wait_state("6"));
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(2));
  EXPECT_TRUE(queues_.created[0]->stopped);
  EXPECT_TRUE(run_until(io_, [&] { return taps_.created[0]->removed; }));
}

TEST_F(VifOnSimXenstore, ReconnectAfterClosedKeepsHotplugStatus) {
  start();
  bring_up();
  netfront_state(*guest_, vif_, 5);
  netfront_state(*guest_, vif_, 6);
  ASSERT_TRUE(wait_state("6"));
  EXPECT_TRUE(queues_.created[0]->stopped);
  EXPECT_EQ(be("hotplug-status"), "connected");
  EXPECT_FALSE(taps_.created[0]->removed);
  EXPECT_EQ(sup_->vif_count(), 1U);
  netfront_state(*guest_, vif_, 1);  // the driver re-initialises
  ASSERT_TRUE(wait_state("2"));
  netfront_connect(*guest_, vif_, 1);
  ASSERT_TRUE(wait_state("4"));  // straight to Connected: hotplug already done
  ASSERT_EQ(queues_.created.size(), 2U);
  EXPECT_TRUE(queues_.created[1]->started);
  EXPECT_EQ(queues_.created[1]->configs.size(), 1U);
  EXPECT_EQ(taps_.created.size(), 1U);  // same TAP
}

// xenbus_reset_frontend() in a kexec or kdump kernel: Closing, wait for the
// backend's Closing; Closed, wait for its Closed; Initialising, then a second
// connection on the same device (docs/protocol.md §1).
TEST_F(VifOnSimXenstore, FrontendResetIsAnsweredStepByStepAndReconnects) {
  start();
  bring_up();
  netfront_state(*guest_, vif_, 5);
  ASSERT_TRUE(wait_state("5"));
  EXPECT_TRUE(stays("5"));
  EXPECT_TRUE(queues_.created[0]->stopped);
  netfront_state(*guest_, vif_, 6);
  ASSERT_TRUE(wait_state("6"));
  reinitialise_and_connect();
}

TEST_F(VifOnSimXenstore, BadFrontendKeysWriteAnErrorNodeAndCloseThisVifOnly) {
  start();
  libxl_add(*tool_, vif_);
  vif_spec other = vif_;
  other.devid = 1;
  libxl_add(*tool_, other);
  ASSERT_TRUE(wait_state("2"));
  netfront_connect(*guest_, vif_, 1, "999");  // a hostile netfront asks for 999 queues
  ASSERT_TRUE(wait_state("5"));
  const auto err = tool_->read("/local/domain/0/error/backend/vif/1/0/error");
  ASSERT_TRUE(err);
  EXPECT_NE(err->find("multi-queue-num-queues"), std::string::npos) << *err;
  EXPECT_EQ(tool_->read(other.backend_path() + "/state"), "2");  // unaffected
  netfront_state(*guest_, vif_, 6);
  ASSERT_TRUE(wait_state("6"));
  EXPECT_TRUE(stays("6"));  // no re-arm until the frontend re-initialises
}

TEST_F(VifOnSimXenstore, AFailedVifsErrorNodeGoesWithTheDevice) {
  start();
  libxl_add(*tool_, vif_);
  ASSERT_TRUE(wait_state("2"));
  netfront_connect(*guest_, vif_, 1, "999");
  ASSERT_TRUE(wait_state("5"));
  ASSERT_TRUE(tool_->read("/local/domain/0/error/backend/vif/1/0/error").has_value());
  libxl_remove(*tool_, vif_, removal::destroy);
  ASSERT_TRUE(run_until(io_, [&] { return sup_->vif_count() == 0; }));
  // a later device with the same <D>/<N> must not inherit the old reason
  EXPECT_EQ(tool_->read("/local/domain/0/error/backend/vif/1/0/error"), std::nullopt);
}

TEST_F(VifOnSimXenstore, DataPathStartFailureClosesTheVif) {
  queues_.fail_start = true;
  start();
  libxl_add(*tool_, vif_);
  ASSERT_TRUE(wait_state("2"));
  netfront_connect(*guest_, vif_, 1);
  ASSERT_TRUE(wait_state("5"));
  EXPECT_TRUE(tool_->read("/local/domain/0/error/backend/vif/1/0/error").has_value());
}

TEST_F(VifOnSimXenstore, QueueFaultFromAWorkerDisablesTheVif) {
  start();
  bring_up();
  auto q = queues_.created[0];
  std::thread worker([&] {
    q->on_fault(
        datapath::fault{datapath::fault_source::tx_ring, "req_prod overflow", queue_index{1}});
  });
  worker.join();
  ASSERT_TRUE(wait_state("5"));
  EXPECT_TRUE(q->stopped);
  EXPECT_FALSE(taps_.created[0]->carrier);
  const auto err = tool_->read("/local/domain/0/error/backend/vif/1/0/error");
  ASSERT_TRUE(err);
  EXPECT_NE(err->find("queue 1: TX ring: req_prod overflow"), std::string::npos);
  const vif_status v = sup_->status().vifs.at(0);
  ASSERT_TRUE(v.failure);
  EXPECT_EQ(v.failure->kind, datapath::fault_kind::frontend);
  EXPECT_EQ(v.disabled_reason(), "frontend fault: queue 1: TX ring: req_prod overflow");
}

// The fault stops the data path; the first fault of a series costs no wait,
// so the frontend's Closed -> Initialising gets a fresh handshake and a second
// connection, and the fault is gone from the status. Between the two, the
// status shows what the stopped connection counted.
TEST_F(VifOnSimXenstore, AFaultedVifConnectsAgainOnceItsFrontendReinitialises) {
  start();
  bring_up();
  fault_queue0(datapath::fault_source::tx_ring, "req_prod overflow");
  netfront_state(*guest_, vif_, 6);
  ASSERT_TRUE(wait_state("6"));
  const vif_status stopped = sup_->status().vifs.at(0);
  ASSERT_TRUE(stopped.failure);
  ASSERT_EQ(stopped.queues.size(), queues_.created[0]->configs.size());
  EXPECT_EQ(stopped.queues.at(0).counters.tx_packets, 7U);
  reinitialise_and_connect();
  EXPECT_FALSE(queues_.created[1]->configs.at(0).resume);  // a fresh handshake: fresh rings
  EXPECT_FALSE(sup_->status().vifs.at(0).failure);
}

// A TAP deleted under the workers is the host's doing: the operator is not
// told the guest broke the protocol.
TEST_F(VifOnSimXenstore, TapGoneIsAHostFaultNotTheGuests) {
  start();
  bring_up();
  fault_queue0(datapath::fault_source::tap, "TAP interface gone");
  const vif_status v = sup_->status().vifs.at(0);
  ASSERT_TRUE(v.failure);
  EXPECT_EQ(v.failure->kind, datapath::fault_kind::host);
  EXPECT_TRUE(v.disabled());
  EXPECT_EQ(v.disabled_reason(), "host fault: queue 0: TAP: TAP interface gone");
}

// The data path gets the control ring as the frontend wrote it, with the
// name its thread and its saved hash file go by.
TEST_F(VifOnSimXenstore, ControlRingReachesTheDataPathWithItsThreadName) {
  start();
  libxl_add(*tool_, vif_);
  ASSERT_TRUE(wait_state("2"));
  guest_->write(vif_.frontend_path() + "/ctrl-ring-ref", "40");
  guest_->write(vif_.frontend_path() + "/event-channel-ctrl", "19");
  netfront_connect(*guest_, vif_, 2);
  ASSERT_TRUE(
      run_until(io_, [&] { return !queues_.created.empty() && queues_.created[0]->started; }));
  const auto& ctrl = queues_.created[0]->ctrl_ring;
  ASSERT_TRUE(ctrl.has_value());
  EXPECT_EQ(ctrl->ref, grant_ref{40});
  EXPECT_EQ(ctrl->port, evtchn_port{19});
  EXPECT_EQ(ctrl->thread_name, "vif1.0-ctrl");
}

TEST_F(VifOnSimXenstore, NoControlRingWhenTheFrontendWroteNone) {
  start();
  bring_up();
  EXPECT_FALSE(queues_.created[0]->ctrl_ring.has_value());
}

// The control-ring thread only posts; the control thread saves the guest's
// hash configuration and steers, and never for a connection that is gone.
TEST_F(VifOnSimXenstore, HashPublishedOnTheControlRingIsAppliedOnTheControlThread) {
  start();
  bring_up();
  auto first = queues_.created[0];
  std::thread ctrl_ring([&] { first->on_hash_published(); });
  ctrl_ring.join();
  EXPECT_EQ(first->hash_applied.load(), 0) << "applied on the publishing thread";
  ASSERT_TRUE(run_until(io_, [&] { return first->hash_applied.load() == 1; }));

  fault_queue0(datapath::fault_source::tx_ring, "req_prod overflow");
  first->on_hash_published();  // late: the connection it belongs to is gone
  EXPECT_TRUE(stays("5"));
  EXPECT_EQ(first->hash_applied.load(), 1);
}

TEST_F(VifOnSimXenstore, TapCreationFailureNeverReachesInitWait) {
  taps_.fail = true;
  start();
  libxl_add(*tool_, vif_);
  ASSERT_TRUE(run_until(io_, [&] { return be("state") == "6" || be("state") == "5"; }));
  EXPECT_TRUE(tool_->read("/local/domain/0/error/backend/vif/1/0/error").has_value());
}

TEST_F(VifOnSimXenstore, WithoutHotplugTheDaemonBridgesAndConnects) {
  vif_options opts;
  opts.wait_for_hotplug = false;
  start(opts);
  libxl_add(*tool_, vif_);
  ASSERT_TRUE(wait_state("2"));
  netfront_connect(*guest_, vif_, 1);
  ASSERT_TRUE(wait_state("4"));
  EXPECT_EQ(taps_.created[0]->bridges, std::vector<std::string>{"xenbr0"});
  EXPECT_TRUE(taps_.created[0]->up);
}

// The hotplug script renames the TAP (vifname=) before it brings it up, and
// Linux refuses to rename an interface that is up: the daemon leaves it down.
TEST_F(VifOnSimXenstore, WithHotplugTheTapIsLeftDownForTheScript) {
  start();
  vif_.vifname = "gnet0";
  libxl_add(*tool_, vif_);
  ASSERT_TRUE(wait_state("2"));
  ASSERT_EQ(taps_.created.size(), 1U);
  EXPECT_FALSE(taps_.created[0]->up);
  EXPECT_EQ(taps_.created[0]->name, "vif1.0");
  EXPECT_EQ(taps_.created[0]->vifname, std::optional<std::string>("gnet0"));
  tool_->write(vif_.backend_path() + "/hotplug-status", "connected");
  netfront_connect(*guest_, vif_, 1);
  ASSERT_TRUE(wait_state("4"));
  EXPECT_FALSE(taps_.created[0]->up);
  EXPECT_TRUE(taps_.created[0]->bridges.empty());
}

TEST_F(VifOnSimXenstore, OnlyNewOnlineDevicesAreTakenAfterStartup) {
  start();
  run_until(
      io_, [] { return false; }, std::chrono::milliseconds(50));
  libxl_add(*tool_, vif_);
  tool_->write(vif_.backend_path() + "/online", "0");
  EXPECT_TRUE(stays("1"));
  EXPECT_EQ(sup_->vif_count(), 0U);
}

TEST_F(VifOnSimXenstore, ShutdownWalksEveryVifToClosed) {
  start();
  bring_up();
  sup_->shutdown();
  EXPECT_EQ(be("state"), "6");
  EXPECT_TRUE(queues_.created[0]->stopped);
  EXPECT_FALSE(taps_.created[0]->removed);  // persistent TAP kept for a restart
}

TEST_F(VifOnSimXenstore, DescribeListsVifsAndQueueCounters) {
  start();
  bring_up(2);
  const daemon_status st = sup_->status();
  ASSERT_EQ(st.vifs.size(), 1U);
  EXPECT_EQ(st.vifs[0].state, xenbus_state::connected);
  ASSERT_EQ(st.vifs[0].queues.size(), 2U);
  EXPECT_EQ(st.vifs[0].queues[1].index, queue_index{1});
}

TEST_F(VifOnSimXenstore, RestartResumesAConnectedDeviceWithoutLeavingConnected) {
  start();
  bring_up(2);
  EXPECT_FALSE(queues_.created[0]->configs[0].resume);  // a fresh connect
  sup_.reset();                                         // crash: nothing written
  taps_.created.clear();
  queues_.created.clear();
  start();
  ASSERT_TRUE(
      run_until(io_, [&] { return !queues_.created.empty() && queues_.created.back()->started; }));
  EXPECT_TRUE(stays("4"));
  EXPECT_EQ(tool_->read(vif_.frontend_path() + "/state"), "4");
  ASSERT_EQ(taps_.created.size(), 1U);  // the persistent TAP, attached again
  EXPECT_TRUE(taps_.created[0]->carrier);
  const auto& configs = queues_.created[0]->configs;
  ASSERT_EQ(configs.size(), 2U);
  for (const auto& c : configs) {
    EXPECT_TRUE(c.resume);  // indices from the shared rings, one kick
  }
  EXPECT_EQ(configs[1].tx_ring_ref, grant_ref{1034});  // re-read from XenStore
}

TEST_F(VifOnSimXenstore, RestartWhoseResumeFailsClosesSoTheFrontendReconnects) {
  start();
  bring_up();
  sup_.reset();
  queues_.fail_start = true;  // e.g. the frontend revoked its ring grants
  start();
  ASSERT_TRUE(wait_state("5"));
  EXPECT_TRUE(tool_->read("/local/domain/0/error/backend/vif/1/0/error").has_value());
  netfront_state(*guest_, vif_, 6);
  ASSERT_TRUE(wait_state("6"));
  queues_.fail_start = false;
  netfront_state(*guest_, vif_, 1);
  ASSERT_TRUE(wait_state("2"));
  netfront_connect(*guest_, vif_, 1);
  EXPECT_TRUE(wait_state("4"));
}

TEST_F(VifOnSimXenstore, ShutdownKeepingVifsLeavesThemConnectedForTheNextDaemon) {
  start();
  bring_up();
  sup_->shutdown(vif_exit::keep);
  EXPECT_EQ(be("state"), "4");
  EXPECT_TRUE(queues_.created[0]->stopped);
  EXPECT_FALSE(taps_.created[0]->removed);
  sup_.reset();
  start();
  ASSERT_TRUE(run_until(io_, [&] { return queues_.created.size() == 2; }));
  EXPECT_TRUE(queues_.created[1]->started);
  EXPECT_TRUE(queues_.created[1]->configs[0].resume);
  EXPECT_TRUE(stays("4"));
}

TEST_F(VifOnSimXenstore, OperatorDisableStopsQueuesCarrierOffStateStaysConnected) {
  start();
  bring_up(2);
  sup_->disable(vif_id{domid{1}, 0}, "operator");
  EXPECT_TRUE(queues_.created[0]->stopped);
  EXPECT_FALSE(taps_.created[0]->carrier);
  EXPECT_TRUE(stays("4"));
  const vif_status v = sup_->status().vifs.at(0);
  EXPECT_TRUE(v.disabled());
  EXPECT_EQ(v.disabled_reason(), "operator");
  EXPECT_EQ(v.state, xenbus_state::connected);
  sup_->disable(vif_id{domid{1}, 0}, "operator");  // idempotent
  EXPECT_EQ(queues_.created.size(), 1U);
}

TEST_F(VifOnSimXenstore, EnableResumesADisabledVifLikeARestart) {
  start();
  bring_up(2);
  sup_->disable(vif_id{domid{1}, 0}, "operator");
  EXPECT_TRUE(sup_->enable(vif_id{domid{1}, 0}));
  ASSERT_EQ(queues_.created.size(), 2U);
  EXPECT_TRUE(queues_.created[1]->started);
  EXPECT_TRUE(queues_.created[1]->configs[0].resume);
  EXPECT_TRUE(taps_.created[0]->carrier);
  EXPECT_TRUE(stays("4"));
  EXPECT_FALSE(sup_->status().vifs.at(0).disabled());
  EXPECT_FALSE(sup_->enable(vif_id{domid{1}, 0}));  // nothing to enable
  EXPECT_EQ(queues_.created.size(), 2U);
}

TEST_F(VifOnSimXenstore, DisabledVifStillClosesWhenTheFrontendCloses) {
  start();
  bring_up();
  sup_->disable(vif_id{domid{1}, 0}, "operator");
  netfront_state(*guest_, vif_, 5);
  EXPECT_TRUE(wait_state("5"));
  EXPECT_TRUE(stays("5"));  // Closed is the frontend's to write first
  netfront_state(*guest_, vif_, 6);
  EXPECT_TRUE(wait_state("6"));
}

TEST_F(VifOnSimXenstore, EnableClearsAFrontendFault) {
  start();
  bring_up();
  fault_queue0(datapath::fault_source::rx_ring, "req_prod overflow");
  const vif_status v = sup_->status().vifs.at(0);
  EXPECT_TRUE(v.disabled());
  EXPECT_NE(v.disabled_reason().find("frontend fault"), std::string::npos);
  EXPECT_TRUE(sup_->enable(vif_id{domid{1}, 0}));
  EXPECT_FALSE(sup_->status().vifs.at(0).failure.has_value());
  netfront_state(*guest_, vif_, 6);
  ASSERT_TRUE(wait_state("6"));
  netfront_state(*guest_, vif_, 1);  // the frontend reconnects: served again
  ASSERT_TRUE(wait_state("2"));
}

TEST_F(VifOnSimXenstore, DisableOrEnableOfAnUnknownVifIsAnError) {
  start();
  EXPECT_THROW(sup_->disable(vif_id{domid{7}, 0}, "operator"), std::invalid_argument);
  EXPECT_THROW((void)sup_->enable(vif_id{domid{7}, 0}), std::invalid_argument);
}

TEST_F(VifOnSimXenstore, DynamicMulticastControlFollowsTheFrontend) {
  start();
  bring_up(1);
  auto q = queues_.created[0];
  guest_->write(vif_.frontend_path() + "/request-multicast-control", "1");
  ASSERT_TRUE(run_until(io_, [&] { return q->multicast == true; }));
  guest_->write(vif_.frontend_path() + "/request-multicast-control", "0");
  ASSERT_TRUE(run_until(io_, [&] { return q->multicast == false; }));
  guest_->write(vif_.frontend_path() + "/request-multicast-control", "7");
  ASSERT_TRUE(run_until(io_, [&] { return q->multicast == true; }));  // non-zero: on (Linux)
  guest_->write(vif_.frontend_path() + "/request-multicast-control", "on");
  EXPECT_TRUE(wait_state("5"));  // not a number: a protocol violation closes the vif
}

// `rate` is watched (Linux's netback too): a new value applies to the running
// vif, a malformed one or none means unlimited, nothing disconnects.
TEST_F(VifOnSimXenstore, RateChangesApplyToTheRunningVif) {
  start();
  bring_up(2);
  auto q = queues_.created[0];
  tool_->write(vif_.backend_path() + "/rate", "125000,20000");
  ASSERT_TRUE(run_until(io_, [&] { return q->rate_bytes == 125000U; }));
  EXPECT_EQ(q->rate_interval, std::chrono::microseconds(20000));
  tool_->write(vif_.backend_path() + "/rate", "10Mb/s");
  ASSERT_TRUE(run_until(io_, [&] { return q->rate_bytes == 0U; }));
  tool_->write(vif_.backend_path() + "/rate", "250000,50000");
  ASSERT_TRUE(run_until(io_, [&] { return q->rate_bytes == 250000U; }));
  tool_->rm(vif_.backend_path() + "/rate");
  ASSERT_TRUE(run_until(io_, [&] { return q->rate_bytes == 0U; }));
  EXPECT_EQ(be("state"), "4");
  EXPECT_EQ(queues_.created.size(), 1U);
}

TEST_F(VifOnSimXenstore, DriverDomainServesItsOwnBackendPath) {
  // The daemon runs in domain 5, not dom0: it must learn that from XenStore.
  xs::client driver = guest(domid{5});
  vif_spec v;
  v.backend = domid{5};
  libxl_add(*tool_, v);
  supervisor sup(io_.get_executor(), driver, queues_, taps_, supervisor_options{});
  sup.start();
  EXPECT_EQ(sup.self(), domid{5});
  ASSERT_TRUE(run_until(io_, [&] { return tool_->read(v.backend_path() + "/state") == "2"; }));
  netfront_connect(*guest_, v, 1, "77");  // rejected: the error goes under domain 5
  ASSERT_TRUE(run_until(io_, [&] { return tool_->read(v.backend_path() + "/state") == "5"; }));
  EXPECT_TRUE(tool_->read("/local/domain/5/error/backend/vif/1/0/error").has_value());
  EXPECT_EQ(tool_->read("/local/domain/0/error/backend/vif/1/0/error"), std::nullopt);
}

}  // namespace
}  // namespace unetback::control::testing
