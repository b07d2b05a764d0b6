#pragma once
// What the kernel's BPF verifier said when it refused a program, read from
// libbpf's messages of that load: libbpf wraps the verifier's log between
// "-- BEGIN PROG LOAD LOG --" and "-- END PROG LOAD LOG --".

#include <string>
#include <string_view>

namespace unetback::steering {

/// The verifier's reason for refusing the program: the last line of its log
/// that is not the closing summary ("processed N insns ...", "verification
/// time ..."). Empty when the messages hold no verifier log.
[[nodiscard]] std::string verifier_verdict(std::string_view libbpf_messages);

}  // namespace unetback::steering
