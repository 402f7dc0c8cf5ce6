#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Seeds for the symbolize fuzz target: a workload's ELF file and a stack.

    tests/fuzz/symbolize-seeds.py OUTDIR ELF...
"""
import os
import struct
import subprocess
import sys

BASE = 0x400000
out = sys.argv[1]
os.makedirs(out, exist_ok=True)
for elf in sys.argv[2:]:
    data = open(elf, "rb").read()
    syms = {}
    for line in subprocess.run(["nm", elf], capture_output=True, text=True).stdout.splitlines():
        f = line.split()
        if len(f) == 3 and f[1] in "Tt":
            syms[f[2]] = int(f[0], 16)
    main = syms.get("main", 0x1000)
    sp = 0x7ffd0000
    # ip a few bytes into main, two frame-pointer frames, a stack holding return addresses
    fps = [BASE + main + 4, BASE + main + 20]
    region = b"".join(struct.pack("<Q", v) for v in [sp + 64, BASE + main + 20, 0, sp + 128] * 8)
    seed = struct.pack("<I", len(data)) + data + struct.pack("<QQQ", BASE + main + 4, sp, sp + 64)
    seed += bytes([len(fps)]) + b"".join(struct.pack("<Q", v) for v in fps) + region
    name = os.path.join(out, "seed-" + os.path.basename(elf))
    open(name, "wb").write(seed)
    print(name, len(seed))
