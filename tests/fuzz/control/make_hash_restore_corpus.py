#!/usr/bin/env python3
"""Writes the seed corpus of fuzz_control_hash_restore (hash_restore_fuzz.cpp).

Byte 0: queue count - 1; byte 1: mode (even: a saved file follows; odd: a
64-byte grant page then 16-byte control requests).
"""
import pathlib
import struct

OUT = pathlib.Path(__file__).parent / "corpus" / "hash_restore"
MAGIC = 0x3168736148557155  # "UqUHash1"
KEY, MAPPING = 40, 128
CONFIG_SIZE = 4 + 4 + KEY + 4 + 4 * MAPPING
TOEPLITZ = 1
SET_FLAGS, SET_KEY, SET_MAPPING_SIZE, SET_MAPPING, SET_ALGORITHM = 2, 3, 5, 6, 7


def record(alg, flags, mapping, key=bytes(KEY)):
    table = list(mapping) + [0] * (MAPPING - len(mapping))
    return (struct.pack("<QQII", MAGIC, CONFIG_SIZE, alg, flags) + key +
            struct.pack("<I", len(mapping)) + struct.pack(f"<{MAPPING}I", *table))


def req(type_, *data):
    words = list(data) + [0] * (3 - len(data))
    return struct.pack("<HH3I", 1, type_, *words)


def main():
    OUT.mkdir(parents=True, exist_ok=True)
    page = struct.pack("<16I", *([0, 1, 2, 3] * 4))
    seeds = {
        "file_valid": bytes([3, 0]) + record(TOEPLITZ, 0x3, [0, 1, 2, 3] * 8, bytes(range(KEY))),
        "file_no_hash": bytes([0, 0]) + record(0, 0, []),
        "file_entry_too_big": bytes([1, 0]) + record(TOEPLITZ, 0x1, [0, 5]),
        "file_short": bytes([1, 0]) + record(TOEPLITZ, 0x1, [0, 1])[:100],
        "file_wrong_size": bytes([1, 0]) + struct.pack("<QQ", MAGIC, 12) + bytes(CONFIG_SIZE),
        "requests_toeplitz": bytes([3, 1]) + page + req(SET_ALGORITHM, TOEPLITZ) +
        req(SET_FLAGS, 0x5) + req(SET_KEY, 0, KEY) + req(SET_MAPPING_SIZE, 16) +
        req(SET_MAPPING, 0, 16, 0),
        "requests_then_none": bytes([1, 1]) + page + req(SET_ALGORITHM, TOEPLITZ) +
        req(SET_FLAGS, 0x1) + req(SET_ALGORITHM, 0),
    }
    for name, data in seeds.items():
        (OUT / name).write_bytes(data)


if __name__ == "__main__":
    main()
