// Frontend key parsing, one test per guest behaviour.

#include <gtest/gtest.h>

#include <array>
#include <map>
#include <utility>

#include "key_map.hpp"
#include "unetback/control/frontend_keys.hpp"

namespace unetback::control {
namespace {

using keys = testing::key_map;
using testing::reader_of;

frontend_limits limits(unsigned max_queues = 4) {
  return frontend_limits{vif_id{domid{3}, 0}, max_queues, 512, {}};
}

// What Linux netfront writes for one queue with split channels.
keys single_queue() {
  return {{"tx-ring-ref", "8"},       {"rx-ring-ref", "9"},
          {"event-channel-tx", "15"}, {"event-channel-rx", "16"},
          {"request-rx-copy", "1"},   {"feature-rx-notify", "1"},
          {"feature-sg", "1"},        {"feature-gso-tcpv4", "1"},
          {"feature-gso-tcpv6", "1"}, {"feature-ipv6-csum-offload", "1"},
          {"xdp-headroom", "0"}};
}

// Two queues as measured in the Xen lab (NOTES.md).
keys two_queues() {
  keys k = single_queue();
  for (const char* key : {"tx-ring-ref", "rx-ring-ref", "event-channel-tx", "event-channel-rx"}) {
    k.erase(key);
  }
  k["multi-queue-num-queues"] = "2";
  k["queue-0/tx-ring-ref"] = "1032";
  k["queue-0/rx-ring-ref"] = "1033";
  k["queue-0/event-channel-tx"] = "15";
  k["queue-0/event-channel-rx"] = "16";
  k["queue-1/tx-ring-ref"] = "1034";
  k["queue-1/rx-ring-ref"] = "1035";
  k["queue-1/event-channel"] = "17";
  return k;
}

key_error error_of(const keys& k, unsigned max_queues = 4) {
  const auto r = parse_frontend_keys(reader_of(k), limits(max_queues));
  EXPECT_FALSE(r.has_value());
  return r.has_value() ? key_error{} : r.error();
}

TEST(FrontendKeys, LinuxSingleQueueFrontendIsAccepted) {
  const keys k = single_queue();
  const auto r = parse_frontend_keys(reader_of(k), limits());
  ASSERT_TRUE(r.has_value()) << r.error().message();
  ASSERT_EQ(r.value().queues.size(), 1U);
  const auto& q = r.value().queues[0];
  EXPECT_EQ(q.tx_ring_ref, grant_ref{8});
  EXPECT_EQ(q.rx_ring_ref, grant_ref{9});
  EXPECT_TRUE(q.split_event_channels);
  EXPECT_EQ(q.tx_port, evtchn_port{15});
  EXPECT_EQ(q.rx_port, evtchn_port{16});
  EXPECT_EQ(q.frontend, domid{3});
  EXPECT_EQ(q.name, "vif3.0-q0");
  EXPECT_TRUE(q.features.sg && q.features.rx_notify && q.features.gso_tcpv4);
  EXPECT_FALSE(q.features.no_csum_offload || q.features.multicast_control);
  EXPECT_FALSE(r.value().ctrl_ring);
}

TEST(FrontendKeys, LinuxTwoQueueFrontendIsAccepted) {
  const keys k = two_queues();
  const auto r = parse_frontend_keys(reader_of(k), limits());
  ASSERT_TRUE(r.has_value()) << r.error().message();
  ASSERT_EQ(r.value().queues.size(), 2U);
  EXPECT_EQ(r.value().queues[1].index, queue_index{1});
  EXPECT_EQ(r.value().queues[1].tx_ring_ref, grant_ref{1034});
  EXPECT_FALSE(r.value().queues[1].split_event_channels);  // each queue decides
  EXPECT_EQ(r.value().queues[1].tx_port, evtchn_port{17});
  EXPECT_EQ(r.value().queues[1].rx_port, evtchn_port{17});
  EXPECT_EQ(r.value().queues[1].name, "vif3.0-q1");
}

TEST(FrontendKeys, OldFrontendWithoutNumQueuesGetsOneQueue) {
  keys k = single_queue();
  k.erase("event-channel-tx");
  k.erase("event-channel-rx");
  k["event-channel"] = "5";
  const auto r = parse_frontend_keys(reader_of(k), limits());
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r.value().queues.size(), 1U);
  EXPECT_FALSE(r.value().queues[0].split_event_channels);
}

TEST(FrontendKeys, AbsurdNumQueuesIsRejected) {
  keys k = two_queues();
  k["multi-queue-num-queues"] = "4294967295";
  EXPECT_EQ(error_of(k).what, key_error::kind::out_of_range);
  k["multi-queue-num-queues"] = "5";  // above the advertised 4
  EXPECT_EQ(error_of(k).key, "multi-queue-num-queues");
}

TEST(FrontendKeys, ZeroQueuesIsRejected) {
  keys k = two_queues();
  k["multi-queue-num-queues"] = "0";
  EXPECT_EQ(error_of(k).what, key_error::kind::out_of_range);
}

TEST(FrontendKeys, QueueDirMissingIsRejected) {
  keys k = two_queues();
  k["multi-queue-num-queues"] = "3";
  const key_error e = error_of(k);
  EXPECT_EQ(e.what, key_error::kind::missing);
  EXPECT_EQ(e.key, "queue-2/tx-ring-ref");
}

TEST(FrontendKeys, FlatKeysDoNotStandInForQueueDirs) {
  keys k = two_queues();
  k.erase("queue-1/rx-ring-ref");
  k["rx-ring-ref"] = "77";
  EXPECT_EQ(error_of(k).key, "queue-1/rx-ring-ref");
}

TEST(FrontendKeys, TrailingJunkInRingRefIsRejected) {
  keys k = single_queue();
  k["tx-ring-ref"] = "8junk";
  const key_error e = error_of(k);
  EXPECT_EQ(e.what, key_error::kind::malformed);
  EXPECT_EQ(e.key, "tx-ring-ref");
}

TEST(FrontendKeys, NumbersWithSignSpaceOrHexAreRejected) {
  for (const char* bad : {"-1", "+8", " 8", "8 ", "0x8", "", "08a", "1e3"}) {
    keys k = single_queue();
    k["rx-ring-ref"] = bad;
    EXPECT_EQ(error_of(k).what, key_error::kind::malformed) << "'" << bad << "'";
  }
}

TEST(FrontendKeys, RingRefBeyond32BitsIsRejected) {
  keys k = single_queue();
  k["tx-ring-ref"] = "4294967296";
  EXPECT_EQ(error_of(k).what, key_error::kind::out_of_range);
}

TEST(FrontendKeys, MissingRingRefIsRejected) {
  keys k = single_queue();
  k.erase("rx-ring-ref");
  EXPECT_EQ(error_of(k).what, key_error::kind::missing);
}

TEST(FrontendKeys, RxCopyNotRequestedIsRejected) {
  keys k = single_queue();
  k.erase("request-rx-copy");
  EXPECT_EQ(error_of(k).key, "request-rx-copy");
  k["request-rx-copy"] = "0";
  EXPECT_EQ(error_of(k).what, key_error::kind::out_of_range);
  k["request-rx-copy"] = "2";  // any non-zero requests it (Linux)
  EXPECT_TRUE(parse_frontend_keys(reader_of(k), limits()).has_value());
}

// As Linux: either split key missing means the shared one.
TEST(FrontendKeys, OneSplitEventChannelAloneFallsBackToTheSharedOne) {
  keys k = single_queue();
  k.erase("event-channel-rx");
  k["event-channel"] = "5";
  const auto r = parse_frontend_keys(reader_of(k), limits());
  ASSERT_TRUE(r.has_value()) << r.error().message();
  EXPECT_FALSE(r.value().queues[0].split_event_channels);
  EXPECT_EQ(r.value().queues[0].tx_port, evtchn_port{5});
  EXPECT_EQ(r.value().queues[0].rx_port, evtchn_port{5});
  k.erase("event-channel");
  EXPECT_EQ(error_of(k).key, "event-channel");
}

TEST(FrontendKeys, NoEventChannelAtAllIsRejected) {
  keys k = single_queue();
  k.erase("event-channel-tx");
  k.erase("event-channel-rx");
  EXPECT_EQ(error_of(k).key, "event-channel");
}

TEST(FrontendKeys, EventChannelZeroOrBeyondFifoLimitIsRejected) {
  keys k = single_queue();
  k["event-channel-tx"] = "0";
  EXPECT_EQ(error_of(k).what, key_error::kind::out_of_range);
  k["event-channel-tx"] = "131072";
  EXPECT_EQ(error_of(k).what, key_error::kind::out_of_range);
}

// Any non-zero decimal is on, as xenbus_read_unsigned() gives it to Linux's
// netback; what is not a number is still refused.
TEST(FrontendKeys, FeatureFlagIsOnWhenNonZeroAndRefusedWhenNotANumber) {
  using flag_member = bool datapath::frontend_features::*;
  const std::array<std::pair<const char*, flag_member>, 5> flags{{
      {"feature-sg", &datapath::frontend_features::sg},
      {"feature-rx-notify", &datapath::frontend_features::rx_notify},
      {"feature-gso-tcpv4", &datapath::frontend_features::gso_tcpv4},
      {"feature-no-csum-offload", &datapath::frontend_features::no_csum_offload},
      {"request-multicast-control", &datapath::frontend_features::multicast_control},
  }};
  for (const auto& [flag, member] : flags) {
    keys k = single_queue();
    k[flag] = "0";
    ASSERT_TRUE(parse_frontend_keys(reader_of(k), limits()).has_value()) << flag;
    EXPECT_FALSE(parse_frontend_keys(reader_of(k), limits()).value().features.*member) << flag;
    k[flag] = "2";
    ASSERT_TRUE(parse_frontend_keys(reader_of(k), limits()).has_value()) << flag;
    EXPECT_TRUE(parse_frontend_keys(reader_of(k), limits()).value().features.*member) << flag;
    k[flag] = "yes";
    EXPECT_EQ(error_of(k).what, key_error::kind::malformed);
    EXPECT_EQ(error_of(k).key, flag);
    k[flag] = "4294967296";  // beyond %u
    EXPECT_EQ(error_of(k).what, key_error::kind::out_of_range);
  }
}

TEST(FrontendKeys, CtrlRingRefWithoutPortIsRejected) {
  keys k = single_queue();
  k["ctrl-ring-ref"] = "40";
  const key_error e = error_of(k);
  EXPECT_EQ(e.what, key_error::kind::inconsistent);
  EXPECT_EQ(e.key, "event-channel-ctrl");
}

TEST(FrontendKeys, CtrlPortWithoutRingRefIsRejected) {
  keys k = single_queue();
  k["event-channel-ctrl"] = "19";
  EXPECT_EQ(error_of(k).key, "ctrl-ring-ref");
}

TEST(FrontendKeys, ControlRingIsParsedWhenComplete) {
  keys k = single_queue();
  k["ctrl-ring-ref"] = "40";
  k["event-channel-ctrl"] = "19";
  const auto r = parse_frontend_keys(reader_of(k), limits());
  ASSERT_TRUE(r.has_value());
  ASSERT_TRUE(r.value().ctrl_ring);
  EXPECT_EQ(r.value().ctrl_ring->ref, grant_ref{40});
  EXPECT_EQ(r.value().ctrl_ring->port, evtchn_port{19});
}

TEST(FrontendKeys, HugeXdpHeadroomIsRejected) {
  keys k = single_queue();
  k["xdp-headroom"] = "256";
  EXPECT_TRUE(parse_frontend_keys(reader_of(k), limits()).has_value());
  k["xdp-headroom"] = "32767";  // Linux would clamp; it exceeds half a page
  EXPECT_EQ(error_of(k).what, key_error::kind::out_of_range);
}

TEST(FrontendKeys, TuningIsCopiedIntoEveryQueue) {
  const keys k = two_queues();
  frontend_limits l = limits();
  l.tuning.poll_us = 50;
  const auto r = parse_frontend_keys(reader_of(k), l);
  ASSERT_TRUE(r.has_value());
  for (const auto& q : r.value().queues) {
    EXPECT_EQ(q.tuning.poll_us, 50U);
  }
}

TEST(FrontendKeys, ThreadNamesFitFifteenCharacters) {
  EXPECT_EQ(queue_thread_name(vif_id{domid{1}, 0}, 0), "vif1.0-q0");
  EXPECT_EQ(queue_thread_name(vif_id{domid{32751}, 65535}, 63), "32751.65535-q63");
  EXPECT_EQ(queue_thread_name(vif_id{domid{123}, 45}, 6), "vif123.45-q6");
  EXPECT_EQ(ctrl_thread_name(vif_id{domid{1}, 0}), "vif1.0-ctrl");
  EXPECT_EQ(ctrl_thread_name(vif_id{domid{32751}, 65535}), "32751.65535-ctr");
}

TEST(FrontendKeys, ErrorMessageNamesTheKey) {
  keys k = single_queue();
  k["tx-ring-ref"] = "x";
  EXPECT_EQ(error_of(k).message(), "tx-ring-ref: malformed (not a plain decimal number)");
}

}  // namespace
}  // namespace unetback::control
