#!/usr/bin/env python3
"""Writes the seed corpus of the datapath_queue fuzzer (queue_fuzz.cpp) into
corpus/. Each seed is a 9-byte configuration header followed by operations
(opcode byte + arguments), in the encoding queue_fuzz.cpp decodes."""
import os
import struct

OPS = dict(tx_slot=0, tx_extra=1, tx_publish=2, kick=3, step=4, rx_post=5, rx_publish=6,
           tap_inject=7, grant_op=8, advance_time=9, tx_rsp=10, rx_rsp=11, tap_drain=12,
           ctrl=13, mcast=14, scribble=15)


def header(features=0x0F, tx_batch=64, rx_batch=64, drop=18, fatal=20, backlog=0, stall=10,
           rate=0, queues=1):
    return bytes([features, tx_batch, rx_batch, drop, fatal, backlog, stall, rate, queues - 1])


def op(name, *args):
    return bytes([OPS[name]]) + b"".join(args)


u8 = lambda v: struct.pack("<B", v)
u16 = lambda v: struct.pack("<H", v)
u32 = lambda v: struct.pack("<I", v)


def tx_slot(sel, offset, flags, ident, size):
    return op("tx_slot", u8(sel), u16(offset), u8(flags), u16(ident), u16(size))


def tx_extra(etype, flags, p0=0, p1=0, p2=0):
    return op("tx_extra", u8(etype), u8(flags), u16(p0), u16(p1), u16(p2))


def publish_tx():
    return op("tx_publish", u8(1))


def publish_rx():
    return op("rx_publish", u8(1))


def inject(length, kind=0, flags=0, gso_type=0, hdr_len=0, gso_size=0, cstart=0, coff=0,
           first=b""):
    frame = (first + bytes(64))[:min(length, 64)]
    return op("tap_inject", u8(flags), u8(gso_type), u16(hdr_len), u16(gso_size), u16(cstart),
              u16(coff), u16(length), u8(kind)) + frame


def ctrl(ctype, d0, d1, d2):
    def word(v):
        return u8(0) + u8(v) if v < 200 else u8(200) + u32(v)
    return op("ctrl", u16(1), u8(ctype), u8(0), u32(d0)) + word(d1) + word(d2)


def finish():
    return op("step") + op("tx_rsp") + op("rx_rsp") + op("tap_drain")


ETH_IPV4_TCP = bytes.fromhex(
    "00163e0000020200000000010800"            # dst, src, IPv4
    "450000500000400040060000c6120001c612000b"  # IPv4, TCP, 198.18.0.1 -> .11
    "3039005000000001000000005010ffff00000000")  # TCP 12345 -> 80

SEEDS = {
    "tx_one_packet": header() + tx_slot(0, 0, 0, 1, 60) + publish_tx() + op("kick") + finish(),
    "tx_18_slots": header() + b"".join(
        tx_slot(i % 8, 0, 4 if i < 17 else 0, i, 1800 if i == 0 else 100) for i in range(18))
    + publish_tx() + op("kick") + finish(),
    "tx_20_slots_fatal": header() + b"".join(
        tx_slot(i % 8, 0, 4 if i < 19 else 0, i, 2000 if i == 0 else 100) for i in range(20))
    + publish_tx() + op("kick") + finish(),
    "tx_gso_extra": header() + tx_slot(1, 0, 8 | 1, 2, 1400) + tx_extra(1, 0, 1000, 1, 0)
    + publish_tx() + op("kick") + finish(),
    "tx_zero_length_slots": header() + tx_slot(0, 0, 4, 1, 60) + tx_slot(10, 0, 4, 2, 0)
    + tx_slot(10, 0, 0, 3, 0) + publish_tx() + finish(),
    "tx_page_crossing": header() + tx_slot(2, 4000, 0, 1, 200) + publish_tx() + finish(),
    "tx_mcast_add": header(features=0x4F) + tx_slot(0, 0, 8, 1, 0)
    + tx_extra(2, 0, 0x0001, 0x005e, 0x0100) + publish_tx() + finish(),
    "tx_revoked_grant": header() + op("grant_op", u8(3)) + tx_slot(3, 0, 0, 1, 100)
    + publish_tx() + finish(),
    "tx_producer_overflow": header() + tx_slot(0, 0, 0, 1, 60) + op("tx_publish", u8(0))
    + u32(0x1000) + op("kick") + finish(),
    "rx_four_frames": header() + b"".join(op("rx_post", u8(i)) for i in range(4)) + publish_rx()
    + b"".join(inject(100 + 300 * i, first=ETH_IPV4_TCP) for i in range(4)) + op("kick")
    + finish(),
    "rx_multi_slot_frame": header() + b"".join(op("rx_post", u8(i)) for i in range(3))
    + publish_rx() + inject(9000, first=ETH_IPV4_TCP) + finish(),
    "rx_bad_grant": header() + op("rx_post", u8(10)) + op("rx_post", u8(8)) + publish_rx()
    + inject(200, first=ETH_IPV4_TCP) + inject(200, first=ETH_IPV4_TCP) + finish(),
    "rx_stall": header(stall=1) + inject(300, first=ETH_IPV4_TCP) + op("step")
    + op("advance_time", u16(1000)) + op("step") + op("rx_post", u8(0)) + publish_rx() + finish(),
    "rx_gso_csum": header() + b"".join(op("rx_post", u8(i)) for i in range(8)) + publish_rx()
    + inject(3000, flags=1, gso_type=1, hdr_len=54, gso_size=1448, cstart=34, coff=16,
             first=ETH_IPV4_TCP) + finish(),
    "ctrl_toeplitz_rx_hash": header(queues=2) + ctrl(7, 1, 0, 0) + ctrl(2, 0xF, 0, 0)
    + ctrl(5, 4, 0, 0) + b"".join(op("rx_post", u8(i)) for i in range(4)) + publish_rx()
    + inject(200, first=ETH_IPV4_TCP) + finish(),
    "ctrl_mapping_overflow": header(queues=2) + ctrl(7, 1, 0, 0) + ctrl(5, 128, 0, 0)
    + ctrl(6, 0, 2, 0xFFFFFFFF) + ctrl(3, 0, 41, 0) + finish(),
    "kick_storm": header() + op("kick") * 64 + op("step") * 40 + finish(),
}

if __name__ == "__main__":
    out = os.path.join(os.path.dirname(os.path.abspath(__file__)), "corpus")
    os.makedirs(out, exist_ok=True)
    for name, data in SEEDS.items():
        with open(os.path.join(out, name), "wb") as f:
            f.write(data)
    print(f"wrote {len(SEEDS)} seeds to {out}")
