#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Record real tsarun --bash record streams as seeds for the bashprof target.

Runs each bash script given with the injector and the builtin, as
`tsarun --bash` would, collects the datagrams its processes send, and
writes them as the fuzz target reads them: each a 16-bit little-endian
length and the bytes.

    tests/fuzz/bash-seeds.py build/shell OUTDIR tests/bash/*.sh
"""
import os
import socket
import struct
import subprocess
import sys
import tempfile

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
        p = subprocess.Popen(["bash", script], env=env, stdout=subprocess.DEVNULL,
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
        with open(name, "wb") as f:
            for g in dgrams:
                f.write(struct.pack("<H", len(g)) + g)
        print(f"{name}: {len(dgrams)} datagrams, {sum(map(len, dgrams))} bytes")
