#!/bin/sh
# replay_cli_test.sh CASE REPLAY GENTRACE SRCDIR - npumem-replay and
# npumem-gentrace used from the shell, one behaviour per CASE.
set -u

case_name=$1 replay=$2 gentrace=$3 srcdir=$4
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
cd "$tmp" || exit 1

fail() {
	echo "FAIL ($case_name): $*" >&2
	echo "--- stdout:" >&2; cat out >&2 2>/dev/null
	echo "--- stderr:" >&2; cat err >&2 2>/dev/null
	exit 1
}

# run ARGS...: the exit status in $status, output in out and err.
run() {
	status=0
	"$replay" "$@" >out 2>err || status=$?
}

expect_status() {
	[ "$status" = "$1" ] || fail "exit status $status, expected $1"
}

expect_err() {
	[ "$(cat err)" = "$1" ] || fail "stderr is not: $1"
}

summary_rule='|===========================================================================|'

case $case_name in
bad_line)
	printf 'alloc a 1MiB\nalloc b 2MiB\nfree b\nfreee a\n' >bad.trace
	run bad.trace
	expect_status 2
	expect_err "bad.trace:4: unknown command 'freee'"
	[ ! -s out ] || fail "a bad trace printed a report"
	;;
good_trace)
	printf '# one of each\nalloc a 1048577\nalloc b 512 stream=1\nfree b\n' >good.trace
	run good.trace
	expect_status 0
	[ "$(sed -n 1p out)" = "$summary_rule" ] || fail "first line is not the summary's rule"
	sed -n 2p out | grep -q '^| *PyTorch NPU memory summary, device ID 0 *|$' ||
		fail "second line is not the summary title"
	grep -q '^npumem-replay: 3 events in [0-9.]* s ([0-9]* events/s), 0 OOMs$' err ||
		fail "no one-line summary on stderr"
	;;
stats_format)
	printf 'alloc a 1048577\n' >t.trace
	run --format stats t.trace
	expect_status 0
	grep -qx 'reserved_bytes.all.current 20971520' out || fail "reserved is not 20 MiB"
	grep -qx 'allocated_bytes.all.current 1049088' out || fail "allocated is not 1049088"
	;;
oom_is_not_an_error)
	printf 'alloc a 40MiB\nalloc b 40MiB\nfree b\nfree a\n' >oom.trace
	run --device-capacity 64MiB --format stats oom.trace
	expect_status 0
	grep -qx 'num_ooms 1' out || fail "num_ooms is not 1"
	grep -q ', 1 OOMs$' err || fail "the OOM is not counted on stderr"
	;;
stdin)
	printf 'alloc a 4KiB\n' | "$replay" --format json - >out 2>err || fail "exit $?"
	grep -q '"allocation"' out || fail "no JSON stats"
	;;
cuda_flavor)
	printf 'alloc a 1\n' >t.trace
	run --flavor cuda --format stats t.trace
	expect_status 0
	grep -qx 'allocated_bytes.all.current 512' out || fail "cuda pads nothing: 512 expected"
	;;
alloc_conf)
	printf 'alloc a 1\n' >t.trace
	run --alloc-conf max_split_size_mb:bogus t.trace
	expect_status 2
	grep -q '^npumem-replay: ' err || fail "no message"
	;;
missing_device)
	printf 'alloc a 1\nalloc b 1 device=3\n' >dev.trace
	run --devices 2 dev.trace
	expect_status 2
	expect_err "dev.trace:2: device 3 does not exist (2 devices)"
	run dev.trace
	expect_status 0
	;;
bad_options)
	run --format xml t.trace
	expect_status 2
	expect_err "npumem-replay: unknown format 'xml' (stats, json, summary or snapshot)"
	run --devices 17 t.trace
	expect_status 2
	expect_err "npumem-replay: bad device count '17' (1..16)"
	run --device-capacity 12XB t.trace
	expect_status 2
	expect_err "npumem-replay: bad device capacity '12XB'"
	run
	expect_status 2
	run missing.trace
	expect_status 2
	expect_err "missing.trace: No such file or directory"
	;;
help_and_version)
	run --version
	expect_status 0
	grep -qx 'npumem-replay [0-9][0-9.]*' out || fail "no version"
	run --help
	expect_status 0
	grep -q '^Usage: npumem-replay ' out || fail "no usage"
	;;
config)
	printf '[device]\ncount = 2\ncapacity = 1GiB\nmalloc_latency_us = 0\nfree_latency_us = 0\n' >c.ini
	printf 'alloc a 1 device=1\nalloc b 2GiB\n' >t.trace
	run --config c.ini --format stats t.trace
	expect_status 0
	grep -qx 'num_ooms 1' out || fail "a 2 GiB allocation fit a 1 GiB device"
	printf '[device]\ncount = 99\n' >bad.ini
	run --config bad.ini t.trace
	expect_status 2
	grep -q '^bad.ini:2: ' err || fail "no FILE:LINE message"
	;;
demo_trace)
	run --check "$srcdir/contrib/traces/training.trace"
	expect_status 0
	grep -q ', 0 OOMs$' err || fail "the demo trace OOMs"
	;;
gentrace)
	"$gentrace" churn --seed 3 --steps 500 --out a.trace || fail "gentrace failed"
	"$gentrace" churn --seed 3 --steps 500 >b.trace || fail "gentrace failed"
	cmp -s a.trace b.trace || fail "same seed, different traces"
	run --check a.trace
	expect_status 0
	status=0
	"$gentrace" inference >out 2>err || status=$?
	expect_status 2
	expect_err "npumem-gentrace: unknown kind 'inference' (training, churn or random)"
	;;
*)
	echo "unknown case $case_name" >&2
	exit 1
	;;
esac
exit 0
