#!/usr/bin/env bash
# The tools people copy, archive, compare and follow files with, run
# against the mount: each must see a size that matches the bytes it reads.
INI_TEXT='[device]
count = 1
capacity = 4GiB'
. "$(dirname "$0")/lib.sh"
mount_fs
OUT=$WORK/out
mkdir "$OUT"
truncate -s 3M "$MNT/tensors/device0/w" || fail "3M tensor"
# With history on, every rendering of a pickle adds an entry to it: a file
# whose size changes at each open.
echo all >"$MNT/ctl/record_memory_history"

# Python's shutil: copyfile uses os.sendfile on Linux, so a size of 0 made
# empty copies; sendfile itself must return the bytes.
python3 - "$MNT" "$OUT" <<'PY' || fail "shutil and sendfile"
import os, shutil, sys
mnt, out = sys.argv[1], sys.argv[2]
shutil.copy(f"{mnt}/README", f"{out}/README")
shutil.copyfile(f"{mnt}/stats/device0", f"{out}/stats")
shutil.copy2(f"{mnt}/summary/device0", f"{out}/summary")
readme = open(f"{mnt}/README").read()
if open(f"{out}/README").read() != readme:
    sys.exit("shutil.copy of README differs from a read of it")
stats = open(f"{out}/stats").read().splitlines()
if len(stats) != 123 or "allocated_bytes.all.current 3146240" not in stats:
    sys.exit(f"shutil.copyfile of stats/device0: {len(stats)} lines")
if "Active memory" not in open(f"{out}/summary").read():
    sys.exit("shutil.copy2 of summary/device0 lost the table")
with open(f"{mnt}/metrics/npumemfs.prom", "rb") as src, open(f"{out}/prom", "wb") as dst:
    sent = os.sendfile(dst.fileno(), src.fileno(), 0, 1 << 23)
    if sent == 0 or sent != os.fstat(src.fileno()).st_size:
        sys.exit(f"os.sendfile sent {sent} bytes of {os.fstat(src.fileno()).st_size}")
PY

# The size a stat gives is the size an open after it reads, file by file.
python3 - "$MNT" <<'PY' || fail "stat sizes"
import os, sys
mnt = sys.argv[1]
for rel in ("README", "config", "stats/device0", "stats/device0.json", "summary/device0",
            "snapshot/device0.json", "snapshot/device0.pickle", "metrics/npumemfs.prom",
            "devices/device0/memory_allocated", "ctl/empty_cache", "workload/replay"):
    size = os.stat(f"{mnt}/{rel}").st_size
    with open(f"{mnt}/{rel}", "rb") as f:
        data = f.read()
        if size == 0 or len(data) != size or os.fstat(f.fileno()).st_size != size:
            sys.exit(f"{rel}: stat says {size}, a read gave {len(data)}")
PY

# tar stores what a read returns, and warns of no change.
tar -cf "$WORK/a.tar" -C "$MNT" README stats summary devices snapshot 2>"$WORK/tar.err" \
	|| fail "tar failed: $(cat "$WORK/tar.err")"
[ -s "$WORK/tar.err" ] && fail "tar warned: $(cat "$WORK/tar.err")"
tar -xf "$WORK/a.tar" -C "$OUT" || fail "tar -x"
cmp -s "$OUT/README" "$MNT/README" || fail "README from tar differs"
expect_eq "$(cat "$OUT/devices/device0/memory_allocated")" 3146240 "memory_allocated from tar"
grep -q 'reserved_bytes.all.current 20971520' "$OUT/stats/device0" || fail "stats from tar"

# cmp -s and filecmp call identical content identical (both look at sizes).
cat "$MNT/stats/device0" >"$OUT/stats0"
cmp -s "$MNT/stats/device0" "$OUT/stats0" || fail "cmp -s: a copy differs from the file"
printf 'x' >>"$OUT/stats0"
cmp -s "$MNT/stats/device0" "$OUT/stats0" && fail "cmp -s: a longer file is the same"
python3 - "$MNT" "$OUT" <<'PY' || fail "filecmp"
import filecmp, shutil, sys
mnt, out = sys.argv[1], sys.argv[2]
shutil.copy(f"{mnt}/summary/device0", f"{out}/summary0")
if not filecmp.cmp(f"{mnt}/summary/device0", f"{out}/summary0", shallow=False):
    sys.exit("filecmp.cmp(shallow=False): a copy differs")
if not filecmp.cmp(f"{mnt}/README", f"{out}/README"):
    sys.exit("filecmp.cmp: README and its copy differ")
PY

# tail -f follows log: lines logged after it starts appear.
tail -n 2 -f "$MNT/log" >"$WORK/tail.out" 2>"$WORK/tail.err" &
TAIL=$!
sleep 1.2
echo nonsense >"$MNT/ctl/empty_cache" 2>/dev/null
echo device0 >"$MNT/ctl/reset_peak_stats"
for _ in $(seq 50); do
	grep -q "'nonsense' is not" "$WORK/tail.out" && grep -q "reset_peak" "$WORK/tail.out" && break
	sleep 0.1
done
kill "$TAIL"
wait "$TAIL" 2>/dev/null
grep -q "'nonsense' is not" "$WORK/tail.out" || fail "tail -f missed a new line: $(cat "$WORK/tail.out")"
grep -q "reset_peak" "$WORK/tail.out" || fail "tail -f missed the second line"
[ -s "$WORK/tail.err" ] && fail "tail -f complained: $(cat "$WORK/tail.err")"
expect_eq "$(wc -l <"$WORK/tail.out")" 4 "tail -n 2 -f: two old lines and two new"

# head -n 1 of the trace pipe: one line, no complaint about seeking.
truncate -s 5M "$MNT/tensors/device0/h"
rm "$MNT/tensors/device0/h"
head -n 1 "$MNT/trace_pipe/device0" >"$WORK/head.out" 2>"$WORK/head.err" || fail "head -n 1 failed"
[ -s "$WORK/head.err" ] && fail "head -n 1 complained: $(cat "$WORK/head.err")"
expect_eq "$(wc -l <"$WORK/head.out")" 1 "lines from head -n 1"
grep -q '^{"action":"' "$WORK/head.out" || fail "head -n 1: $(cat "$WORK/head.out")"
# The same open read on: what head gave back comes next.
python3 - "$MNT" <<'PY' || fail "reading on after a seek back"
import os, sys
fd = os.open(f"{sys.argv[1]}/trace_pipe/device0", os.O_RDONLY | os.O_NONBLOCK)
first = os.read(fd, 4096)
line = first[: first.index(b"\n") + 1]
os.lseek(fd, len(line), os.SEEK_SET)
again = os.read(fd, 4096)
if not first[len(line):].startswith(again[:len(first) - len(line)]) or not again:
    sys.exit("after a seek back, the bytes given back did not come again")
PY

# An event loop polls what it reads (Go's, in node_exporter): every file is
# ready, and the daemon keeps no poll handle (LeakSanitizer checks at exit).
python3 - "$MNT" <<'PY' || fail "poll"
import os, select, sys
for name in ("stats/device0", "metrics/npumemfs.prom", "log"):
    fd = os.open(f"{sys.argv[1]}/{name}", os.O_RDONLY)
    p = select.poll()
    p.register(fd, select.POLLIN)
    events = p.poll(1000)
    if not events or not events[0][1] & select.POLLIN:
        sys.exit(f"{name}: poll gave {events}")
    os.close(fd)
PY

stop_fs
expect_eq "$STATUS" 0 "exit status after SIGTERM"
