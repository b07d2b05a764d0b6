// One vif's data path over the fake platform: its queues start and stop
// together, the control ring's hash configuration is published to the
// caller's callback and readable, and the state a restart carries over is
// taken over or discarded.

#include "unetback/datapath/vif_datapath.hpp"

#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <fstream>

#include "queue_fixture.hpp"
#include "unetback/test_support/temp_dir.hpp"

namespace unetback::datapath::test {
namespace {

class VifDatapath : public ::testing::Test {
 protected:
  static constexpr std::uint32_t ctrl_port = 20;

  ~VifDatapath() override {
    datapath_.reset();
    for (int fd : peers_) {
      ::close(fd);
    }
  }

  /// A configuration of `n` queues, each with its own rings, port and TAP.
  vif_datapath_config config_of(unsigned n) {
    vif_datapath_config c;
    for (unsigned i = 0; i < n; ++i) {
      queue_config q;
      q.name = "vif7.0-q" + std::to_string(i);
      q.frontend = domid{7};
      q.index = queue_index{i};
      const std::uint32_t tx_ref = mem_.grant_page();
      const std::uint32_t rx_ref = mem_.grant_page();
      (void)rings::tx_front_ring::init(ring_page(tx_ref));
      (void)rings::rx_front_ring::init(ring_page(rx_ref));
      q.tx_ring_ref = grant_ref{tx_ref};
      q.rx_ring_ref = grant_ref{rx_ref};
      q.tx_port = evtchn_port{2 * i + 1};
      q.rx_port = q.tx_port;
      q.features = frontend_features{true, true, true, true, true, false, false};
      c.queues.push_back(std::move(q));
      c.taps.push_back(open_tap());
    }
    c.on_fault = [this](const fault&) { ++faults_; };
    return c;
  }
  /// Adds a control ring to `c`; the test plays its frontend.
  void add_ctrl_ring(vif_datapath_config& c) {
    ctrl_ref_ = mem_.grant_page();
    ctrl_front_ = rings::ctrl_front_ring::init(ring_page(ctrl_ref_));
    c.ctrl_ring = ctrl_ring_config{grant_ref{ctrl_ref_}, evtchn_port{ctrl_port}, "vif7.0-ctrl"};
    c.on_hash_published = [this] { ++published_; };
  }
  rings::ring_page ring_page(std::uint32_t ref) {
    return rings::ring_page(mem_.raw_page(ref), rings::page_size);
  }
  std::unique_ptr<platform::frame_port> open_tap() {
    int sv[2];
    EXPECT_EQ(::socketpair(AF_UNIX, SOCK_SEQPACKET, 0, sv), 0);
    peers_.push_back(sv[1]);
    return std::make_unique<socket_frame_port>(sv[0], 12);
  }
  /// The frontend selects Toeplitz hashing over the control ring.
  std::uint32_t select_toeplitz() {
    return ctrl_call(ctrl_front_, *platform_.channels.back(), ctrl_port,
                     rings::make_ctrl_request(1, XEN_NETIF_CTRL_TYPE_SET_HASH_ALGORITHM,
                                              XEN_NETIF_CTRL_HASH_ALGORITHM_TOEPLITZ))
        .status;
  }

  fake_guest_memory mem_;
  fake_platform platform_{mem_};
  std::vector<int> peers_;
  std::uint32_t ctrl_ref_ = 0;
  rings::ctrl_front_ring ctrl_front_;
  std::atomic<int> faults_{0};
  std::atomic<int> published_{0};
  std::unique_ptr<vif_datapath> datapath_;
};

TEST_F(VifDatapath, QueuesRunTogetherAndReportInIndexOrder) {
  datapath_ = std::make_unique<vif_datapath>(platform_, config_of(3));
  EXPECT_EQ(datapath_->num_queues(), 3U);
  EXPECT_TRUE(datapath_->kick(std::nullopt).empty()) << "nothing runs before start()";
  datapath_->start();
  EXPECT_EQ(datapath_->kick(std::nullopt), (std::vector<unsigned>{0, 1, 2}));
  EXPECT_EQ(datapath_->kick(1U), (std::vector<unsigned>{1}));
  EXPECT_THROW((void)datapath_->kick(3U), std::invalid_argument);
  const auto statuses = datapath_->queue_statuses();
  ASSERT_EQ(statuses.size(), 3U);
  for (unsigned i = 0; i < 3; ++i) {
    EXPECT_EQ(statuses[i].index, queue_index{i});
    EXPECT_FALSE(statuses[i].ring_dump.empty());
  }
  datapath_->stop();
  EXPECT_TRUE(datapath_->kick(std::nullopt).empty());
  datapath_->stop();  // idempotent
  EXPECT_EQ(faults_.load(), 0);
}

TEST_F(VifDatapath, OneTapPerQueueOrNothing) {
  auto c = config_of(2);
  c.taps.pop_back();
  EXPECT_THROW(vif_datapath(platform_, std::move(c)), std::invalid_argument);
}

TEST_F(VifDatapath, WithoutControlRingThereIsNoHashConfiguration) {
  datapath_ = std::make_unique<vif_datapath>(platform_, config_of(1));
  EXPECT_FALSE(datapath_->has_ctrl_ring());
  EXPECT_FALSE(datapath_->hash());
  EXPECT_FALSE(datapath_->ctrl_counters());
  EXPECT_FALSE(datapath_->restore_hash(rings::hash_config{}));
}

TEST_F(VifDatapath, GuestHashChangeIsPublishedToTheCallbackAndReadable) {
  auto c = config_of(2);
  add_ctrl_ring(c);
  datapath_ = std::make_unique<vif_datapath>(platform_, std::move(c));
  datapath_->start();
  ASSERT_EQ(datapath_->hash()->generation, 0U);
  EXPECT_EQ(select_toeplitz(), rings::ctrl_status::success);
  EXPECT_TRUE(wait_until([&] { return published_.load() == 1; }));
  const auto h = datapath_->hash();
  ASSERT_TRUE(h);
  EXPECT_GT(h->generation, 0U);
  EXPECT_EQ(h->config.algorithm, XEN_NETIF_CTRL_HASH_ALGORITHM_TOEPLITZ);
  EXPECT_EQ(datapath_->ctrl_counters()->requests, 1U);
}

TEST_F(VifDatapath, RestoredHashIsVisibleBeforeTheGuestSaysAnything) {
  auto c = config_of(2);
  add_ctrl_ring(c);
  datapath_ = std::make_unique<vif_datapath>(platform_, std::move(c));
  rings::hash_config saved;
  saved.algorithm = XEN_NETIF_CTRL_HASH_ALGORITHM_TOEPLITZ;
  saved.mapping_size = 2;
  saved.mapping[0] = 1;
  ASSERT_TRUE(datapath_->restore_hash(saved));
  EXPECT_EQ(datapath_->hash()->config, saved);
  saved.mapping[1] = 2;  // two queues: entries are 0 and 1
  EXPECT_FALSE(datapath_->restore_hash(saved));
}

TEST_F(VifDatapath, DiscardStateRemovesEveryQueueStateFile) {
  test_support::temp_dir dir("vif-datapath");
  auto c = config_of(2);
  for (auto& q : c.queues) {
    q.state_file = (dir.path() / (q.name + ".state")).string();
  }
  datapath_ = std::make_unique<vif_datapath>(platform_, std::move(c));
  datapath_->start();
  datapath_->stop();
  ASSERT_TRUE(std::filesystem::exists(dir.path() / "vif7.0-q0.state"));
  ASSERT_TRUE(std::filesystem::exists(dir.path() / "vif7.0-q1.state"));
  datapath_->discard_state();
  EXPECT_FALSE(std::filesystem::exists(dir.path() / "vif7.0-q0.state"));
  EXPECT_FALSE(std::filesystem::exists(dir.path() / "vif7.0-q1.state"));
}

}  // namespace
}  // namespace unetback::datapath::test
