#!/usr/bin/env bash
# Every libfuse -o option --help offers mounts, serves a read, and stops
# cleanly: the help lists only what works.
. "$(dirname "$0")/lib.sh"

"$NPUMEMFS" --help >"$WORK/help" || fail "--help exit status"
opts=$(sed -n 's/^ *-o \([a-z_]*\)\(=N\)\{0,1\}.*/\1\2/p' "$WORK/help" | sed 's/=N$/=2/')
[ -n "$opts" ] || fail "--help lists no -o option"
for opt in $opts; do
	mount_fs -o "$opt"
	grep -q '^\[device\]$' "$MNT/config" || fail "-o $opt: config unreadable"
	stop_fs
	expect_eq "$STATUS" 0 "-o $opt: exit status after SIGTERM"
done
exit 0
