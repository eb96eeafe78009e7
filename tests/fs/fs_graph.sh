#!/usr/bin/env bash
# NPUGraphs through ctl/graph, with tensors on a stream as what they
# capture: upstream's test_graph_two_successive in both flavors (sharing a
# pool saves exactly one small segment), test_graph_three_successive's
# corruption of a shared pool replayed out of order, a replay writing its
# captured bytes again, reads refused by a global capture and allowed by a
# thread-local one, and each refusal with upstream's text and nothing
# changed.
. "$(dirname "$0")/lib.sh"

G=$MNT/ctl/graph
T0=$MNT/tensors/device0
S1=$T0/stream1
S2=$T0/stream2

graph() { echo "$1" >"$G" || fail "graph '$1': $(grep last_error "$G")"; }
# The graph's field in ctl/graph (columns as its header names them).
field() { awk -v g="$1" -v c="$2" 'NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i }
	$1 == g { print $col[c] }' "$G"; }
# Everything ctl/graph shows but last_error: a refused write must keep it.
listing() { grep -v '^last_error: ' "$G"; }

# b = func_with_temps(b): (t.clone() + v) + (t.clone() + v) with 1000
# floats (4000 bytes), temporaries removed as Python drops them.
func_with_temps() {
	local d=$1 old=$2 new=$3
	truncate -s 4000 "$d/x1" "$d/y1" && rm "$d/x1" &&
		truncate -s 4000 "$d/x2" "$d/y2" && rm "$d/x2" &&
		truncate -s 4000 "$d/$new" && rm "$d/y1" "$d/y2" "$d/$old" ||
		fail "func_with_temps $old -> $new"
}

# capture G ARGS: G captures b0 = in.clone() then 5 x func_with_temps on
# stream 1, with bytes written into b0 as part of the capture.
capture() {
	local g=$1
	graph "create $g"
	graph "capture_begin $g stream=1 $2"
	truncate -s 4000 "$S1/${g}_0" || fail "tensor in capture $g"
	printf 'clone' | dd of="$S1/${g}_0" conv=notrunc status=none || fail "write in capture $g"
	for i in 1 2 3 4 5; do
		func_with_temps "$S1" "${g}_$((i - 1))" "${g}_$i"
	done
	graph "capture_end $g"
	expect_eq "$(field "$g" state)" captured "state of $g"
}

# Reserved bytes after two successive captures, each graph's pool given by
# $1 ("" none, "g0" pool() of the first, "handle:h" a graph_pool_handle()),
# then everything freed again.
two_successive() {
	local pool0= pool1=
	case "$1" in
	g0) pool1=pool=g0 ;;
	handle:h) pool0=pool=handle:h pool1=pool=handle:h ;;
	esac
	truncate -s 4000 "$T0/in"
	capture g0 "$pool0"
	capture g1 "$pool1"
	RESERVED=$(value memory_reserved)
	rm "$T0/in" "$S1/g0_5" "$S1/g1_5"
	graph "destroy g0"
	graph "destroy g1"
	echo 1 >"$MNT/ctl/empty_cache"
	expect_eq "$(value memory_reserved)" 0 "reserved after destroying both graphs ($1)"
	expect_eq "$(tail -n +2 "$MNT/pools/device0")" "" "pools left after destroying both graphs ($1)"
}

# test_graph_three_successive with bytes: t0 captures b, c (written CCCC)
# and d; t1 makes e and drops c; t2 makes f (written FFFF). Replayed out of
# order (t2, then t0), t0's copy into c lands on f when the pool is shared
# (upstream: e.sum() == size * 10), and never when each graph has its own.
three_successive() {
	local pool=
	[ "$1" = shared ] && pool=pool=t0
	graph "create t0"
	graph "capture_begin t0 stream=1"
	truncate -s 4000 "$S1/b" "$S1/c" "$S1/d" || fail "tensors in t0"
	printf CCCC | dd of="$S1/c" conv=notrunc status=none || fail "write c in t0"
	graph "capture_end t0"
	graph "create t1"
	graph "capture_begin t1 stream=1 $pool"
	truncate -s 4000 "$S1/e" && rm "$S1/c" || fail "e = c + 3; del c"
	graph "capture_end t1"
	graph "create t2"
	graph "capture_begin t2 stream=1 $pool"
	truncate -s 4000 "$S1/f" || fail "f = d + 4"
	printf FFFF | dd of="$S1/f" conv=notrunc status=none || fail "write f in t2"
	graph "capture_end t2"
	graph "replay t2"
	graph "replay t0"
	F=$(head -c 4 "$S1/f")
	rm "$S1/b" "$S1/d" "$S1/e" "$S1/f"
	for g in t0 t1 t2; do graph "destroy $g"; done
	echo 1 >"$MNT/ctl/empty_cache"
}

for flavor in npu cuda; do
	printf '[device]\ncount = 1\ncapacity = 4GiB\nflavor = %s\n' "$flavor" >"$INI"
	mount_fs
	upper=$(echo "$flavor" | tr a-z A-Z)

	# Both flavors: the input's small segment and one per graph pool;
	# sharing saves kSmallBuffer.
	two_successive ""
	unshared=$RESERVED
	two_successive g0
	shared_g0=$RESERVED
	two_successive handle:h
	shared_handle=$RESERVED
	expect_eq "$unshared" 6291456 "$flavor: reserved, no sharing"
	expect_eq "$shared_g0" 4194304 "$flavor: reserved, sharing via pool()"
	expect_eq "$shared_handle" 4194304 "$flavor: reserved, sharing via graph_pool_handle()"
	expect_eq $((unshared - shared_g0)) 2097152 "$flavor: no sharing - sharing"
	# Pools of captures without one are (uuid, 0), 1, 2, 3 in order;
	# graph_pool_handle() is (0, uid), the first one 0_1.
	grep -q '^handle h 0_1$' "$G" || fail "$flavor: handle h is not 0_1: $(cat "$G")"

	three_successive shared
	expect_eq "$F" CCCC "$flavor: f after replaying t2 then t0 in a shared pool"
	three_successive own
	expect_eq "$F" FFFF "$flavor: f after replaying t2 then t0, a pool per graph"

	# Capture refusals: upstream's text, an errno, nothing changed.
	graph "create r"
	before=$(listing)
	expect_fail "echo 'capture_begin r stream=0' > '$G'" "Invalid argument"
	expect_eq "$(last_error "$G")" "$upper graphs must be captured on a non-default stream. (However, after capture, it's ok to replay them on the default stream.)" "$flavor: capture on stream 0"
	expect_fail "echo 'replay r' > '$G'" "Invalid argument"
	expect_eq "$(last_error "$G")" "Called ${upper}Graph::replay without a preceding successful capture." "$flavor: replay before capture"
	expect_fail "echo 'capture_begin r stream=2 pool=r' > '$G'" "Invalid argument"
	expect_eq "$(last_error "$G")" "Called ${upper}Graph::pool() without a preceding successful capture." "$flavor: pool of an uncaptured graph"
	expect_fail "echo 'capture_begin r stream=2 mode=eager' > '$G'" "Invalid argument"
	expect_eq "$(last_error "$G")" 'Unknown capture error mode. Expected `global`, `thread_local`, or `relaxed`, got eager' "$flavor: capture mode"
	expect_fail "echo 'capture_begin r' > '$G'" "Invalid argument"
	expect_fail "echo 'capture_begin nosuch stream=1' > '$G'" "No such file or directory"
	expect_fail "echo 'create r' > '$G'" "File exists"
	expect_eq "$(listing)" "$before" "$flavor: ctl/graph after refused writes"

	# A replay writes the captured bytes again.
	truncate -s 4000 "$S2/t"
	graph "capture_begin r stream=2"
	printf XXXX | dd of="$S2/t" conv=notrunc status=none || fail "write during capture"
	# A global capture forbids the synchronous copy a read makes.
	expect_fail "head -c 4 '$S2/t'" "Device or resource busy"
	grep -q "tensors/device0/stream2/t: aclrtMemcpy refused while a graph captures on this device (error 107030)" "$MNT/log" ||
		fail "$flavor: the refused read is not in the log"
	expect_fail "echo 1 > '$MNT/ctl/empty_cache'" "Device or resource busy"
	expect_eq "$(sed -n 's/^last_error: //p' "$MNT/ctl/empty_cache")" "empty_cache failed: refused while a capture is under way on the device" "$flavor: empty_cache during a capture"
	graph "capture_end r"
	printf YYYY | dd of="$S2/t" conv=notrunc status=none
	expect_eq "$(head -c 4 "$S2/t")" YYYY "$flavor: bytes written after capture_end"
	graph "replay r"
	expect_eq "$(head -c 4 "$S2/t")" XXXX "$flavor: bytes after replay"
	printf YYYY | dd of="$S2/t" conv=notrunc status=none
	graph "replay r stream=3"
	expect_eq "$(head -c 4 "$S2/t")" XXXX "$flavor: bytes after a replay on stream 3"
	expect_eq "$(field r replays)" 2 "$flavor: replays"
	expect_fail "echo 'capture_begin r stream=2' > '$G'" "Device or resource busy"
	expect_eq "$(last_error "$G")" "This ${upper}Graph instance already owns a captured graph. To capture a new graph, create a new instance." "$flavor: second capture"

	# reset gives the pool back: the graph can capture again, on a pool of its own.
	graph "reset r"
	expect_eq "$(field r state)" empty "$flavor: state after reset"
	graph "capture_begin r stream=2 mode=thread_local"
	# A thread-local capture forbids only its own thread's copies: reads
	# are served by other threads.
	expect_eq "$(head -c 4 "$S2/t")" XXXX "$flavor: read during a thread-local capture"
	graph "capture_end r"
	graph "destroy r"
	rm "$S2/t"
	expect_eq "$(ls "$T0" | tr '\n' ' ')" "stream1 stream2 stream3 " "$flavor: stream folders once made"

	check_stats_consistent 0
	stop_fs
	expect_eq "$STATUS" 0 "$flavor: exit status after SIGTERM"
done
