// read_filter_facts over real netlink, in a network namespace of its own: tc
// qdiscs and nft tables and chains made there with tc and nft show up; the
// devices they are not on stay clean.

#include "unetback/direct/filter_probe.hpp"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <gtest/gtest.h>
#include <linux/bpf.h>
#include <linux/if_link.h>
#include <net/if.h>
#include <unistd.h>

#include <array>
#include <cstdlib>
#include <string>

#include "unetback/tap/netns.hpp"
#include "unetback/tap/unique_fd.hpp"

namespace unetback::direct {
namespace {

class FilterProbe : public ::testing::Test {
 protected:
  void SetUp() override {
    if (::geteuid() != 0 || std::system("ip -V >/dev/null 2>&1 && tc -V >/dev/null 2>&1") != 0 ||
        std::system("nft --version >/dev/null 2>&1") != 0) {
      GTEST_SKIP() << "needs root, iproute2 and nftables (tools/deps installs them)";
    }
    ns_ = "unetback-fp-" + std::to_string(::getpid());
    ASSERT_EQ(run("ip netns add " + ns_), 0);
    ASSERT_EQ(in_ns("ip link add d0 type veth peer name d1"), 0);
  }
  void TearDown() override {
    if (!ns_.empty()) {
      (void)run("ip netns del " + ns_);
    }
  }

  static int run(const std::string& cmd) { return std::system((cmd + " >/dev/null 2>&1").c_str()); }
  int in_ns(const std::string& cmd) const { return run("ip netns exec " + ns_ + " " + cmd); }

  struct snapshot {
    filter_facts facts;
    unsigned d0 = 0;
    unsigned d1 = 0;
  };
  snapshot read(const filter_probe_limits& limits = {}) const {
    const tap::netns_scope inside(tap::netns_handle::open_named(ns_));
    return snapshot{read_filter_facts(limits), if_nametoindex("d0"), if_nametoindex("d1")};
  }

  std::string ns_;
};

TEST_F(FilterProbe, ANamespaceWithoutFiltersIsKnownClean) {
  const auto s = read();
  ASSERT_TRUE(s.facts.known);
  ASSERT_NE(s.d0, 0U);
  EXPECT_FALSE(s.facts.tc_or_xdp(s.d0));
  EXPECT_FALSE(s.facts.netdev_rules("d0"));
  EXPECT_FALSE(s.facts.bridge_rules());
}

TEST_F(FilterProbe, AnIngressOrShapingQdiscMarksItsDeviceOnly) {
  ASSERT_EQ(in_ns("tc qdisc add dev d0 clsact"), 0);
  auto s = read();
  ASSERT_TRUE(s.facts.known);
  EXPECT_TRUE(s.facts.tc_or_xdp(s.d0));
  EXPECT_FALSE(s.facts.tc_or_xdp(s.d1));
  ASSERT_EQ(in_ns("tc qdisc add dev d1 root tbf rate 1mbit burst 32kbit latency 400ms"), 0);
  s = read();
  EXPECT_TRUE(s.facts.tc_or_xdp(s.d1));
}

// The smallest XDP program: return XDP_PASS.
tap::unique_fd load_xdp_pass() {
  const std::array<bpf_insn, 2> insns{{
      {BPF_ALU64 | BPF_MOV | BPF_K, BPF_REG_0, 0, 0, XDP_PASS},
      {BPF_JMP | BPF_EXIT, 0, 0, 0, 0},
  }};
  return tap::unique_fd{
      bpf_prog_load(BPF_PROG_TYPE_XDP, "xdp_pass", "GPL", insns.data(), insns.size(), nullptr)};
}

TEST_F(FilterProbe, AnXdpProgramMarksItsDeviceOnly) {
  const auto program = load_xdp_pass();
  ASSERT_GE(program.get(), 0) << "BPF_PROG_LOAD of an XDP program failed";
  {
    const tap::netns_scope inside(tap::netns_handle::open_named(ns_));
    ASSERT_EQ(bpf_xdp_attach(static_cast<int>(if_nametoindex("d0")), program.get(),
                             XDP_FLAGS_SKB_MODE, nullptr),
              0);
  }
  const auto s = read();
  ASSERT_TRUE(s.facts.known);
  EXPECT_TRUE(s.facts.tc_or_xdp(s.d0));
  EXPECT_FALSE(s.facts.tc_or_xdp(s.d1));
}

TEST_F(FilterProbe, AnNftNetdevChainMarksTheDeviceItHooks) {
  ASSERT_EQ(in_ns("nft add table netdev probe"), 0);
  ASSERT_EQ(in_ns("nft add chain netdev probe in "
                  "'{ type filter hook ingress device d0 priority 0; }'"),
            0);
  const auto s = read();
  ASSERT_TRUE(s.facts.known);
  EXPECT_TRUE(s.facts.netdev_rules("d0"));
  EXPECT_FALSE(s.facts.netdev_rules("d1"));
  EXPECT_FALSE(s.facts.bridge_rules());
}

TEST_F(FilterProbe, AnNftBridgeTableCountsAsBridgeRules) {
  ASSERT_EQ(in_ns("nft add table bridge probe"), 0);
  const auto s = read();
  ASSERT_TRUE(s.facts.known);
  EXPECT_TRUE(s.facts.bridge_rules());
}

TEST_F(FilterProbe, ADumpLongerThanItsBoundLeavesTheFactsUnknown) {
  const auto s = read(filter_probe_limits{1});  // d0, d1 and lo: three links
  EXPECT_FALSE(s.facts.known);
  EXPECT_TRUE(s.facts.tc_or_xdp(s.d1));
  EXPECT_TRUE(s.facts.netdev_rules("d1"));
  EXPECT_TRUE(s.facts.bridge_rules());
}

TEST(FilterFacts, UnknownFactsCountEveryFilterAsPresent) {
  const filter_facts unknown;
  EXPECT_TRUE(unknown.tc_or_xdp(1));
  EXPECT_TRUE(unknown.netdev_rules("vif1.0"));
  EXPECT_TRUE(unknown.bridge_rules());
}

}  // namespace
}  // namespace unetback::direct
