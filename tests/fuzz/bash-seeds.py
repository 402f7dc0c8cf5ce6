#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Record real tsarun --bash record streams as seeds for the bashprof target.

Runs each bash script given with the injector and the builtin, as
`tsarun --bash` would, collects the datagrams its processes send, and
writes them as the fuzz target reads them: each a 16-bit little-endian
length and the bytes.

    tests/fuzz/bash-seeds.py build/shell OUTDIR tests/bash/*.sh

With --tree TSARUN first, each script runs under `TSARUN -- bash SCRIPT`
(plain mode: the injector is this script's, tsarun only watches), and the
seed is for the bashtree target: the run's origin and processes from the
artifact, then the datagrams (tests/fuzz/fuzz_bashtree.c).
"""
import json
import os
import socket
import struct
import subprocess
import sys
import tempfile

tsarun = None
if sys.argv[1] == "--tree":
    tsarun = sys.argv[2]
    del sys.argv[1:3]
def tree_head(art, dgrams):
    """The run's origin and processes, as fuzz_bashtree.c reads them.

    The artifact's times are relative to a start it does not state: the
    origin is taken where a forked bash's first record meets its process's
    start (a fork's first trap runs within a millisecond of it)."""
    procs = json.load(open(art))["runs"][-1]["processes"][:255]
    start = {p["pid"]: p["start_ns"] for p in procs}
    origin = None
    for g in dgrams:
        if len(g) < 24 + 8 + 16:
            continue
        pid = struct.unpack_from("<I", g, 8)[0]
        typ, _, _, how = struct.unpack_from("<BBHI", g, 24)
        if typ == 1 and how == 1 and pid in start:
            t = struct.unpack_from("<Q", g, 32)[0]
            o = t - start[pid] - 200000
            origin = o if origin is None else min(origin, o)
    head = struct.pack("<QB", origin or 0, len(procs))
    for p in procs:
        st = {t["tid"]: t for t in json.load(open(art))["runs"][-1]["threads"]}.get(p["pid"], {})
        head += struct.pack("<IIqqQQ8s", p["pid"], p["ppid"], p["start_ns"], p["end_ns"] or 0,
                            st.get("on_cpu_ns", 0), st.get("runqueue_ns", 0),
                            p["comm"].encode()[:8])
    return head


libdir, outdir, scripts = sys.argv[1], sys.argv[2], sys.argv[3:]
os.makedirs(outdir, exist_ok=True)
for script in scripts:
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "records")
        s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        s.bind(path)
        s.setblocking(False)
        env = dict(os.environ, BASH_ENV=os.path.join(libdir, "tsarun-env.bash"),
                   TSARUN_BASH_SOCK=path, TSARUN_BASH_SO=os.path.join(libdir, "tsarun-trap.so"))
        env.pop("TSARUN_BASH_ROOT", None)
        dgrams = []
        art = os.path.join(d, "run.json")
        cmd = ["bash", script]
        if tsarun:
            cmd = [tsarun, "-q", "--json", art, "--"] + cmd
        p = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL,
                             stderr=subprocess.DEVNULL)
        while True:
            try:
                dgrams.append(s.recv(65536))
                continue
            except BlockingIOError:
                pass
            if p.poll() is not None:
                try:
                    while True:
                        dgrams.append(s.recv(65536))
                except BlockingIOError:
                    break
            else:
                import select
                select.select([s], [], [], 0.05)
        # Start-up measurement chunks (pid 0) are dropped by the reader: not seeds.
        dgrams = [g for g in dgrams if len(g) < 12 or struct.unpack_from("<I", g, 8)[0] != 0]
        name = os.path.join(outdir, "seed-" + os.path.basename(script).replace(".sh", ""))
        head = b""
        if tsarun:
            head = tree_head(art, dgrams)
        with open(name, "wb") as f:
            f.write(head)
            for g in dgrams:
                f.write(struct.pack("<H", len(g)) + g)
        print(f"{name}: {len(dgrams)} datagrams, {sum(map(len, dgrams))} bytes")
