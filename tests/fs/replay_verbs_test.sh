#!/usr/bin/env bash
# replay_verbs_test.sh CASE - the background replay of README's command 1
# (conf/npumemfs.ini loops the training trace) and what it means for a
# graph capture: a global capture it invalidates says so and how to avoid
# it, `stop` and `start` in workload/replay, and npumemfs(8)'s graph example
# as a user pastes it. One behaviour per CASE, each on its own mount.
case_name=$1
. "$(dirname "$0")/lib.sh"
SRC=$(cd "$(dirname "$0")/../.." && pwd)
INI=$SRC/conf/npumemfs.ini
mount_fs
wait_state running

R=$MNT/workload/replay
G=$MNT/ctl/graph
field() { sed -n "s/^$1: //p" "$R"; }

# npumemfs(8)'s graph example, verbatim: upstream's test_graph_two_successive.
readme_graph_example() {
	cat <<'SH'
cd mnt
echo stop > workload/replay                              # the demo's replay ends,
echo 1 > ctl/empty_cache                                 # and its cached memory goes
truncate -s 4000 tensors/device0/in                      # a = torch.zeros(1000)
echo "create g0" > ctl/graph
echo "capture_begin g0 stream=1" > ctl/graph              # pool (1, 0)
truncate -s 4000 tensors/device0/stream1/b               # allocations in the capture
printf XXXX | dd of=tensors/device0/stream1/b conv=notrunc status=none
echo "capture_end g0" > ctl/graph
echo "create g1" > ctl/graph
echo "capture_begin g1 stream=1 pool=g0" > ctl/graph      # share g0's pool
truncate -s 4000 tensors/device0/stream1/c
echo "capture_end g1" > ctl/graph
cat devices/device0/memory_reserved   # 4194304 shared; 6291456 without pool=g0
cat ctl/graph pools/device0
printf YYYY | dd of=tensors/device0/stream1/b conv=notrunc status=none
echo "replay g0" > ctl/graph
head -c 4 tensors/device0/stream1/b   # XXXX: the replay wrote it again
SH
}

case $case_name in
global_capture_end_during_replay_names_the_replay_thread_and_the_fix)
	echo "create g" >"$G" && echo "capture_begin g stream=1" >"$G" ||
		fail "capture_begin: $(last_error "$G")"
	sleep 1 # the looping replay frees, and queries events, meanwhile
	expect_fail "echo 'capture_end g' > '$G'" "Input/output error"
	msg=$(last_error "$G")
	for words in "error code is 507903" "invalidated by aclrt" "on thread npumemfs-replay" \
		"mode=thread_local" "echo stop > workload/replay"; do
		case $msg in
		*"$words"*) ;;
		*) fail "capture_end's error does not say '$words': $msg" ;;
		esac
	done
	;;
stop_ends_the_replay_and_frees_its_memory)
	echo stop >"$R" || fail "stop refused: $(last_error "$R")"
	expect_eq "$(field state)" stopped "state after stop"
	expect_eq "$(value memory_allocated)" 0 "memory_allocated after stop"
	;;
start_resumes_the_last_trace_looping)
	trace=$(field trace)
	echo stop >"$R" || fail "stop refused: $(last_error "$R")"
	echo start >"$R" || fail "start refused: $(last_error "$R")"
	expect_eq "$(field state)" running "state after start"
	expect_eq "$(field trace)" "$trace" "trace after start"
	expect_eq "$(field loop)" true "loop after start"
	;;
readme_graph_example_works_after_stop)
	python3 - "$SRC/contrib/man/npumemfs.8.scd" "$(readme_graph_example)" <<'PY' ||
import sys
if sys.argv[2] + "\n```" not in open(sys.argv[1]).read():
    sys.exit("npumemfs(8)'s graph example is not the one this test runs")
PY
		fail "npumemfs(8)'s example changed"
	out=$(cd "$WORK" && bash -e -c "$(readme_graph_example)" 2>&1) ||
		fail "npumemfs(8)'s graph example failed: $out"
	expect_eq "$(sed -n 1p <<<"$out")" 4194304 "memory_reserved in the example"
	expect_eq "${out: -4}" XXXX "the bytes the replay wrote again"
	;;
*)
	fail "no case $case_name"
	;;
esac
stop_fs
expect_eq "$STATUS" 0 "exit status after SIGTERM"
