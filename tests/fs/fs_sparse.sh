#!/usr/bin/env bash
# A write far past a tensor's end grows it without copying the hole: the
# daemon's resident memory stays flat while two 100-byte writes at 1 GiB and
# 2 GiB grow a 4 KiB tensor, and every written byte reads back.
. "$(dirname "$0")/lib.sh"
mount_fs
T=$MNT/tensors/device0

rss_kib() { awk '$1 == "VmRSS:" { print $2 }' "/proc/$PID/status"; }

head -c 4096 /dev/urandom >"$WORK/head"
cp "$WORK/head" "$T/s" || fail "4 KiB tensor"
before=$(rss_kib)
python3 - "$T/s" <<'PY' || fail "writes past the end"
import os, sys
fd = os.open(sys.argv[1], os.O_WRONLY)
for gib in (1, 2):
    assert os.pwrite(fd, bytes([gib]) * 100, gib << 30) == 100
os.close(fd)
PY
after=$(rss_kib)
expect_eq "$(stat -c %s "$T/s")" $(((2 << 30) + 100)) "size after the writes"
grown=$(((after - before) / 1024))
[ "$grown" -lt 64 ] || fail "resident memory grew by $grown MiB for 200 written bytes"
cmp -n 4096 "$WORK/head" "$T/s" || fail "the first 4 KiB changed"
python3 - "$T/s" <<'PY' || fail "bytes at 1 GiB and 2 GiB"
import os, sys
fd = os.open(sys.argv[1], os.O_RDONLY)
for gib in (1, 2):
    assert os.pread(fd, 100, gib << 30) == bytes([gib]) * 100, gib
os.close(fd)
PY
rm "$T/s" || fail "rm"
stop_fs
expect_eq "$STATUS" 0 "exit status after SIGTERM"
