// The frontend's XenStore keys (docs/protocol.md §1.5-1.8).
#include <gtest/gtest.h>

#include <map>

#include "unetback/sim/netfront/frontend_keys.hpp"

namespace unetback::sim {
namespace {

std::map<std::string, std::string> as_map(
    const std::vector<std::pair<std::string, std::string>>& v) {
  return {v.begin(), v.end()};
}

key_reader reader(std::map<std::string, std::string> m) {
  return [m](std::string_view k) -> std::optional<std::string> {
    const auto it = m.find(std::string(k));
    return it == m.end() ? std::nullopt : std::optional(it->second);
  };
}

TEST(FrontendKeys, SingleQueueUsesFlatKeys) {
  frontend_request req;
  backend_features be;
  be.multi_queue = true;
  be.max_queues = 4;
  const std::vector<queue_keys> q{
      {grant_ref{10}, grant_ref{11}, evtchn_port{3}, evtchn_port{3}, false}};
  const auto keys = as_map(build_frontend_keys(req, be, q, std::nullopt));
  EXPECT_EQ(keys.at("tx-ring-ref"), "10");
  EXPECT_EQ(keys.at("rx-ring-ref"), "11");
  EXPECT_EQ(keys.at("event-channel"), "3");
  EXPECT_EQ(keys.at("multi-queue-num-queues"), "1");
  EXPECT_EQ(keys.at("request-rx-copy"), "1");
  EXPECT_EQ(keys.at("feature-rx-notify"), "1");
  EXPECT_EQ(keys.at("feature-sg"), "1");
  EXPECT_EQ(keys.at("feature-gso-tcpv4"), "1");
  EXPECT_EQ(keys.count("queue-0/tx-ring-ref"), 0U);
  EXPECT_EQ(keys.count("ctrl-ring-ref"), 0U);
}

TEST(FrontendKeys, MultiQueueUsesPerQueueDirsAndSplitChannels) {
  frontend_request req;
  req.sg = false;
  backend_features be;
  be.multi_queue = true;
  be.max_queues = 2;
  const std::vector<queue_keys> q{
      {grant_ref{10}, grant_ref{11}, evtchn_port{3}, evtchn_port{4}, true},
      {grant_ref{12}, grant_ref{13}, evtchn_port{5}, evtchn_port{6}, true}};
  const auto keys =
      as_map(build_frontend_keys(req, be, q, ctrl_keys{grant_ref{20}, evtchn_port{9}}));
  EXPECT_EQ(keys.at("multi-queue-num-queues"), "2");
  EXPECT_EQ(keys.at("queue-1/tx-ring-ref"), "12");
  EXPECT_EQ(keys.at("queue-1/event-channel-rx"), "6");
  EXPECT_EQ(keys.at("queue-0/event-channel-tx"), "3");
  EXPECT_EQ(keys.count("tx-ring-ref"), 0U);
  EXPECT_EQ(keys.count("queue-0/event-channel"), 0U);
  EXPECT_EQ(keys.at("feature-sg"), "0");
  EXPECT_EQ(keys.at("feature-gso-tcpv4"), "0");  // GSO needs SG
  EXPECT_EQ(keys.at("ctrl-ring-ref"), "20");
  EXPECT_EQ(keys.at("event-channel-ctrl"), "9");
}

TEST(FrontendKeys, NumQueuesIsOnlyWrittenWhenTheBackendIsMultiQueue) {
  const std::vector<queue_keys> q{
      {grant_ref{10}, grant_ref{11}, evtchn_port{3}, evtchn_port{3}, false}};
  const auto keys = as_map(build_frontend_keys({}, backend_features{}, q, std::nullopt));
  EXPECT_EQ(keys.count("multi-queue-num-queues"), 0U);
}

TEST(FrontendKeys, QueueCountIsTheMinimumOfRequestAndBackendMax) {
  frontend_request req;
  req.queues = 8;
  backend_features be;
  EXPECT_EQ(negotiate_queues(req, be), 1U);  // no multi-queue-max-queues: one queue
  be.multi_queue = true;
  be.max_queues = 4;
  EXPECT_EQ(negotiate_queues(req, be), 4U);
  req.queues = 2;
  EXPECT_EQ(negotiate_queues(req, be), 2U);
}

TEST(FrontendKeys, BackendFeaturesAreParsedStrictly) {
  const auto f = read_backend_features(reader({{"feature-rx-copy", "1"},
                                               {"feature-sg", "1"},
                                               {"feature-split-event-channels", "0"},
                                               {"multi-queue-max-queues", "8"}}));
  EXPECT_TRUE(f.rx_copy);
  EXPECT_TRUE(f.sg);
  EXPECT_FALSE(f.gso_tcpv4);
  EXPECT_FALSE(f.split_event_channels);
  EXPECT_TRUE(f.multi_queue);
  EXPECT_EQ(f.max_queues, 8U);
  EXPECT_THROW((void)read_backend_features(reader({{"feature-sg", "yes"}})), std::runtime_error);
  EXPECT_THROW((void)read_backend_features(reader({{"feature-sg", "2"}})), std::runtime_error);
  EXPECT_THROW((void)read_backend_features(reader({{"multi-queue-max-queues", "4x"}})),
               std::runtime_error);
  EXPECT_THROW((void)read_backend_features(reader({{"multi-queue-max-queues", "0"}})),
               std::runtime_error);
}

// Mini-OS-like: no checksum offload at all (feature-no-csum-offload), so no
// IPv6 offload either; XenVif-like: multicast control only where offered.
TEST(FrontendKeys, ChecksumAndMulticastRequestsFollowTheFrontendAndTheBackend) {
  frontend_request req;
  req.no_csum_offload = true;
  req.multicast_control = true;
  backend_features be;
  const std::vector<queue_keys> q{
      {grant_ref{10}, grant_ref{11}, evtchn_port{3}, evtchn_port{3}, false}};
  auto keys = as_map(build_frontend_keys(req, be, q, std::nullopt));
  EXPECT_EQ(keys.at("feature-no-csum-offload"), "1");
  EXPECT_EQ(keys.at("feature-ipv6-csum-offload"), "0");
  EXPECT_EQ(keys.count("request-multicast-control"), 0U);  // not offered
  be.multicast_control = true;
  keys = as_map(build_frontend_keys(req, be, q, std::nullopt));
  EXPECT_EQ(keys.at("request-multicast-control"), "1");
  keys = as_map(build_frontend_keys(frontend_request{}, be, q, std::nullopt));
  EXPECT_EQ(keys.count("feature-no-csum-offload"), 0U);
  EXPECT_EQ(keys.count("request-multicast-control"), 0U);
  EXPECT_EQ(keys.at("feature-ipv6-csum-offload"), "1");
}

TEST(FrontendKeys, XenbusStateParsing) {
  EXPECT_EQ(parse_xenbus_state("4"), 4);
  EXPECT_EQ(parse_xenbus_state("9"), std::nullopt);
  EXPECT_EQ(parse_xenbus_state(""), std::nullopt);
  EXPECT_EQ(parse_xenbus_state("2 "), std::nullopt);
}

}  // namespace
}  // namespace unetback::sim
