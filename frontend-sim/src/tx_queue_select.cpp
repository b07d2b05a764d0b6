#include "unetback/sim/netfront/tx_queue_select.hpp"

#include <linux/bpf.h>
#include <linux/if_tun.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <system_error>

namespace unetback::sim {
namespace {

// r0 = bpf_get_prandom_u32(); return r0. tun takes the program's return value
// modulo the number of queues (tun_ebpf_select_queue).
std::array<bpf_insn, 2> random_queue_program() {
  std::array<bpf_insn, 2> insns{};
  insns[0].code = BPF_JMP | BPF_CALL;
  insns[0].imm = BPF_FUNC_get_prandom_u32;
  insns[1].code = BPF_JMP | BPF_EXIT;
  return insns;
}

int load_program() {
  const auto insns = random_queue_program();
  static const char license[] = "GPL";
  bpf_attr attr{};
  attr.prog_type = BPF_PROG_TYPE_SOCKET_FILTER;
  attr.insn_cnt = static_cast<std::uint32_t>(insns.size());
  attr.insns = reinterpret_cast<std::uintptr_t>(insns.data());
  attr.license = reinterpret_cast<std::uintptr_t>(license);
  const long fd = ::syscall(SYS_bpf, BPF_PROG_LOAD, &attr, sizeof attr);
  if (fd < 0) {
    throw std::system_error(errno, std::generic_category(), "load the random TX steering program");
  }
  return static_cast<int>(fd);
}

}  // namespace

std::optional<tx_queue_select> parse_tx_queue_select(std::string_view text) {
  if (text == "flow") {
    return tx_queue_select::flow;
  }
  if (text == "random") {
    return tx_queue_select::random;
  }
  return std::nullopt;
}

void attach_random_tx_spread(int tap_queue_fd) {
  int prog = load_program();
  const int rc = ::ioctl(tap_queue_fd, TUNSETSTEERINGEBPF, &prog);
  const int err = errno;
  ::close(prog);  // the TAP holds its own reference
  if (rc != 0) {
    throw std::system_error(err, std::generic_category(), "TUNSETSTEERINGEBPF");
  }
}

}  // namespace unetback::sim
