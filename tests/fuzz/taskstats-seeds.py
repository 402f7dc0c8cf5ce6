#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Seeds for the taskstats fuzz target: exit messages as the kernel sends them.

    tests/fuzz/taskstats-seeds.py tests/fuzz/corpus/taskstats
"""
import os
import struct
import sys

FAMILY = 30  # the target's family id
out = sys.argv[1]
os.makedirs(out, exist_ok=True)


def nla(t, payload):
    n = 4 + len(payload)
    return struct.pack("=HH", n, t) + payload + b"\0" * ((4 - n % 4) % 4)


def stats(version, size, pid, comm=b"worker"):
    b = bytearray(size)
    struct.pack_into("=HxxI", b, 0, version, 0)  # version, ac_exitcode
    b[8] = 0  # ac_flag
    if size >= 32:
        struct.pack_into("=Q", b, 16, 7)  # cpu_count
    if size >= 300:
        b[0x70:0x70 + len(comm)] = comm  # somewhere in ac_comm's area
    if size >= 320:
        struct.pack_into("=I", b, 0x130 - 8, pid)
    return bytes(b)


def message(payloads):
    body = b"".join(payloads)
    genl = struct.pack("=BBH", 3, 1, 0)  # TASKSTATS_CMD_NEW, version 1
    n = 16 + len(genl) + len(body)
    return struct.pack("=IHHII", n, FAMILY, 0, 1, 0) + genl + body


def exit_record(version, size, pid):
    return nla(4, nla(1, struct.pack("=I", pid)) + nla(3, stats(version, size, pid)))


seeds = {
    "v16-one": message([exit_record(16, 560, 4242)]),
    "v16-two": message([exit_record(16, 560, 1)]) + message([exit_record(16, 560, 2)]),
    "v15": message([exit_record(15, 416, 7)]),
    "v10-short": message([exit_record(10, 328, 9)]),
    "v14-with-tgid": message([exit_record(14, 400, 11), nla(5, nla(2, struct.pack("=I", 11)))]),
    "error-ack": struct.pack("=IHHIIi", 36, 2, 0, 1, 0, 0) + b"\0" * 16,
    "bare-v16": stats(16, 560, 5),
}
for name, data in seeds.items():
    with open(os.path.join(out, name), "wb") as f:
        f.write(data)
