#!/usr/bin/env bash
# startup_test.sh CASE - npumemfs refusing a bad command line or ini before
# anything starts: one message on stderr naming the argument and the fix,
# exit status 1, nothing mounted, no daemon left. One behaviour per CASE.
# Refusals need no FUSE; a case that mounts skips (exit 77) without it.
set -u

case_name=$1
NPUMEMFS=${NPUMEMFS:?NPUMEMFS must name the npumemfs binary}
tmp=$(mktemp -d /tmp/npumemfs-startup.XXXXXX) || exit 1
cd "$tmp" || exit 1
mkdir mnt
# A log file of a background daemon lands here, not in the user's home.
export XDG_STATE_HOME=$tmp/state

mounted_here() { grep -q " $tmp/" /proc/self/mountinfo; }

cleanup() {
	local m
	for m in $(awk -v t="$tmp/" 'index($5, t) == 1 { print $5 }' /proc/self/mountinfo); do
		fusermount3 -u -z "$m" 2>/dev/null
	done
	cd / && rm -rf "$tmp"
}
trap cleanup EXIT

fail() {
	echo "FAIL ($case_name): $*" >&2
	echo "--- stderr:" >&2
	cat err >&2 2>/dev/null
	exit 1
}

skip_without_fuse() {
	[ -c /dev/fuse ] && command -v fusermount3 >/dev/null && [ "$(id -u)" -eq 0 ] ||
		{ echo "SKIP: needs root and /dev/fuse"; exit 77; }
}

# run ARGS...: npumemfs in the foreground, stopped after 10 s if it mounted;
# the exit status in $status, stdout in out, stderr in err.
run() {
	status=0
	timeout 10 "$NPUMEMFS" "$@" >out 2>err || status=$?
}

# The refusal every case expects: status 1, exactly this one line on stderr,
# nothing mounted under the test's folder.
expect_refused() { # message
	[ "$status" = 1 ] || fail "exit status $status, expected 1"
	[ "$(cat err)" = "$1" ] || fail "stderr is not: $1"
	! mounted_here || fail "something was mounted"
}

case $case_name in
config_that_is_a_folder_is_refused)
	mkdir conf
	printf '[device]\ncount = 2\n' >conf/npumemfs.ini
	run --config conf -f mnt
	expect_refused "npumemfs: conf: a folder, not an ini file; did you mean --config conf/npumemfs.ini?"
	;;
config_that_is_not_a_regular_file_is_refused)
	run --config /dev/null -f mnt
	expect_refused "npumemfs: /dev/null: not a regular file; --config takes an ini file, such as the shipped conf/npumemfs.ini"
	;;
ambiguous_size_unit_is_refused)
	for spelling in 32GB:32GiB:GB:3 32G:32GiB:G:3 32gb:32GiB:gb:3 32TB:32TiB:TB:4 \
		'512 k:512KiB:k:1'; do
		IFS=: read -r written iec unit power <<<"$spelling"
		printf '[device]\ncapacity = %s\n' "$written" >a.ini
		run --config a.ini -f mnt
		expect_refused "npumemfs: a.ini:2: '$written': use $iec (binary) or bytes; npumemfs does not guess whether $unit means 1000^$power or 1024^$power"
	done
	;;
size_with_one_space_is_accepted)
	skip_without_fuse
	printf '[device]\ncapacity = 4 GiB\npage_size = 2 MiB\n' >a.ini
	timeout 20 "$NPUMEMFS" --config a.ini -f mnt 2>err &
	pid=$!
	for _ in $(seq 200); do
		mounted_here && break
		kill -0 "$pid" 2>/dev/null || fail "npumemfs exited before mounting"
		sleep 0.05
	done
	grep -qx 'capacity = 4GiB' mnt/config || fail "config: $(cat mnt/config)"
	grep -qx 'page_size = 2MiB' mnt/config || fail "config: $(cat mnt/config)"
	kill -TERM "$pid"
	wait "$pid" || fail "exit status $? after SIGTERM"
	;;
*)
	fail "no such case"
	;;
esac
exit 0
