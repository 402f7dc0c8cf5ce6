# SPDX-License-Identifier: MIT
# A script that forges trap records (tests/integration/60-bash.sh, issue 23):
# STREAMS streams that each define text id 65535 (a 512 KiB table each, once),
# and one that defines 9,000 ids (past the 8,192 a stream holds). Then it
# waits for the supervisor (its parent) to read them and writes the
# supervisor's peak RSS (VmHWM, kB) to $1.
out=$1 streams=${2:-2000}
/usr/bin/python3 - "$TSARUN_BASH_SOCK" "$streams" <<'PY'
import socket, struct, sys

path, streams = sys.argv[1], int(sys.argv[2])
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.connect(path)
MAGIC, VERSION = 0x42415354, 3

def chunk(pid, seq, recs):
    return struct.pack("=IHHIIII", MAGIC, VERSION, 24, pid, 1, seq, len(recs)) + b"".join(recs)

def hello(pid):
    # type, flags, len, arg (TSA_HELLO_START); t, cpu, child_cpu; pid, ppid,
    # parent_gen, fork_index, subshell_env, subshell_level, hflags (none),
    # bash_version; then the costs and the rest, zero.
    return struct.pack("=BBHI3Q8I", 1, 0, 104, 0, 1000, 0, 0, pid, 1, 0, 0, 0, 0, 0, 502) + bytes(104 - 64)

def text(i, t):
    b = t.encode()
    b += bytes(-len(b) % 8)
    return struct.pack("=BBHI", 2, 0, 8 + len(b), i) + b

for k in range(streams):
    s.send(chunk(4000000 + k, 0, [hello(4000000 + k), text(65535, "x")]))
pid, seq, recs = 3999999, 1, []
s.send(chunk(pid, 0, [hello(pid)]))
for i in range(1, 9001):
    recs.append(text(i, "t%d" % i))
    if len(recs) == 500:
        s.send(chunk(pid, seq, recs))
        seq += len(recs)
        recs = []
PY
# The supervisor reads as they come; give it the last ones.
sleep 1
grep VmHWM "/proc/$PPID/status" | tr -dc 0-9 >"$out"
