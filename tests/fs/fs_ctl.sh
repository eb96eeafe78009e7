#!/usr/bin/env bash
# Control files: each accepts exactly its syntax; anything else fails with
# the errno that fits, changes nothing, and is explained in log and in
# last_error.
INI_TEXT='[device]
count = 2
capacity = 4GiB'
. "$(dirname "$0")/lib.sh"
mount_fs

# The values only: a refusal changes last_error and nothing else.
state() {
	cat "$MNT"/stats/device0 "$MNT"/stats/device1
	head -qn 1 "$MNT"/devices/device*/memory_fraction
}

# A bad write (printf escapes allowed): the shell's message, last_error, log, and no change.
bad() { # file value message last_error
	local before
	before=$(state)
	expect_fail "printf '$2' > '$MNT/$1'" "$3"
	[ "$(state)" = "$before" ] || fail "writing '$2' to $1 changed: $(diff <(echo "$before") <(state) | head -5)"
	grep -qF "last_error: $4" "$MNT/$1" || fail "$1 does not show last_error: $4"
	grep -qF "${1}: $4" "$MNT/log" || fail "log does not explain '$2' to $1"
}

truncate -s 64M "$MNT/tensors/device0/a"
rm "$MNT/tensors/device0/a"
for f in ctl/empty_cache ctl/reset_peak_stats ctl/reset_accumulated_stats; do
	grep -q '^last_error: none$' "$MNT/$f" || fail "$f has an error at start"
	bad "$f" 2 "Invalid argument" "'2' is not 1 or deviceN"
	bad "$f" "\\n" "Invalid argument" "'' is not 1 or deviceN"
	bad "$f" "1 1" "Invalid argument" "'1 1' is not 1 or deviceN"
	bad "$f" "device" "Invalid argument" "'device' is not 1 or deviceN"
	bad "$f" "device0x" "Invalid argument" "'device0x' is not 1 or deviceN"
	bad "$f" "device2" "No such device" "no device 2 (devices are 0..1)"
done
bad devices/device0/memory_fraction 1.5 "Invalid argument" \
	"'1.5' is not a number f with 0 <= f <= 1"
bad devices/device0/memory_fraction 50%% "Invalid argument" \
	"'50%' is not a number f with 0 <= f <= 1"
bad devices/device1/memory_fraction half "Invalid argument" \
	"'half' is not a number f with 0 <= f <= 1"
bad devices/device1/memory_fraction nan "Invalid argument" \
	"'nan' is not a number f with 0 <= f <= 1"
bad devices/device1/memory_fraction inf "Invalid argument" \
	"'inf' is not a number f with 0 <= f <= 1"
bad workload/replay traces/a.trace "Invalid argument" \
	"'traces/a.trace' is not an absolute trace path"
bad workload/replay /nonexistent.trace "No such file or directory" \
	"/nonexistent.trace"

# Two newlines in one write, and a write not at offset 0, are refused.
python3 - "$MNT/ctl/empty_cache" <<'PY' || fail "a malformed write was accepted"
import errno, os, sys
for data, off in ((b"1\n\n", 0), (b"1", 5)):
    fd = os.open(sys.argv[1], os.O_WRONLY)
    try:
        os.pwrite(fd, data, off)
        sys.exit(f"{data!r} at {off} accepted")
    except OSError as e:
        if e.errno != errno.EINVAL:
            sys.exit(f"{data!r} at {off}: {e}")
    os.close(fd)
PY
grep -q "last_error: writes must start at offset 0" "$MNT/ctl/empty_cache" \
	|| fail "last_error does not explain the offset"

# One write of more than 4 KiB is refused whole.
python3 - "$MNT/ctl" <<'PY' || fail "a 5000-byte write was accepted"
import errno, os, sys
for name in ("empty_cache", "reset_peak_stats", "reset_accumulated_stats"):
    fd = os.open(f"{sys.argv[1]}/{name}", os.O_WRONLY)
    try:
        os.write(fd, b"1" * 5000)
        sys.exit(f"{name}: accepted")
    except OSError as e:
        if e.errno != errno.EFBIG:
            sys.exit(f"{name}: {e}")
PY
grep -q "last_error: value of 4096 bytes or more" "$MNT/ctl/reset_peak_stats" \
	|| fail "last_error does not explain the size"

# One open, one command: after a refused write the next one on the same
# handle (the second line of a printf) is refused too, and nothing happens.
reserved=$(value memory_reserved)
python3 - "$MNT/ctl/empty_cache" <<'PY' || fail "a second write on one handle was carried out"
import errno, os, sys
fd = os.open(sys.argv[1], os.O_WRONLY)
for data in (b"garbage\n", b"1\n"):
    try:
        os.write(fd, data)
        sys.exit(f"{data!r} accepted")
    except OSError as e:
        if e.errno != errno.EINVAL:
            sys.exit(f"{data!r}: {e}")
PY
expect_eq "$(value memory_reserved)" "$reserved" "memory_reserved after the refused printf"
grep -q "last_error: one command per open" "$MNT/ctl/empty_cache" \
	|| fail "last_error does not explain the second write"
# A good write clears last_error: it speaks of the last write.
echo device1 >"$MNT/ctl/empty_cache" || fail "empty_cache device1"
grep -q '^last_error: none$' "$MNT/ctl/empty_cache" || fail "a success did not clear last_error"

# Good writes do what they say: peaks and totals restart from now.
expect_eq "$(value max_memory_allocated)" 67109376 "peak before reset"
echo device0 >"$MNT/ctl/reset_peak_stats" || fail "reset_peak_stats device0"
expect_eq "$(value max_memory_allocated)" 0 "peak after reset"
grep -q '^allocation.all.allocated 1$' "$MNT/stats/device0" || fail "one allocation counted"
echo 1 >"$MNT/ctl/reset_accumulated_stats" || fail "reset_accumulated_stats 1"
grep -q '^allocation.all.allocated 0$' "$MNT/stats/device0" || fail "allocations not reset"
expect_eq "$(value memory_reserved)" 69206016 "cached segment before empty_cache"
echo device1 >"$MNT/ctl/empty_cache"
expect_eq "$(value memory_reserved)" 69206016 "empty_cache of device1 keeps device0's cache"
echo 1 >"$MNT/ctl/empty_cache"
expect_eq "$(value memory_reserved)" 0 "memory_reserved after empty_cache"
echo 0.5 >"$MNT/devices/device1/memory_fraction" || fail "memory_fraction 0.5"
expect_eq "$(value memory_fraction 1)" 0.5 "memory_fraction read back"
expect_eq "$(value memory_fraction 0)" 1 "device0's fraction is untouched"

# A value with control characters is quoted on one line, never verbatim:
# nobody forges a log line or a terminal escape through a ctl file.
lines=$(wc -l <"$MNT/log")
expect_fail "printf '1\\rforged\\033[2J\\n' > '$MNT/ctl/reset_peak_stats'" "Invalid argument"
expect_eq "$(($(wc -l <"$MNT/log") - lines))" 1 "one refusal, one log line"
grep -qF "'1?forged?[2J' is not" "$MNT/log" || fail "control characters not shown as '?': $(tail -1 "$MNT/log")"
grep -qF "last_error: '1?forged?[2J' is not" "$MNT/ctl/reset_peak_stats" || fail "last_error keeps control characters"
LC_ALL=C grep -q $'[\r\033]' "$MNT/log" && fail "a control character reached the log"

stop_fs
expect_eq "$STATUS" 0 "exit status after SIGTERM"
