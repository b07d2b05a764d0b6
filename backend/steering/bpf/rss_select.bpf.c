/* TAP queue selection by the guest's Toeplitz hash mapping (netif.h control
 * ring, XEN_NETIF_CTRL_TYPE_SET_HASH_*), attached to a vif's TAP with
 * TUNSETSTEERINGEBPF: the TAP runs it for every frame the host sends to the
 * guest, and puts the frame on TAP queue (return value % queues), which one
 * unetbackd worker forwards to the same-numbered netif RX queue.
 *
 * The hash input follows unetback::rings::build_hash_input (Linux
 * xenvif_set_skb_hash): the TCP 4-tuple of an unfragmented TCP packet when
 * that type is enabled, else the address pair when enabled, else no hash
 * (hash 0, so mapping[0]). Headers are parsed with the same bounds as the
 * daemon's parser so both agree on every frame. */
/* bpf_helpers.h needs the types of linux/bpf.h first. */
/* clang-format off */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
/* clang-format on */

#include "rss_table.h"

struct {
  __uint(type, BPF_MAP_TYPE_HASH);
  __uint(max_entries, 256); /* set by the loader */
  __uint(map_flags, BPF_F_NO_PREALLOC);
  __type(key, __u32); /* TAP ifindex */
  __type(value, struct unetback_rss_table);
} unetback_rss_tables SEC(".maps");

struct hash_input {
  __u8 bytes[UNETBACK_RSS_MAX_INPUT];
  __u32 len;
};

#define ETH_P_IPV4 0x0800
#define ETH_P_IPV6 0x86DD
#define ETH_P_VLAN 0x8100
#define ETH_P_QINQ 0x88A8
#define IPPROTO_TCP_ 6
#define MAX_IPV6_EXT_HEADERS 8 /* rings::max_ipv6_ext_headers */

static __always_inline __u32 be16(const __u8* p) {
  return (__u32)p[0] << 8 | p[1];
}

static __always_inline int load(struct __sk_buff* skb, __u32 off, void* to, __u32 len) {
  return bpf_skb_load_bytes_relative(skb, off, to, len, BPF_HDR_START_MAC);
}

/* Appends the TCP ports at `l4` if the TCP header is sane within `avail`. */
static __always_inline int add_tcp_ports(struct __sk_buff* skb, __u32 l4, __u32 avail,
                                         struct hash_input* in) {
  __u8 tcp[14];
  if (avail < 20 || load(skb, l4, tcp, sizeof(tcp)) != 0) {
    return 0;
  }
  __u32 doff = (__u32)(tcp[12] >> 4) * 4;
  if (doff < 20 || doff > avail) {
    return 0;
  }
  __u32 at = in->len;
  if (at > UNETBACK_RSS_MAX_INPUT - 4) {
    return 0;
  }
  __builtin_memcpy(&in->bytes[at], tcp, 4);
  in->len = at + 4;
  return 1;
}

static __always_inline int ipv4_input(struct __sk_buff* skb, __u32 l3, __u32 flags,
                                      struct hash_input* in) {
  __u8 ip[20];
  if (load(skb, l3, ip, sizeof(ip)) != 0 || (ip[0] >> 4) != 4) {
    return 0;
  }
  __u32 ihl = (__u32)(ip[0] & 0x0F) * 4;
  __u32 tot_len = be16(ip + 2);
  if (ihl < 20 || tot_len < ihl || skb->len - l3 < tot_len) {
    return 0;
  }
  int fragment = (be16(ip + 6) & 0x3FFF) != 0;
  __builtin_memcpy(in->bytes, ip + 12, 8);
  in->len = 8;
  if ((flags & UNETBACK_RSS_TYPE_IPV4_TCP) && ip[9] == IPPROTO_TCP_ && !fragment &&
      add_tcp_ports(skb, l3 + ihl, tot_len - ihl, in)) {
    return 1;
  }
  return (flags & UNETBACK_RSS_TYPE_IPV4) != 0;
}

static __always_inline int ipv6_input(struct __sk_buff* skb, __u32 l3, __u32 flags,
                                      struct hash_input* in) {
  __u8 ip[40];
  if (load(skb, l3, ip, sizeof(ip)) != 0 || (ip[0] >> 4) != 6) {
    return 0;
  }
  __u32 payload = be16(ip + 4);
  if (payload == 0 || skb->len - l3 - 40 < payload) {
    return 0; /* jumbogram or truncated */
  }
  __u32 off = l3 + 40;
  __u32 end = off + payload;
  __u32 nh = ip[6];
  int fragment = 0;
  int done = 0;
#pragma unroll
  for (int i = 0; i <= MAX_IPV6_EXT_HEADERS; ++i) {
    if (!done) {
      if (nh != 0 && nh != 43 && nh != 60 && nh != 44 && nh != 51) {
        done = 1;
      } else {
        __u8 ext[4];
        if (i == MAX_IPV6_EXT_HEADERS || end - off < 8 || load(skb, off, ext, 4) != 0) {
          return 0; /* chain too long or truncated: the daemon parses no hash either */
        }
        __u32 len = 8;
        if (nh == 44) {
          fragment = fragment || (be16(ext + 2) & 0xFFF9) != 0;
        } else if (nh == 51) {
          len = ((__u32)ext[1] + 2) * 4;
        } else {
          len = ((__u32)ext[1] + 1) * 8;
        }
        if (end - off < len) {
          return 0;
        }
        nh = ext[0];
        off += len;
      }
    }
  }
  __builtin_memcpy(in->bytes, ip + 8, 32);
  in->len = 32;
  if ((flags & UNETBACK_RSS_TYPE_IPV6_TCP) && nh == IPPROTO_TCP_ && !fragment &&
      add_tcp_ports(skb, off, end - off, in)) {
    return 1;
  }
  return (flags & UNETBACK_RSS_TYPE_IPV6) != 0;
}

static __always_inline int hash_input_of(struct __sk_buff* skb, __u32 flags,
                                         struct hash_input* in) {
  __u8 eth[14];
  if (load(skb, 0, eth, sizeof(eth)) != 0) {
    return 0;
  }
  __u32 ethertype = be16(eth + 12);
  __u32 l3 = 14;
  if (ethertype == ETH_P_VLAN || ethertype == ETH_P_QINQ) {
    __u8 inner[2];
    if (load(skb, 16, inner, sizeof(inner)) != 0) {
      return 0;
    }
    ethertype = be16(inner);
    l3 = 18;
  }
  if (ethertype == ETH_P_IPV4) {
    return ipv4_input(skb, l3, flags, in);
  }
  if (ethertype == ETH_P_IPV6) {
    return ipv6_input(skb, l3, flags, in);
  }
  return 0;
}

SEC("socket")
int unetback_rss_select(struct __sk_buff* skb) {
  __u32 ifindex = skb->ifindex;
  struct unetback_rss_table* t = bpf_map_lookup_elem(&unetback_rss_tables, &ifindex);
  if (!t) {
    return 0;
  }
  struct hash_input in;
  __builtin_memset(&in, 0, sizeof(in));
  __u32 hash = 0;
  if (hash_input_of(skb, t->flags, &in)) {
#pragma unroll
    for (int i = 0; i < UNETBACK_RSS_MAX_INPUT; ++i) {
      if (i < in.len) {
        /* The empty asm hides the byte's range from clang, so it keeps the
         * mask: without it clang reads the input 8 bytes at a time and
         * indexes with a shifted word, whose range Debian 12's 6.1
         * verifier loses when the word is spilled to the stack ("unbounded
         * memory access"). */
        __u32 byte = in.bytes[i];
        asm volatile("" : "+r"(byte));
        hash ^= t->toeplitz[i][byte & 0xFF];
      }
    }
  }
  __u32 size = t->mapping_size;
  if (size == 0) {
    return hash; /* the TAP takes it modulo its queue count */
  }
  __u32 slot = hash % size;
  if (slot >= UNETBACK_RSS_MAX_MAPPING) {
    return 0;
  }
  return t->mapping[slot];
}
