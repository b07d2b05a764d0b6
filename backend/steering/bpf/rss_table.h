/* The per-vif receive-side-scaling table shared by unetbackd (C++) and the
 * steering program (BPF C), one map value per TAP ifindex. Layout is ABI
 * between the two: change both together. */
#ifndef UNETBACK_STEERING_RSS_TABLE_H
#define UNETBACK_STEERING_RSS_TABLE_H

#include <linux/types.h>

/* netif.h XEN_NETBK_MAX_HASH_MAPPING_SIZE and the longest hash input
 * (IPV6_TCP: two addresses and two ports). */
#define UNETBACK_RSS_MAX_MAPPING 128
#define UNETBACK_RSS_MAX_INPUT 36

/* XEN_NETIF_CTRL_HASH_TYPE_* (netif.h). */
#define UNETBACK_RSS_TYPE_IPV4 (1U << 0)
#define UNETBACK_RSS_TYPE_IPV4_TCP (1U << 1)
#define UNETBACK_RSS_TYPE_IPV6 (1U << 2)
#define UNETBACK_RSS_TYPE_IPV6_TCP (1U << 3)

struct unetback_rss_table {
  /* Enabled XEN_NETIF_CTRL_HASH_TYPE_* bits. */
  __u32 flags;
  /* Entries of `mapping` in use; 0: the queue is hash % queues. */
  __u32 mapping_size;
  __u32 mapping[UNETBACK_RSS_MAX_MAPPING];
  /* Toeplitz hash folded per input byte: the hash of an input is the XOR of
   * toeplitz[i][input[i]] over its bytes (precomputed from the guest's key,
   * so the program needs no bit loop). */
  __u32 toeplitz[UNETBACK_RSS_MAX_INPUT][256];
};

#endif
