# lib.sh - shared by the mount tests: mount npumemfs in a temporary folder,
# always unmount and stop it, skip (exit 77) where FUSE cannot be used.
#
# A test sets INI_TEXT (optional), sources this file, calls mount_fs, and
# uses $MNT as a person would.

set -u

NPUMEMFS=${NPUMEMFS:?NPUMEMFS must name the npumemfs binary}

skip() { echo "SKIP: $*"; exit 77; }

fail() {
	echo "FAIL: $*" >&2
	if [ -s "${DAEMON_ERR:-/nonexistent}" ]; then
		sed 's/^/  daemon: /' "$DAEMON_ERR" >&2
	fi
	exit 1
}

[ -c /dev/fuse ] || skip "/dev/fuse is missing"
command -v fusermount3 >/dev/null || skip "fusermount3 is not installed"
if [ "$(id -u)" -ne 0 ] && [ ! -u "$(command -v fusermount3)" ]; then
	skip "not root and fusermount3 is not setuid"
fi
( exec 3<>/dev/fuse ) 2>/dev/null || skip "cannot open /dev/fuse"

WORK=$(mktemp -d /tmp/npumemfs-test.XXXXXX)
MNT=$WORK/mnt
INI=$WORK/npumemfs.ini
DAEMON_ERR=$WORK/daemon.err
PID=
mkdir "$MNT"

cleanup() {
	fusermount3 -u -z "$MNT" 2>/dev/null
	if [ -n "$PID" ]; then
		kill "$PID" 2>/dev/null
		wait "$PID" 2>/dev/null
	fi
	rm -rf "$WORK"
}
trap cleanup EXIT
trap 'echo "FAIL: interrupted or timed out" >&2; exit 1' INT TERM

: "${INI_TEXT:=[device]
count = 1
capacity = 4GiB
}"
printf '%s\n' "$INI_TEXT" >"$INI"

mounted() { awk -v m="$MNT" '$5 == m { found = 1 } END { exit !found }' /proc/self/mountinfo; }

# mount_fs [OPTION...]: the options go to npumemfs before -f MNT.
mount_fs() {
	"$NPUMEMFS" --config "$INI" "$@" -f "$MNT" 2>"$DAEMON_ERR" &
	PID=$!
	for _ in $(seq 200); do
		mounted && return 0
		kill -0 "$PID" 2>/dev/null || fail "npumemfs $* exited before mounting"
		sleep 0.05
	done
	fail "npumemfs did not mount within 10 s"
}

# Stop with SIGTERM; sets STATUS to the daemon's exit status.
stop_fs() {
	kill -TERM "$PID"
	STATUS=0
	wait "$PID" || STATUS=$?
	PID=
}

expect_eq() {
	[ "$1" = "$2" ] || fail "$3: expected '$2', got '$1'"
}

# Run a shell command that must fail; its message must contain $2.
expect_fail() {
	local out
	if out=$(bash -c "$1" 2>&1); then
		fail "'$1' succeeded"
	fi
	case "$out" in
	*"$2"*) ;;
	*) fail "'$1': expected '$2' in: $out" ;;
	esac
}

# Wait up to 20 s for workload/replay to say "state: $1" (a replay that
# records every event's stack, under a sanitizer, takes seconds).
wait_state() { # state
	for _ in $(seq 400); do
		grep -q "^state: $1$" "$MNT/workload/replay" && return 0
		sleep 0.05
	done
	fail "replay never reached state $1: $(cat "$MNT/workload/replay")"
}

# A devices/deviceN file's value: its first line (a writable one shows
# last_error below it).
value() { head -n 1 "$MNT/devices/device${2:-0}/$1"; }

# The last refusal a ctl file shows.
last_error() { sed -n 's/^last_error: //p' "$1"; }

# Key $1 of host/stats (host_memory_stats()).
host_stat() { awk -v k="$1" '$1 == k { print $2 }' "$MNT/host/stats"; }

# flat stats == JSON stats, and allocated <= reserved, for device $1.
check_stats_consistent() {
	python3 - "$MNT" "$1" <<'PY' || fail "stats of device$1 are inconsistent"
import json, sys
mnt, dev = sys.argv[1], sys.argv[2]
# Read both in a row: the caller keeps the allocator still meanwhile.
flat_text = open(f"{mnt}/stats/device{dev}").read()
tree = json.load(open(f"{mnt}/stats/device{dev}.json"))
flat = dict(line.split(" ") for line in flat_text.splitlines())
def walk(prefix, node, out):
    if isinstance(node, dict):
        for k, v in node.items():
            walk(f"{prefix}.{k}" if prefix else k, v, out)
    else:
        out[prefix] = str(node)
nested = {}
walk("", tree, nested)
if flat != nested:
    diff = sorted(set(flat.items()) ^ set(nested.items()))[:10]
    sys.exit(f"flat and JSON differ: {diff}")
if int(flat["allocated_bytes.all.current"]) > int(flat["reserved_bytes.all.current"]):
    sys.exit("allocated_bytes above reserved_bytes")
PY
}
