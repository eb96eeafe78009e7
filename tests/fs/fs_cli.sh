#!/usr/bin/env bash
# The command line: --help and --version exit 0; a bad ini stops start-up
# with FILE:LINE: reason, a non-zero status and nothing mounted; devices
# larger than the host's memory start with a warning.
. "$(dirname "$0")/lib.sh"

"$NPUMEMFS" --help >"$WORK/help" 2>&1 || fail "--help exit status"
grep -q -- '--config FILE' "$WORK/help" || fail "--help does not mention --config"
expect_eq "$(grep -c -- '--help' "$WORK/help")" 1 "--help lines in --help"
expect_eq "$(grep -c -- '--version' "$WORK/help")" 1 "--version lines in --help"
"$NPUMEMFS" --version >"$WORK/version" 2>&1 || fail "--version exit status"
grep -q '^npumemfs [0-9]' "$WORK/version" || fail "--version: $(cat "$WORK/version")"

refused() { # ini-text expected-message
	printf '%s\n' "$1" >"$INI"
	STATUS=0
	out=$(timeout 20 "$NPUMEMFS" --config "$INI" -f "$MNT" 2>&1) || STATUS=$?
	[ "$STATUS" -ne 0 ] || fail "started with: $1"
	expect_eq "$out" "npumemfs: $2" "message for: $1"
	mounted && fail "mounted with: $1"
	return 0
}
refused '[device]
count = 2
flavor = tpu' "$INI:3: flavor: 'tpu' is neither npu nor cuda"
refused '[gpu]' "$INI:1: unknown section [gpu]"
refused '[fs]
allow_others = true' "$INI:2: unknown key 'allow_others' in section [fs]"
refused '[device]
capacity = 10XB' "$INI:2: '10XB' is not a size (bytes, or a number with KiB, MiB, GiB or TiB)"

STATUS=0
out=$("$NPUMEMFS" --config "$WORK/absent.ini" -f "$MNT" 2>&1) || STATUS=$?
expect_eq "$STATUS" 1 "exit status for a missing ini"
expect_eq "$out" "npumemfs: $WORK/absent.ini: cannot open: No such file or directory" \
	"message for a missing ini"
mounted && fail "mounted without an ini"

# More device memory than the host has starts, with a warning in the log;
# the default 4 GiB does not.
# Two devices of just over half the host's memory each: no more address
# space than sanitizer builds can map.
host=$(awk '$1 == "MemTotal:" { printf "%.0f", $2 * 1024 }' /proc/meminfo)
gib=$(((host >> 31) + 1))
each=$((gib << 30))
printf '[device]\ncount = 2\ncapacity = %dGiB\n' "$gib" >"$INI"
mount_fs
grep -q "warning: 2 devices of $each bytes ($((2 * each)) in all) exceed the host's memory ($host bytes)" "$MNT/log" ||
	fail "no warning for 2 devices of $gib GiB: $(grep warning "$MNT/log")"
stop_fs
printf '%s\n' '[device]' 'count = 1' 'capacity = 4GiB' >"$INI"
mount_fs
grep -q "exceed the host's memory" "$MNT/log" && fail "a warning for 4 GiB"
stop_fs
exit 0
