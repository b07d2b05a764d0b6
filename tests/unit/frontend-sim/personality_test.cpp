// netfront-sim's personalities and the guest multicast list they send.
#include <gtest/gtest.h>

#include "unetback/sim/netfront/guest_multicast.hpp"
#include "unetback/sim/netfront/personality.hpp"
#include "unetback/sim/netfront/tx_slots.hpp"

namespace unetback::sim {
namespace {

TEST(Personality, EveryNameParsesBackToItself) {
  for (const std::string_view name : personality_names()) {
    const auto p = parse_personality(name);
    ASSERT_TRUE(p) << name;
    EXPECT_EQ(to_string(*p), name);
  }
  EXPECT_FALSE(parse_personality("windows"));
  EXPECT_FALSE(parse_personality(""));
}

TEST(Personality, EachAsksForWhatItsGuestDoes) {
  const frontend_request linux_req = profile_of(personality::linux_netfront).request;
  EXPECT_EQ(linux_req.queues, 1U);
  EXPECT_TRUE(linux_req.sg && linux_req.gso && !linux_req.no_csum_offload);
  EXPECT_EQ(linux_req.tx_slot_bytes, 4096U);

  const personality_profile xenvif = profile_of(personality::xenvif);
  EXPECT_EQ(xenvif.request.queues, 4U);
  EXPECT_TRUE(xenvif.request.split_event_channels && xenvif.request.ctrl_ring &&
              xenvif.request.multicast_control);
  EXPECT_GT(xenvif.multicast_toggle_ms, 0U);

  EXPECT_EQ(profile_of(personality::gplpv).request.tx_slot_bytes, min_tx_slot_bytes);

  const frontend_request minios = profile_of(personality::minios).request;
  EXPECT_EQ(minios.queues, 1U);
  EXPECT_FALSE(minios.sg || minios.gso || minios.ipv6_csum_offload);
  EXPECT_TRUE(minios.no_csum_offload);
}

TEST(GuestMulticast, DevMcastLinesOfTheInterfaceOnly) {
  const std::string text =
      "1    lo              1     0     01005e000001\n"
      "4    eth0            1     0     333300000001\n"
      "4    eth0            1     0     3333ff000002\n"
      "5    eth1            1     0     01005e0000fb\n";
  const auto macs = parse_dev_mcast(text, "eth0");
  ASSERT_EQ(macs.size(), 2U);
  EXPECT_EQ(macs[0], (mac_bytes{0x33, 0x33, 0x00, 0x00, 0x00, 0x01}));
  EXPECT_EQ(macs[1], (mac_bytes{0x33, 0x33, 0xff, 0x00, 0x00, 0x02}));
}

TEST(GuestMulticast, MalformedLinesAreSkipped) {
  const std::string text =
      "4 eth0 1 0 3333000000\n"     // short
      "4 eth0 1 0 33330000000g\n"   // not hex
      "4 eth0 1\n"                  // missing fields
      "4 eth0 1 0 3333000000011\n"  // long
      "4 eth0 1 0 01005e000001\n";
  const auto macs = parse_dev_mcast(text, "eth0");
  ASSERT_EQ(macs.size(), 1U);
  EXPECT_EQ(macs[0], (mac_bytes{0x01, 0x00, 0x5e, 0x00, 0x00, 0x01}));
}

}  // namespace
}  // namespace unetback::sim
