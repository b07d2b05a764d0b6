// The reason the daemon gives when the kernel refuses the steering program
// comes from the verifier's log inside libbpf's messages.

#include "unetback/steering/verifier_log.hpp"

#include <gtest/gtest.h>

namespace unetback::steering {
namespace {

// libbpf's messages of the refused load on Debian 12's 6.1 kernel, shortened.
constexpr std::string_view refused_on_6_1 =
    "libbpf: prog 'unetback_rss_select': BPF program load failed: Permission denied\n"
    "libbpf: prog 'unetback_rss_select': -- BEGIN PROG LOAD LOG --\n"
    "923: (0f) r7 += r8                    ; R7_w=map_value(off=520,ks=4,vs=37384)\n"
    "924: (61) r7 = *(u32 *)(r7 +11264)\n"
    "R7 unbounded memory access, make sure to bounds check any such access\n"
    "processed 1402 insns (limit 1000000) max_states_per_insn 2 total_states 35\n"
    "-- END PROG LOAD LOG --\n"
    "libbpf: prog 'unetback_rss_select': failed to load: -13\n";

TEST(VerifierLog, VerdictIsTheLastLineBeforeTheSummary) {
  EXPECT_EQ(verifier_verdict(refused_on_6_1),
            "R7 unbounded memory access, make sure to bounds check any such access");
}

TEST(VerifierLog, VerificationTimeLinesAreSummaryToo) {
  EXPECT_EQ(verifier_verdict("-- BEGIN PROG LOAD LOG --\n"
                             "R1 invalid mem access 'scalar'\n"
                             "verification time 12 usec\n"
                             "stack depth 64\n"
                             "processed 10 insns\n"
                             "-- END PROG LOAD LOG --\n"),
            "stack depth 64");
}

TEST(VerifierLog, NoLogNoVerdict) {
  EXPECT_EQ(verifier_verdict("libbpf: map 'x': failed to create: Operation not permitted\n"), "");
  EXPECT_EQ(verifier_verdict(""), "");
  EXPECT_EQ(verifier_verdict("-- BEGIN PROG LOAD LOG --\n\n\n-- END PROG LOAD LOG --\n"), "");
  EXPECT_EQ(
      verifier_verdict("-- BEGIN PROG LOAD LOG --\nprocessed 3 insns\n-- END PROG LOAD LOG --"),
      "");
  // markers out of order: not a log
  EXPECT_EQ(verifier_verdict("-- END PROG LOAD LOG --\nx\n-- BEGIN PROG LOAD LOG --\n"), "");
}

TEST(VerifierLog, LogWithoutTrailingNewlineBeforeTheEndMarker) {
  EXPECT_EQ(verifier_verdict("-- BEGIN PROG LOAD LOG --\nonly line-- END PROG LOAD LOG --"),
            "only line");
}

}  // namespace
}  // namespace unetback::steering
