#!/usr/bin/env bash
# The mount tree: every file can be read, modes say what can be done, the
# README names every file, flat stats equal JSON stats, and nothing can be
# created where it does not belong.
INI_TEXT='[device]
count = 2
capacity = 4GiB'
. "$(dirname "$0")/lib.sh"
mount_fs

# cat every file, as a person exploring the mount would.
files=$(cd "$MNT" && find . -type f | sed 's|^\./||' | sort)
for f in $files; do
	cat "$MNT/$f" >/dev/null || fail "cat $f"
	case "$f" in oom/* | trace/*) continue ;; esac # empty until an OOM, a recording
	[ -s "$MNT/$f" ] || [ -n "$(cat "$MNT/$f")" ] || fail "$f is empty"
done

# README lists one row per file of the node table, deviceN for a device,
# streamS for a stream and NAME for a name that comes and goes. Each file
# is one row's, and each row without NAME is there for both devices: the
# file count comes from the table, not from this test. trace_pipe/, the
# one folder whose files wait, is there by name but never listed.
rows=$(grep -E '^[^ ]+ +0[0-7]{3}  ' "$MNT/README" | cut -d' ' -f1)
[ -n "$rows" ] || fail "README lists no files"
regexes=$(echo "$rows" | sed 's/\./\\./g; s/NAME/[^\/]+/g; s/deviceN/device[0-9]+/g; s/streamS/stream[1-8]/g; s/^/^/; s/$/$/')
echo "$files" | awk -v res="$regexes" '
	BEGIN { n = split(res, r, "\n") }
	{ c = 0; for (i = 1; i <= n; i++) if ($0 ~ r[i]) c++ }
	c != 1 { print "FAIL: " $0 " is a file of " c " README rows, not 1" > "/dev/stderr"; bad = 1 }
	END { exit bad }' || fail "files and README rows disagree"
expected=0
for row in $rows; do
	case "$row" in *NAME*) continue ;; esac
	for dev in 0 1; do
		f=$(echo "$row" | sed "s/deviceN/device$dev/g")
		[ -f "$MNT/$f" ] || fail "README row $row has no file $f"
		case "$row" in trace_pipe/*) continue ;; esac
		expected=$((expected + 1))
		case "$row" in *deviceN*) ;; *) break ;; esac
	done
done
# Of the NAME rows, only allocators/ has files now: the built-in allocator.
allocators=$(cd "$MNT" && ls allocators | tr '\n' ' ')
expect_eq "$allocators" "caching.device0 caching.device1 " "allocators/ of a fresh mount"
expect_eq "$(echo "$files" | wc -l)" $((expected + 2)) "number of files with 2 devices"
ls "$MNT/tensors/device0" | grep -q . && fail "tensors/device0 is not empty"

# Modes.
expect_eq "$(stat -c %a "$MNT/README")" 444 "README mode"
expect_eq "$(stat -c %a "$MNT/stats/device1")" 444 "stats mode"
expect_eq "$(stat -c %a "$MNT/ctl/empty_cache")" 600 "ctl mode"
expect_eq "$(stat -c %a "$MNT/devices/device0/memory_fraction")" 600 "memory_fraction mode"
expect_eq "$(stat -c %a "$MNT/workload/replay")" 600 "workload/replay mode"
expect_eq "$(stat -c %a "$MNT/tensors/device1")" 755 "tensor folder mode"
expect_eq "$(stat -c %s "$MNT/stats/device0")" "$(wc -c <"$MNT/stats/device0")" \
	"a generated file's size is the length of its text"

# Without allow_other the owner alone gets in, and the daemon answers
# access(2) from the modes (the kernel's default_permissions would refresh
# every path component's attributes on every open); test -w is the truth
# for root too, whom the kernel's check would let write a 0444 file.
grep -q "^npumemfs $MNT .*default_permissions" /proc/mounts &&
	fail "default_permissions is on without allow_other"
python3 - "$MNT" <<'PY' || fail "access(2) disagrees with the modes"
import os, stat, sys
for root, dirs, files in os.walk(sys.argv[1]):
    for name in dirs + files:
        p = os.path.join(root, name)
        mode = os.stat(p).st_mode
        for bit, ok in ((0o400, os.R_OK), (0o200, os.W_OK), (0o100, os.X_OK)):
            want = bool(mode & bit)
            if os.access(p, ok) != want:
                sys.exit(f"{p}: access {ok} says {not want}, mode {stat.filemode(mode)}")
PY
[ -w "$MNT/stats/device0" ] && fail "test -w says stats/device0 is writable"
[ -w "$MNT/ctl/empty_cache" ] || fail "test -w says ctl/empty_cache is not writable"

# Contents.
grep -q '^count = 2$' "$MNT/config" || fail "config does not show count = 2"
expect_eq "$(cat "$MNT/devices/device1/mem_info")" "4294967296 4294967296" "mem_info of an idle device"
expect_eq "$(value memory_fraction 1)" 1 "default memory_fraction"
grep -q '^state: idle$' "$MNT/workload/replay" || fail "replay is not idle"
grep -q 'mounted on' "$MNT/log" || fail "log does not say it mounted"
head -c 40 "$MNT/summary/device0" | grep -q '=====' || fail "summary has no table"
python3 -c "import json,sys; json.load(open(sys.argv[1]))" "$MNT/snapshot/device0.json" \
	|| fail "snapshot is not JSON"
check_stats_consistent 0
check_stats_consistent 1

# Nothing new outside tensors, nothing removed, read-only stays read-only
# (root passes the kernel's mode check, so the daemon refuses by itself).
expect_fail "echo x > '$MNT/newfile'" "Permission denied"
expect_fail "echo x > '$MNT/ctl/new'" "Permission denied"
expect_fail "mkdir '$MNT/stats/more'" "Permission denied"
expect_fail "rm '$MNT/README'" "Permission denied"
expect_fail "echo 1 > '$MNT/stats/device0'" "Permission denied"
expect_fail "chmod 666 '$MNT/README'" "Operation not permitted"
expect_fail "cat '$MNT/stats/device2'" "No such file or directory"

# One open file shows one moment; a read at offset 0 again shows the next.
python3 - "$MNT" <<'PY' || fail "reopen/refresh semantics"
import os, sys
mnt = sys.argv[1]
f = open(f"{mnt}/devices/device0/memory_allocated", "rb", buffering=0)
before = f.read()
assert f.read() == b"", "a read past the end must return nothing"
fd = os.open(f"{mnt}/tensors/device0/t", os.O_CREAT | os.O_WRONLY, 0o600)
os.ftruncate(fd, 1 << 20)
os.close(fd)
f.seek(0)
after = f.read()
assert before == b"0\n", before
assert after == b"1049088\n", after
os.unlink(f"{mnt}/tensors/device0/t")
PY

stop_fs
expect_eq "$STATUS" 0 "exit status after SIGTERM"
