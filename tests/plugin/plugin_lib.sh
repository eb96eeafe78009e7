# plugin_lib.sh - the mount tests' lib.sh, with the contrib plug-ins allowed.
#
# PLUGIN_DIR names the folder the contrib plug-ins are built in; the ini
# allows it and $WORK/plugins, a private folder a test may fill.

PLUGIN_DIR=${PLUGIN_DIR:?PLUGIN_DIR must name the folder of the contrib plug-ins}
. "$(dirname "$0")/../fs/lib.sh"

PRIVATE=$WORK/plugins
mkdir -m 0755 "$PRIVATE"
cat >"$INI" <<INI
[device]
count = 2
capacity = 1GiB
[allocator]
plugin_dirs = $PLUGIN_DIR,$PRIVATE
INI

CTL=$MNT/ctl/allocator

# use SPEC: make a plug-in current, or fail with the daemon's reason.
use() {
	echo "$1" >"$CTL" || fail "cannot load '$1': $(grep last_error "$CTL")"
}

# The name after "current" in ctl/allocator.
current() { awk '$1 == "current" { print $2 }' "$CTL"; }

# Up to 5 s for ctl/allocator to name $1 current (a retirement is logged
# by the thread that sees the fault, not by the write that caused it).
wait_current() {
	for _ in $(seq 50); do
		[ "$(current)" = "$1" ] && return 0
		sleep 0.1
	done
}

stat_of() { awk -v k="$1" '$1 == k { print $2 }' "$MNT/stats/device${2:-0}"; }

expect_contains() {
	case "$1" in
	*"$2"*) ;;
	*) fail "$3: no '$2' in: $1" ;;
	esac
}
