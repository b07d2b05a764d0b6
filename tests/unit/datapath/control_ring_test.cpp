// The control-ring runner over the fake platform: a Windows-style frontend
// programs Toeplitz hashing; the configuration reaches vif_shared_state.

#include "unetback/datapath/control_ring.hpp"

#include <cstring>

#include "queue_fixture.hpp"

namespace unetback::datapath::test {
namespace {

class ControlRing : public ::testing::Test {
 protected:
  static constexpr std::uint32_t ctrl_port = 9;

  ControlRing() {
    ref_ = mem_.grant_page();
    front_ = rings::ctrl_front_ring::init(rings::ring_page(mem_.raw_page(ref_), rings::page_size));
    shared_ = std::make_shared<vif_shared_state>(4);
  }
  ~ControlRing() override {
    if (ctrl_) {
      ctrl_->stop();
    }
  }

  void start() {
    ctrl_ = std::make_unique<control_ring>(
        platform_, domid{7}, grant_ref{ref_}, evtchn_port{ctrl_port}, shared_,
        [this](const fault& f) {
          std::lock_guard lock(mu_);
          faults_.push_back(f);
        },
        "vif7.0-ctrl");
    ctrl_->start();
  }
  /// Sends one request and waits for its response.
  rings::ctrl_response call(std::uint16_t type, std::uint32_t d0 = 0, std::uint32_t d1 = 0,
                            std::uint32_t d2 = 0) {
    return ctrl_call(front_, *platform_.channels.at(0), ctrl_port,
                     rings::make_ctrl_request(next_id_++, type, d0, d1, d2));
  }
  std::vector<fault> faults() {
    std::lock_guard lock(mu_);
    return faults_;
  }

  fake_guest_memory mem_;
  fake_platform platform_{mem_};
  std::uint32_t ref_ = 0;
  rings::ctrl_front_ring front_;
  std::shared_ptr<vif_shared_state> shared_;
  std::unique_ptr<control_ring> ctrl_;
  std::uint16_t next_id_ = 1;
  std::mutex mu_;
  std::vector<fault> faults_;
};

TEST_F(ControlRing, FrontendProgramsToeplitzHashing) {
  start();
  EXPECT_EQ(
      call(XEN_NETIF_CTRL_TYPE_SET_HASH_ALGORITHM, XEN_NETIF_CTRL_HASH_ALGORITHM_TOEPLITZ).status,
      rings::ctrl_status::success);
  EXPECT_EQ(call(XEN_NETIF_CTRL_TYPE_GET_HASH_FLAGS).data, 0xFU);
  EXPECT_EQ(call(XEN_NETIF_CTRL_TYPE_SET_HASH_FLAGS, XEN_NETIF_CTRL_HASH_TYPE_IPV4_TCP).status,
            rings::ctrl_status::success);
  const std::uint32_t key_ref = mem_.grant_page();
  for (int i = 0; i < 40; ++i) {
    mem_.raw_page(key_ref)[i] = static_cast<std::byte>(i + 1);
  }
  EXPECT_EQ(call(XEN_NETIF_CTRL_TYPE_SET_HASH_KEY, key_ref, 40).status,
            rings::ctrl_status::success);
  EXPECT_EQ(call(XEN_NETIF_CTRL_TYPE_SET_HASH_MAPPING_SIZE, 4).status, rings::ctrl_status::success);
  const std::uint32_t map_ref = mem_.grant_page();
  const std::uint32_t table[4] = {3, 2, 1, 0};
  std::memcpy(mem_.raw_page(map_ref), table, sizeof(table));
  EXPECT_EQ(call(XEN_NETIF_CTRL_TYPE_SET_HASH_MAPPING, map_ref, 4, 0).status,
            rings::ctrl_status::success);

  const hash_snapshot snap = shared_->read_hash();
  EXPECT_GT(snap.generation, 0U);
  EXPECT_TRUE(snap.config.hashing());
  EXPECT_EQ(snap.config.flags, XEN_NETIF_CTRL_HASH_TYPE_IPV4_TCP);
  EXPECT_EQ(snap.config.key[39], 40);
  EXPECT_EQ(snap.config.mapping_size, 4U);
  EXPECT_EQ(snap.config.mapping[0], 3U);
  EXPECT_EQ(ctrl_->requests_handled(), 6U);
}

// After a daemon restart the guest does not configure its hash again: the
// saved configuration is taken over, published, and the guest's later
// partial updates apply on top of it.
TEST_F(ControlRing, RestoredHashIsPublishedAndLaterUpdatesBuildOnIt) {
  rings::hash_config saved;
  saved.algorithm = XEN_NETIF_CTRL_HASH_ALGORITHM_TOEPLITZ;
  saved.flags = XEN_NETIF_CTRL_HASH_TYPE_IPV4_TCP;
  saved.key[0] = 0x6d;
  saved.mapping_size = 4;
  saved.mapping = {};
  saved.mapping[0] = 3;
  saved.mapping[1] = 2;
  ctrl_ = std::make_unique<control_ring>(platform_, domid{7}, grant_ref{ref_},
                                         evtchn_port{ctrl_port}, shared_, nullptr, "vif7.0-ctrl");
  ASSERT_TRUE(ctrl_->restore_hash(saved));
  EXPECT_EQ(shared_->read_hash().config, saved);
  ctrl_->start();
  EXPECT_EQ(call(XEN_NETIF_CTRL_TYPE_GET_HASH_FLAGS).status, rings::ctrl_status::success);
  const std::uint32_t map_ref = mem_.grant_page();
  const std::uint32_t entry = 1;
  std::memcpy(mem_.raw_page(map_ref), &entry, sizeof(entry));
  ASSERT_EQ(call(XEN_NETIF_CTRL_TYPE_SET_HASH_MAPPING, map_ref, 1, 3).status,
            rings::ctrl_status::success);  // offset 3 < the restored size 4
  const hash_snapshot snap = shared_->read_hash();
  EXPECT_EQ(snap.config.mapping[0], 3U);
  EXPECT_EQ(snap.config.mapping[3], 1U);
  EXPECT_EQ(snap.config.key[0], 0x6d);
}

TEST_F(ControlRing, ARestoredConfigurationNoGuestCouldSetIsRefused) {
  rings::hash_config bad;
  bad.algorithm = XEN_NETIF_CTRL_HASH_ALGORITHM_TOEPLITZ;
  bad.mapping_size = 2;
  bad.mapping[1] = 4;  // 4 queues: entries are 0..3
  ctrl_ = std::make_unique<control_ring>(platform_, domid{7}, grant_ref{ref_},
                                         evtchn_port{ctrl_port}, shared_, nullptr, "vif7.0-ctrl");
  const auto before = shared_->read_hash();
  EXPECT_FALSE(ctrl_->restore_hash(bad));
  bad.mapping[1] = 0;
  bad.flags = 1U << 31;  // no such hash type
  EXPECT_FALSE(ctrl_->restore_hash(bad));
  bad.flags = 0;
  bad.algorithm = 7;
  EXPECT_FALSE(ctrl_->restore_hash(bad));
  EXPECT_EQ(shared_->read_hash().generation, before.generation);
}

// Found by fuzz_control_hash_restore: a guest that enabled Toeplitz
// hashing and then selected NONE again keeps its flags; the configuration
// its requests built must survive a restart like any other.
TEST_F(ControlRing, ConfigurationWithFlagsLeftUnderAlgorithmNoneIsRestored) {
  start();
  ASSERT_EQ(
      call(XEN_NETIF_CTRL_TYPE_SET_HASH_ALGORITHM, XEN_NETIF_CTRL_HASH_ALGORITHM_TOEPLITZ).status,
      rings::ctrl_status::success);
  ASSERT_EQ(call(XEN_NETIF_CTRL_TYPE_SET_HASH_FLAGS, XEN_NETIF_CTRL_HASH_TYPE_IPV4).status,
            rings::ctrl_status::success);
  ASSERT_EQ(call(XEN_NETIF_CTRL_TYPE_SET_HASH_ALGORITHM, XEN_NETIF_CTRL_HASH_ALGORITHM_NONE).status,
            rings::ctrl_status::success);
  const rings::hash_config built = shared_->read_hash().config;
  ASSERT_NE(built.flags, 0U);
  ctrl_->stop();
  auto restarted_state = std::make_shared<vif_shared_state>(4);
  control_ring restarted(platform_, domid{7}, grant_ref{ref_}, evtchn_port{ctrl_port},
                         restarted_state, nullptr, "vif7.0-ctrl");
  EXPECT_TRUE(restarted.restore_hash(built));
  EXPECT_EQ(restarted_state->read_hash().config, built);
}

TEST_F(ControlRing, MappingEntryBeyondQueueCountIsRejectedAndNotPublished) {
  start();
  ASSERT_EQ(call(XEN_NETIF_CTRL_TYPE_SET_HASH_MAPPING_SIZE, 2).status, rings::ctrl_status::success);
  const auto before = shared_->read_hash();
  const std::uint32_t map_ref = mem_.grant_page();
  const std::uint32_t table[2] = {1, 4};  // 4 queues: entry 4 is invalid
  std::memcpy(mem_.raw_page(map_ref), table, sizeof(table));
  EXPECT_EQ(call(XEN_NETIF_CTRL_TYPE_SET_HASH_MAPPING, map_ref, 2, 0).status,
            rings::ctrl_status::invalid_parameter);
  EXPECT_EQ(shared_->read_hash().generation, before.generation);
  EXPECT_EQ(shared_->read_hash().config.mapping[0], 0U);
}

TEST_F(ControlRing, KeyFromRevokedGrantIsInvalid) {
  start();
  const std::uint32_t key_ref = mem_.grant_page();
  mem_.revoke(key_ref);
  EXPECT_EQ(call(XEN_NETIF_CTRL_TYPE_SET_HASH_KEY, key_ref, 40).status,
            rings::ctrl_status::invalid_parameter);
}

TEST_F(ControlRing, UnknownRequestIsNotSupported) {
  start();
  EXPECT_EQ(call(XEN_NETIF_CTRL_TYPE_ADD_GREF_MAPPING, 0, 1, 1).status,
            rings::ctrl_status::not_supported);
}

TEST_F(ControlRing, ProducerIndexOverflowIsFatal) {
  start();
  auto& h = *reinterpret_cast<rings::sring_header*>(mem_.raw_page(ref_));
  rings::publish(h.req_prod, 1000);  // a hostile frontend
  platform_.channels.at(0)->kick(ctrl_port);
  ASSERT_TRUE(wait_until([&] { return !faults().empty(); }));
  const fault f = faults()[0];
  EXPECT_EQ(f.source, fault_source::control_ring);
  EXPECT_EQ(f.kind(), fault_kind::frontend);
  EXPECT_FALSE(f.queue.has_value());  // the vif's, not a queue's
  EXPECT_EQ(f.describe(), "control ring: producer index overflow: more requests than ring slots");
}

TEST_F(ControlRing, StartFailsCleanlyOnUnknownRingRef) {
  ref_ = 424242;
  EXPECT_THROW(start(), std::system_error);
  EXPECT_FALSE(platform_.channels.at(0)->is_bound(ctrl_port));
}

TEST(VifSharedState, MulticastListIsBoundedAtSixtyFour) {
  vif_shared_state s(1);
  for (std::uint8_t i = 0; i < 64; ++i) {
    EXPECT_EQ(s.multicast_add({0x01, 0, 0x5e, 0, 0, i}), mcast_add_result::added);
  }
  EXPECT_EQ(s.multicast_add({0x01, 0, 0x5e, 0, 1, 0}), mcast_add_result::list_full);
  EXPECT_EQ(s.multicast_add({0x01, 0, 0x5e, 0, 0, 5}), mcast_add_result::already_present);
  s.multicast_del({0x01, 0, 0x5e, 0, 0, 5});
  EXPECT_FALSE(s.multicast_match({0x01, 0, 0x5e, 0, 0, 5}));
  EXPECT_EQ(s.multicast_count(), 63U);
  EXPECT_EQ(s.multicast_add({0x01, 0, 0x5e, 0, 1, 0}), mcast_add_result::added);
}

TEST(VifSharedState, HashSnapshotIsConsistentUnderConcurrentPublication) {
  vif_shared_state s(4);
  std::atomic<bool> done{false};
  std::thread writer([&] {
    for (std::uint32_t g = 1; g < 2000; ++g) {
      rings::hash_config c;
      c.algorithm = XEN_NETIF_CTRL_HASH_ALGORITHM_TOEPLITZ;
      c.flags = g;
      c.mapping_size = 128;
      c.mapping.fill(g % 4);
      c.key.fill(static_cast<std::uint8_t>(g));
      s.publish_hash(c);
    }
    done = true;
  });
  while (!done) {
    const hash_snapshot snap = s.read_hash();
    if (snap.generation == 0) {
      continue;
    }
    // Every word of one snapshot comes from the same publication.
    EXPECT_EQ(snap.config.mapping[127], snap.config.flags % 4);
    EXPECT_EQ(snap.config.key[39], static_cast<std::uint8_t>(snap.config.flags));
  }
  writer.join();
  EXPECT_EQ(s.read_hash().config.flags, 1999U);
}

}  // namespace
}  // namespace unetback::datapath::test
