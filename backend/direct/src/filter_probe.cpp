#include "unetback/direct/filter_probe.hpp"

#include <libmnl/libmnl.h>
#include <linux/if_link.h>
#include <linux/netfilter.h>
#include <linux/netfilter/nf_tables.h>
#include <linux/netfilter/nfnetlink.h>
#include <linux/pkt_sched.h>
#include <linux/rtnetlink.h>
#include <sys/socket.h>
#include <sys/time.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <memory>
#include <vector>

namespace unetback::direct {

namespace {

struct socket_closer {
  void operator()(mnl_socket* s) const { mnl_socket_close(s); }
};
using socket_ptr = std::unique_ptr<mnl_socket, socket_closer>;

struct dump_state;
/// Reads one message of a dump whose family header is known to be there.
using message_handler = void (*)(const nlmsghdr*, dump_state&);

/// What the dumps of one snapshot share: the facts they fill, the bound on
/// messages per dump, and the receive buffer.
struct dump_state {
  filter_facts* facts = nullptr;
  std::size_t limit = 0;
  std::string default_qdisc;
  std::vector<char> buf = std::vector<char>(65536);
  // The dump under way: its handler, its family header's size, messages left.
  message_handler handler = nullptr;
  std::size_t header_bytes = 0;
  std::size_t left = 0;
};

/// libmnl's callback for every dump: counts the message against the bound and
/// checks that its family header is there before the handler reads it.
int on_message(const nlmsghdr* nlh, void* data) {
  auto& s = *static_cast<dump_state*>(data);
  if (s.left == 0 || mnl_nlmsg_get_payload_len(nlh) < s.header_bytes) {
    errno = EOVERFLOW;  // not "unsupported": the dump counts as failed
    return MNL_CB_ERROR;
  }
  --s.left;
  s.handler(nlh, s);
  return MNL_CB_OK;
}

enum class dump_result { done, unsupported, failed };

/// Sends one dump request and runs `handler` on each answer, bounded in
/// messages (on_message counts down) and in time (a receive timeout).
dump_result dump(int bus, nlmsghdr* request, std::size_t header_bytes, message_handler handler,
                 dump_state& state) {
  state.handler = handler;
  state.header_bytes = header_bytes;
  state.left = state.limit;
  const socket_ptr s(mnl_socket_open(bus));
  if (!s) {
    return errno == EPROTONOSUPPORT ? dump_result::unsupported : dump_result::failed;
  }
  const timeval timeout{1, 0};
  if (setsockopt(mnl_socket_get_fd(s.get()), SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout) <
          0 ||
      mnl_socket_bind(s.get(), 0, MNL_SOCKET_AUTOPID) < 0) {
    return dump_result::failed;
  }
  request->nlmsg_seq = static_cast<unsigned>(std::time(nullptr));
  if (mnl_socket_sendto(s.get(), request, request->nlmsg_len) < 0) {
    return dump_result::failed;
  }
  const unsigned portid = mnl_socket_get_portid(s.get());
  for (;;) {
    const auto n = mnl_socket_recvfrom(s.get(), state.buf.data(), state.buf.size());
    if (n < 0) {
      return dump_result::failed;
    }
    const int r = mnl_cb_run(state.buf.data(), static_cast<std::size_t>(n), request->nlmsg_seq,
                             portid, on_message, &state);
    if (r == MNL_CB_STOP) {
      return dump_result::done;
    }
    if (r < 0) {
      return errno == ENOENT || errno == EOPNOTSUPP ? dump_result::unsupported
                                                    : dump_result::failed;
    }
  }
}

/// libmnl's attribute callback for a callable `Fn` passed as its data.
template <typename Fn>
int call_with_attr(const nlattr* a, void* fn) {
  (*static_cast<Fn*>(fn))(a);
  return MNL_CB_OK;
}

/// Runs `fn` on each attribute after a family header of `offset` bytes (libmnl
/// validates each attribute's length against the message).
template <typename Fn>
void each_attr(const nlmsghdr* nlh, std::size_t offset, Fn fn) {
  mnl_attr_parse(nlh, static_cast<unsigned>(offset), call_with_attr<Fn>, &fn);
}

template <typename Fn>
void each_nested(const nlattr* nest, Fn fn) {
  mnl_attr_parse_nested(nest, call_with_attr<Fn>, &fn);
}

/// The first attribute of `type` that `for_each(fn)` passes to fn, or null.
template <typename ForEach>
const nlattr* first_of_type(ForEach for_each, std::uint16_t type) {
  const nlattr* found = nullptr;
  for_each([&](const nlattr* a) {
    if (found == nullptr && mnl_attr_get_type(a) == type) {
      found = a;
    }
  });
  return found;
}

const nlattr* find_attr(const nlmsghdr* nlh, std::size_t offset, std::uint16_t type) {
  return first_of_type([&](auto fn) { each_attr(nlh, offset, fn); }, type);
}

const nlattr* find_nested(const nlattr* nest, std::uint16_t type) {
  return first_of_type([&](auto fn) { each_nested(nest, fn); }, type);
}

[[nodiscard]] bool is_string(const nlattr* a) {
  return mnl_attr_validate(a, MNL_TYPE_NUL_STRING) >= 0;
}

[[nodiscard]] bool default_kind(std::string_view kind, const std::string& sysctl_default) {
  constexpr std::array<std::string_view, 4> defaults{"mq", "pfifo_fast", "fq_codel", "noqueue"};
  return kind == sysctl_default ||
         std::find(defaults.begin(), defaults.end(), kind) != defaults.end();
}

void on_qdisc(const nlmsghdr* nlh, dump_state& s) {
  const auto* tcm = static_cast<const tcmsg*>(mnl_nlmsg_get_payload(nlh));
  const nlattr* kind = find_attr(nlh, sizeof(tcmsg), TCA_KIND);
  const bool readable = kind != nullptr && is_string(kind);
  if (tcm->tcm_parent == TC_H_INGRESS || !readable ||
      !default_kind(mnl_attr_get_str(kind), s.default_qdisc)) {
    s.facts->filtered_devices.push_back(static_cast<unsigned>(tcm->tcm_ifindex));
  }
}

void on_link(const nlmsghdr* nlh, dump_state& s) {
  const auto* ifi = static_cast<const ifinfomsg*>(mnl_nlmsg_get_payload(nlh));
  const nlattr* xdp = find_attr(nlh, sizeof(ifinfomsg), IFLA_XDP);
  const nlattr* attached = xdp != nullptr ? find_nested(xdp, IFLA_XDP_ATTACHED) : nullptr;
  if (attached != nullptr && (mnl_attr_validate(attached, MNL_TYPE_U8) < 0 ||
                              mnl_attr_get_u8(attached) != XDP_ATTACHED_NONE)) {
    s.facts->filtered_devices.push_back(static_cast<unsigned>(ifi->ifi_index));
  }
}

void on_table(const nlmsghdr* nlh, dump_state& s) {
  const auto* g = static_cast<const nfgenmsg*>(mnl_nlmsg_get_payload(nlh));
  s.facts->bridge_tables = s.facts->bridge_tables || g->nfgen_family == NFPROTO_BRIDGE;
}

/// A netdev chain's hook names its device (NFTA_HOOK_DEV) or devices (NFTA_HOOK_DEVS).
void add_hooked_devices(const nlattr* hook, filter_facts& f) {
  bool named = false;
  const auto add = [&](const nlattr* name) {
    if (is_string(name)) {
      f.netdev_hooked.emplace_back(mnl_attr_get_str(name));
      named = true;
    }
  };
  each_nested(hook, [&](const nlattr* a) {
    if (mnl_attr_get_type(a) == NFTA_HOOK_DEV) {
      add(a);
    } else if (mnl_attr_get_type(a) == NFTA_HOOK_DEVS) {
      each_nested(a, add);
    }
  });
  f.netdev_unnamed = f.netdev_unnamed || !named;
}

void on_chain(const nlmsghdr* nlh, dump_state& s) {
  const auto* g = static_cast<const nfgenmsg*>(mnl_nlmsg_get_payload(nlh));
  const nlattr* hook = find_attr(nlh, sizeof(nfgenmsg), NFTA_CHAIN_HOOK);
  if (g->nfgen_family == NFPROTO_NETDEV && hook != nullptr) {
    add_hooked_devices(hook, *s.facts);
  }
}

/// A dump request: `header_bytes` of family header after the netlink header.
struct request {
  alignas(nlmsghdr) std::array<char, 64> buf{};
  nlmsghdr* nlh = nullptr;
  void* header = nullptr;

  request(std::uint16_t type, std::size_t header_bytes) {
    nlh = mnl_nlmsg_put_header(buf.data());
    nlh->nlmsg_type = type;
    nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
    header = mnl_nlmsg_put_extra_header(nlh, header_bytes);
  }
};

dump_result dump_rtnl(std::uint16_t type, std::size_t header_bytes, message_handler handler,
                      dump_state& s) {
  request r(type, header_bytes);
  static_cast<rtgenmsg*>(r.header)->rtgen_family = AF_UNSPEC;
  return dump(NETLINK_ROUTE, r.nlh, header_bytes, handler, s);
}

dump_result dump_nft(std::uint16_t message, message_handler handler, dump_state& s) {
  request r(static_cast<std::uint16_t>(NFNL_SUBSYS_NFTABLES << 8 | message), sizeof(nfgenmsg));
  auto* g = static_cast<nfgenmsg*>(r.header);
  g->nfgen_family = NFPROTO_UNSPEC;
  g->version = NFNETLINK_V0;
  return dump(NETLINK_NETFILTER, r.nlh, sizeof(nfgenmsg), handler, s);
}

std::string sysctl_default_qdisc() {
  std::ifstream in("/proc/sys/net/core/default_qdisc");
  std::string kind;
  in >> kind;
  return kind;
}

}  // namespace

bool filter_facts::tc_or_xdp(unsigned ifindex) const {
  return !known || std::find(filtered_devices.begin(), filtered_devices.end(), ifindex) !=
                       filtered_devices.end();
}

bool filter_facts::netdev_rules(std::string_view ifname) const {
  return !known || netdev_unnamed ||
         std::find(netdev_hooked.begin(), netdev_hooked.end(), ifname) != netdev_hooked.end();
}

filter_facts read_filter_facts(const filter_probe_limits& limits) {
  filter_facts f;
  dump_state s{&f, limits.messages, sysctl_default_qdisc()};
  const bool tc_ok = dump_rtnl(RTM_GETQDISC, sizeof(tcmsg), on_qdisc, s) == dump_result::done;
  const bool links_ok = dump_rtnl(RTM_GETLINK, sizeof(ifinfomsg), on_link, s) == dump_result::done;
  // Without nfnetlink or nf_tables there are no nft rules to see.
  const bool tables_ok = dump_nft(NFT_MSG_GETTABLE, on_table, s) != dump_result::failed;
  const bool chains_ok = dump_nft(NFT_MSG_GETCHAIN, on_chain, s) != dump_result::failed;
  std::error_code ec;
  f.bridge_tables = f.bridge_tables || std::filesystem::exists("/sys/module/ebtables", ec);
  f.known = tc_ok && links_ok && tables_ok && chains_ok;
  return f;
}

}  // namespace unetback::direct
