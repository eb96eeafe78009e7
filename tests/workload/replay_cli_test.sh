#!/bin/sh
# replay_cli_test.sh CASE REPLAY GENTRACE SRCDIR [PLUGIN_DIR] - npumem-replay
# and npumem-gentrace used from the shell, one behaviour per CASE.
# PLUGIN_DIR is the folder the contrib plug-ins are built in (plugin_* cases).
set -u

case_name=$1 replay=$2 gentrace=$3 srcdir=$4 plugin_dir=${5:-}
arena="$plugin_dir/arena.so arena_alloc arena_free init=arena_init reset=arena_reset"
program=$replay
. "$(dirname "$0")/cli_lib.sh"

expect_err() {
	[ "$(cat err)" = "$1" ] || fail "stderr is not: $1"
}

summary_rule='|===========================================================================|'

# mib N PAD: N MiB less the flavor's pad (npu 32, cuda 0), which both round to N MiB.
mib() {
	echo $(($1 * 1048576 - $2))
}

# own/pid.so: pid_alloc writes "PID PPID" of the process it runs in to
# pid.log; loop_alloc never returns.
build_pid_plugin() {
	mkdir -m 0755 own
	cat >pid.c <<'C'
#include <stdio.h>
#include <unistd.h>
#include <acl/acl_rt.h>
#include <npumemfs/plugin.h>

void *pid_alloc(ssize_t size, int device, aclrtStream stream)
{
	FILE *f = fopen("pid.log", "a");
	void *p = NULL;

	(void)device, (void)stream;
	if (f) {
		fprintf(f, "%d %d\n", (int)getpid(), (int)getppid());
		fclose(f);
	}
	return aclrtMallocAlign32(&p, (size_t)size, ACL_MEM_MALLOC_HUGE_FIRST) ? NULL : p;
}
void pid_free(void *p, ssize_t size, int device, aclrtStream stream)
{
	(void)size, (void)device, (void)stream;
	aclrtFree(p);
}
void *loop_alloc(ssize_t size, int device, aclrtStream stream)
{
	(void)size, (void)device, (void)stream;
	for (;;)
		pause();
}
C
	${CC:-cc} -shared -fPIC -Wall -Werror -I"$srcdir/include" pid.c -o own/pid.so ||
		fail "building the plug-in"
}

# run_with_pid ARGS...: run, with the replay's pid in replay.pid.
run_with_pid() {
	status=0
	sh -c 'echo $$ >replay.pid; exec "$@"' _ "$program" "$@" >out 2>err || status=$?
}

# The OOM report on stderr: the last OOM's heading to the end.
oom_report() {
	sed -n '/^npumem-replay: the last OOM of device 0:$/,$p' err
}

# The lines that say why, which are the same in both flavors.
why_lines() {
	oom_report | tail -n +3
}

# A 30 MiB segment cut into three 8 MiB blocks and a 6 MiB rest, a 34 MiB
# one filling the 64 MiB device, the first and third blocks freed: 22 MiB
# free in one segment, the largest block 14 MiB; then 16 MiB is asked.
fragmentation_trace() { # PAD
	printf 'alloc big %s\nfree big\n' "$(mib 30 "$1")"
	printf 'alloc %s %s\n' x "$(mib 8 "$1")" y "$(mib 8 "$1")" z "$(mib 8 "$1")" \
		fill "$(mib 34 "$1")"
	printf 'free x\nfree z\nalloc f %s\n' "$(mib 16 "$1")"
}

fragmentation_why='request 16777216 bytes (16.00 MiB) from large_pool on stream 0; a new segment 16777216 bytes (16.00 MiB)
largest_free_block 14680064 bytes (14.00 MiB) on stream 0
pool_free 23068672 bytes (22.00 MiB) in 1 segment
headroom 0 bytes
private_pools 0 bytes in 0 pools
pending_frees 0 bytes
other_allocators 0 bytes
verdict: fragmentation: 16.00 MiB would fit in the free bytes (22.00 MiB in 1 segment of large_pool, 0 bytes on the device) but in no one block (the largest on stream 0 is 14.00 MiB)'

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
no_memory_caching_keeps_stats_at_0)
	printf 'alloc a 1048577\n' >t.trace
	run --no-memory-caching --format stats t.trace
	expect_status 0
	grep -qx 'reserved_bytes.all.current 0' out || fail "reserved is not 0"
	grep -qx 'allocated_bytes.all.current 0' out || fail "allocated is not 0"
	PYTORCH_NO_NPU_MEMORY_CACHING=1 "$replay" --format stats t.trace >env.out 2>&1 ||
		fail "env run failed"
	grep -qx 'reserved_bytes.all.current 0' env.out || fail "env: reserved is not 0"
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
streamed_trace_has_no_event_cap)
	# 20,000,001 events through a pipe, past the 20,000,000 a trace held
	# whole may have: npumem-replay reads a chunk at a time and replays
	# them all, its memory the chunk's and the live IDs'.
	status=0
	awk 'BEGIN { print "alloc a 1"; for (i = 0; i < 10000000; i++) print "free a\nalloc a 1" }' |
		"$replay" --format stats - >out 2>err || status=$?
	expect_status 0
	grep -q '^npumem-replay: 20000001 events in ' err || fail "not 20000001 events replayed"
	grep -qx 'allocation.all.allocated 10000001' out || fail "not 10000001 allocations"
	grep -qx 'allocation.all.current 1' out || fail "a is not live at the end"
	;;
forgotten_free_from_pipe)
	# x dies, then 1,100 other IDs: a streamed trace keeps the last 1,024
	# deaths, so x is forgotten, and a pipe cannot be read again to say where.
	awk 'BEGIN { print "alloc x 1\nfree x"
		for (i = 0; i < 1100; i++) print "alloc a" i " 1\nfree a" i
		print "free x" }' >t.trace
	status=0
	# cat: standard input redirected from the file would be read again.
	cat t.trace | "$replay" - >out 2>err || status=$?
	expect_status 2
	expect_err "-:2203: free of id 'x', which is not live: unknown, or freed before the last 1024 frees (a trace read from a pipe remembers no more)"
	[ ! -s out ] || fail "a bad trace printed a report"
	# Within the last 1,024 deaths, a pipe still says where.
	head -1001 t.trace >near.trace
	echo "free x" >>near.trace
	status=0
	cat near.trace | "$replay" - >out 2>err || status=$?
	expect_status 2
	expect_err "-:1002: free of id 'x', freed on line 2"
	;;
forgotten_free_from_file)
	# The same past 1,024 deaths from a file: the file is read again for
	# the line x was freed on.
	awk 'BEGIN { print "alloc x 1\nfree x"
		for (i = 0; i < 1100; i++) print "alloc a" i " 1\nfree a" i
		print "free x" }' >t.trace
	run t.trace
	expect_status 2
	expect_err "t.trace:2203: free of id 'x', freed on line 2"
	[ ! -s out ] || fail "a bad trace printed a report"
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
	expect_err "npumem-replay: unknown format 'xml' (stats, json, summary, snapshot or pins)"
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
	expect_err "npumem-gentrace: unknown kind 'inference' (training, churn, random, decode-graphs or pinned-loader)"
	;;
decode_graphs)
	# The same decode-graph trace with one shared pool and with a pool each.
	"$gentrace" decode-graphs --batches 1..64 --steps 20 --out shared.trace || fail "gentrace failed"
	"$gentrace" decode-graphs --batches 1..64 --steps 20 --share-pool no --out own.trace ||
		fail "gentrace failed"
	grep -q '^capture_begin 1 pool=graphs graph=b64$' shared.trace || fail "no shared capture"
	grep -q '^capture_begin 1 graph=b64$' own.trace || fail "no capture of its own"
	run --format stats shared.trace
	expect_status 0
	shared=$(sed -n 's/^graph_pools.reserved_bytes //p' out)
	grep -qx 'graph_pools.0_1.use_count 11' out || fail "11 graphs do not share pool (0,1)"
	run --format stats own.trace
	expect_status 0
	own=$(sed -n 's/^graph_pools.reserved_bytes //p' out)
	[ "$(grep -c '^graph_pools\.[0-9]*_0\.reserved_bytes ' out)" = 11 ] ||
		fail "not 11 pools of their own"
	[ -n "$shared" ] && [ -n "$own" ] || fail "no graph_pools.reserved_bytes"
	[ "$shared" -gt 0 ] && [ "$shared" -lt "$own" ] ||
		fail "sharing holds $shared bytes, a pool each $own"
	run shared.trace
	expect_status 0
	grep -qx "graph pools hold $shared bytes" out || fail "no graph-pool line in the summary"
	grep -qx "  pool (0,1): $shared bytes reserved in .*, use_count 11" out ||
		fail "no line for pool (0,1)"
	run --format json own.trace
	expect_status 0
	grep -q "^    \"reserved_bytes\": $own\$" out || fail "no graph_pools in the JSON"
	;;
graph_lines)
	# A line that names nothing is refused before anything runs.
	printf 'alloc a 1MiB\ncapture_begin 1 graph=g\ncapture_end 2\n' >bad.trace
	run bad.trace
	expect_status 2
	expect_err "bad.trace:3: capture_end: stream 2 is not capturing"
	printf 'capture_begin 1\nsync\n' >sync.trace
	run sync.trace
	expect_status 2
	expect_err "sync.trace:2: sync: the runtime refuses to synchronize a device while stream 1 captures (capture_begin on line 1)"
	# What the allocator refuses stops the replay with upstream's text.
	printf 'alloc a 1MiB\ncapture_begin 0\n' >default.trace
	run default.trace
	expect_status 1
	expect_err "default.trace:2: NPU graphs must be captured on a non-default stream. (However, after capture, it's ok to replay them on the default stream.)"
	[ ! -s out ] || fail "a failed replay printed a report"
	# Without graph or mempool lines the report has no graph pools.
	printf 'alloc a 1MiB\n' >plain.trace
	for format in summary stats json; do
		run --format $format plain.trace
		! grep -qi 'graph.pools' out || fail "graph pools in a $format report without graphs"
	done
	;;
operator_workspace)
	# Without an ACL allocator registered, workspace comes from the caching
	# allocator and goes back at once: 4 MiB + 32 and 1 MiB + 32, rounded
	# to 512, each from a 20 MiB segment of its own stream.
	printf 'launch_op 1 4MiB\nlaunch_op 2 1MiB ns=1000\nsync 2\n' >ops.trace
	run --format stats ops.trace
	expect_status 0
	grep -qx 'allocated_bytes.all.allocated 5243904' out || fail "not 4194816 + 1049088 bytes"
	grep -qx 'allocated_bytes.all.current 0' out || fail "workspace outstanding"
	grep -qx 'reserved_bytes.all.current 41943040' out || fail "not two 20 MiB segments"
	grep -qx 'npumem-replay: 2 operators launched; workspace: 0 blocks through ACL allocators, 2 from the allocator in use' err ||
		fail "no operator line on stderr"
	;;
gentrace_decode_options)
	status=0
	"$gentrace" training --share-pool no >out 2>err || status=$?
	expect_status 2
	expect_err "npumem-gentrace: --batches, --share-pool and --graphs are decode-graphs options"
	status=0
	"$gentrace" decode-graphs --graphs no --share-pool no >out 2>err || status=$?
	expect_status 2
	expect_err "npumem-gentrace: --share-pool needs graphs (--graphs no captures none)"
	status=0
	"$gentrace" decode-graphs --graphs maybe >out 2>err || status=$?
	expect_status 2
	expect_err "npumem-gentrace: bad graphs 'maybe' (yes or no)"
	status=0
	"$gentrace" decode-graphs --batches 8..3 >out 2>err || status=$?
	expect_status 2
	expect_err "npumem-gentrace: bad batches '8..3' (LO..HI or increasing A,B,... in 1..1024)"
	status=0
	"$gentrace" decode-graphs --batches 1,4,2 >out 2>err || status=$?
	expect_status 2
	status=0
	"$gentrace" decode-graphs --batches 1,3,5 --steps 4 >out 2>err || status=$?
	expect_status 0
	[ "$(grep -c '^capture_begin' out)" = 3 ] || fail "not 3 captures for 1,3,5"
	grep -q '^capture_begin 1 pool=graphs graph=b5$' out || fail "5 is not captured first"
	;;
pinned_loader)
	# A loader pinning 20 GiB batches: each is held in a 32 GiB block.
	"$gentrace" pinned-loader --batch 20GiB --batch-min 20GiB --prefetch 0 --steps 3 \
		--out loader.trace || fail "gentrace failed"
	grep -qx 'pin b0 21474836480' loader.trace || fail "no 20 GiB pin"
	grep -qx 'copy b0 1' loader.trace || fail "no copy on stream 1"
	run loader.trace
	expect_status 0
	tail -1 out | grep -qx 'pinned memory holds 34359738368 bytes (peak 34359738368) for requests of 0 (peak 21474836480)' ||
		fail "the summary does not end with what the pinned memory holds"
	run --format stats loader.trace
	expect_status 0
	grep -qx 'host_memory_stats.allocated_bytes.peak 34359738368' out || fail "no host peak"
	grep -qx 'pinned_requested_bytes.peak 21474836480' out || fail "no requested peak"
	[ "$(grep -c '^host_memory_stats\.' out)" = 28 ] || fail "not the 28 host keys"
	run --format json loader.trace
	expect_status 0
	python3 -c 'import json,sys; d=json.load(open("out")); \
assert d["host_memory_stats"]["allocated_bytes"]["peak"] == 34359738368, d["host_memory_stats"]; \
assert d["pinned_requested_bytes"] == {"current": 0, "peak": 21474836480}' || fail "json host member"
	# pinned_max_round_threshold_mb keeps such a batch exact.
	run --alloc-conf pinned_max_round_threshold_mb:1024 loader.trace
	expect_status 0
	tail -1 out | grep -q '^pinned memory holds 21474836480 bytes' || fail "threshold not applied"
	# Loader options belong to pinned-loader.
	status=0
	"$gentrace" training --prefetch 1 >out 2>err || status=$?
	expect_status 2
	expect_err "npumem-gentrace: --batch, --batch-min and --prefetch are pinned-loader options"
	status=0
	"$gentrace" pinned-loader --batch 1MiB --batch-min 2MiB >out 2>err || status=$?
	expect_status 2
	expect_err "npumem-gentrace: --batch-min is above --batch"
	;;
pins_format_names_the_block_each_pin_got)
	# a and b get blocks 1 and 2; freed, the newer serves c first; e's
	# 8 KiB list is empty; f asks nothing; g is more than the host has;
	# after host_empty_cache h's block is made anew.
	printf '%s\n' 'pin a 3000' 'pin b 3000 stream=1' 'unpin a' 'unpin b' 'pin c 4096' \
		'pin d 2049' 'pin e 5000' 'pin f 0' 'pin g 4TiB' 'unpin c' 'unpin d' \
		'host_empty_cache' 'pin h 4096' >p.trace
	run --format pins p.trace
	expect_status 0
	cat >want <<-'EOF'
	pin line=1 size=3000 block=1 block_size=4096 new
	pin line=2 size=3000 block=2 block_size=4096 new
	pin line=5 size=4096 block=2 block_size=4096 cached
	pin line=6 size=2049 block=1 block_size=4096 cached
	pin line=7 size=5000 block=3 block_size=8192 new
	pin line=8 size=0 block=- block_size=0
	pin line=9 size=4398046511104 refused
	pin line=13 size=4096 block=4 block_size=4096 new
	EOF
	cmp -s want out || fail "not the blocks of ATen's newest-first free lists"
	;;
pins_format_names_no_block_with_expandable_host_segments)
	# Blocks there split and merge: only their sizes, size + 32 to 512.
	printf 'pin a 3000\nunpin a\npin b 4096\n' >p.trace
	run --alloc-conf pin_memory_expandable_segments:True --format pins p.trace
	expect_status 0
	printf '%s\n' 'pin line=1 size=3000 block=- block_size=3072' \
		'pin line=3 size=4096 block=- block_size=4608' >want
	cmp -s want out || fail "expandable blocks are named"
	;;
pinned_warning)
	# The mount logs this warning; the replay says it on stderr, once.
	printf 'pin b 1\nunpin b\n' >p.trace
	run --alloc-conf pin_memory_expandable_segments:True,pinned_max_cached_size_mb:64 p.trace
	expect_status 0
	warning='npumem-replay: alloc_conf: `pinned_max_round_threshold_mb` and `pinned_max_cached_size_mb` do not take effect when `pin_memory_expandable_segments` is enabled. To use these options, set `pin_memory_expandable_segments` to `False`.'
	[ "$(grep -c 'do not take effect' err)" = 1 ] || fail "the warning is not on stderr once"
	grep -qxF "$warning" err || fail "the warning is not in the mount's words"
	run --alloc-conf pin_memory_expandable_segments:True p.trace
	expect_status 0
	grep -q 'do not take effect' err && fail "a warning without pinned_max_* options"
	;;
gentrace_churn_options)
	"$gentrace" churn --live 10 --max-size 2KiB --steps 500 --out c.trace || fail "gentrace failed"
	awk '$1 == "alloc" && ($3 < 512 || $3 >= 2048) { bad = 1 } END { exit bad }' c.trace ||
		fail "a size outside 512 B to 2 KiB"
	status=0
	"$gentrace" random --live 10 >out 2>err || status=$?
	expect_status 2
	expect_err "npumem-gentrace: --live and --max-size are churn options"
	status=0
	"$gentrace" churn --max-size 512 >out 2>err || status=$?
	expect_status 2
	expect_err "npumem-gentrace: bad max-size '512' (513 bytes to 1TiB, bytes or with KiB/MiB/GiB)"
	status=0
	"$gentrace" churn --live 1000001 >out 2>err || status=$?
	expect_status 2
	expect_err "npumem-gentrace: bad live '1000001' (1..1000000)"
	;;
plugin_arena_stats)
	# Device 0 keeps a (1 MiB); b (3000 B) is freed; c is on device 1.
	printf 'alloc a 1MiB\nalloc b 3000 stream=1\nalloc c 2MiB device=1\nfree b\n' >t.trace
	run --plugin "$arena" --plugin-dir "$plugin_dir" --format stats t.trace
	expect_status 0
	grep -qx 'allocation.all.allocated 2' out || fail "device 0 did not count 2 allocations"
	grep -qx 'allocation.all.current 1' out || fail "device 0 does not hold 1 allocation"
	grep -qx 'allocated_bytes.all.current 1048576' out || fail "allocated is not 1 MiB"
	# The plug-in keeps no cache: one segment of exactly each live block.
	grep -qx 'reserved_bytes.all.current 1048576' out || fail "reserved is not 1 MiB"
	grep -q '^npumem-replay: 4 events in .*, 0 OOMs$' err || fail "no one-line summary"
	;;
plugin_from_ini)
	printf '[allocator]\nplugin_dirs = %s\n' "$plugin_dir" >c.ini
	printf 'alloc a 1MiB\n' >t.trace
	run --config c.ini --plugin "$arena" --format stats t.trace
	expect_status 0
	grep -qx 'reserved_bytes.all.current 1048576' out ||
		fail "reserved is not the plug-in's 1 MiB (the caching allocator would reserve 2 MiB)"
	;;
plugin_needs_an_allowed_folder)
	printf 'alloc a 1MiB\n' >t.trace
	run --plugin "$arena" t.trace
	expect_status 2
	expect_err "npumem-replay: no folder allows plug-ins: give --plugin-dir DIR, or plugin_dirs in the --config ini"
	;;
plugin_refused_path)
	printf 'alloc a 1MiB\n' >t.trace
	mkdir elsewhere
	run --plugin "$arena" --plugin-dir elsewhere t.trace
	expect_status 2
	expect_err "npumem-replay: $plugin_dir/arena.so is not in a folder allowed for plug-ins ([allocator] plugin_dirs = $PWD/elsewhere)"
	[ ! -s out ] || fail "a refused plug-in printed a report"
	;;
plugin_world_writable_folder)
	# Anyone could swap the object under us: the daemon's rule refuses it.
	mkdir open && cp "$plugin_dir/arena.so" open/ && chmod 0777 open
	printf 'alloc a 1MiB\n' >t.trace
	run --plugin "$PWD/open/arena.so arena_alloc arena_free" --plugin-dir open t.trace
	expect_status 2
	expect_err "npumem-replay: folder $PWD/open is group- or world-writable (mode 0777)"
	;;
plugin_bad_spec)
	printf 'alloc a 1MiB\n' >t.trace
	run --plugin "arena.so arena_alloc arena_free" --plugin-dir "$plugin_dir" t.trace
	expect_status 2
	expect_err "npumem-replay: plug-in path must be absolute: 'arena.so'"
	run --plugin "$plugin_dir/arena.so arena_alloc" --plugin-dir "$plugin_dir" t.trace
	expect_status 2
	expect_err "npumem-replay: missing FREE_FN after 'arena_alloc'"
	run --plugin "$plugin_dir/arena.so arena_alloc arena_free" --check \
		--plugin-dir "$plugin_dir" t.trace
	expect_status 2
	expect_err "npumem-replay: --check checks the caching allocator, which --plugin bypasses"
	;;
plugin_runs_in_a_host_process)
	# As in the daemon, the ini's plugin_isolation (default process) puts
	# the plug-in in a host process that the replay started.
	build_pid_plugin
	printf 'alloc a 1MiB\n' >t.trace
	run_with_pid --plugin "$PWD/own/pid.so pid_alloc pid_free" --plugin-dir own t.trace
	expect_status 0
	read -r pid ppid <pid.log || fail "the plug-in was not called"
	[ "$pid" != "$(cat replay.pid)" ] || fail "the plug-in ran in the replay's own process"
	[ "$ppid" = "$(cat replay.pid)" ] || fail "the plug-in's host is not the replay's child"
	printf '[allocator]\nplugin_isolation = none\nplugin_dirs = %s\n' "$PWD/own" >none.ini
	: >pid.log
	run_with_pid --config none.ini --plugin "$PWD/own/pid.so pid_alloc pid_free" t.trace
	expect_status 0
	read -r pid ppid <pid.log || fail "the plug-in was not called (none)"
	[ "$pid" = "$(cat replay.pid)" ] || fail "plugin_isolation = none: not in the replay's process"
	;;
plugin_timeout_ends_the_replay)
	# A plug-in that never returns ends the replay at its line, in the
	# ini's plugin_timeout, with the daemon's words.
	build_pid_plugin
	printf '[allocator]\nplugin_timeout = 200ms\nplugin_dirs = %s\n' "$PWD/own" >t.ini
	printf 'alloc a 4096\nalloc b 4096\n' >t.trace
	run --config t.ini --plugin "$PWD/own/pid.so loop_alloc pid_free" t.trace
	expect_status 1
	grep -q "^t.trace:1: plug-in $PWD/own/pid.so faulted in loop_alloc: no return within 200 ms (plugin_timeout); its host was killed" err ||
		fail "no timeout at line 1"
	;;
free_device_pages_apart_hold_a_new_segment)
	# Four 22 MiB segments fill 88 of 100 MiB (a fifth OOMs); b and d go
	# back to the device when a 42 MiB segment does not fit in the 12 MiB
	# left, and their 44 MiB, apart from each other, hold it: a device maps
	# its memory page by page, so free pages decide, not a free run of them.
	printf 'alloc a 20MiB\nalloc b 20MiB\nalloc c 20MiB\nalloc d 20MiB\nalloc e 20MiB\nfree b\nfree d\nalloc big 40MiB\n' >t.trace
	run --device-capacity 100MiB --format stats t.trace
	expect_status 0
	grep -qx 'num_ooms 1' out || fail "not the one OOM of the fifth segment"
	grep -qx 'num_device_free 2' out || fail "b and d did not go back to the device"
	grep -qx 'reserved_bytes.all.current 90177536' out || fail "a, c and big are not the 86 MiB reserved"
	;;
oom_fragmentation_says_why)
	fragmentation_trace 32 >npu.trace
	run --device-capacity 64MiB npu.trace
	expect_status 0
	[ "$(oom_report | sed -n 2p)" = "NPU out of memory. Tried to allocate 16.00 MiB (NPU 0; 64.00 MiB total capacity; 42.00 MiB already allocated; 42.00 MiB current active; 0 bytes free; 64.00 MiB reserved in total by PyTorch).If reserved memory is >> allocated memory try setting max_split_size_mb to avoid fragmentation." ] ||
		fail "npu: not upstream's message below the heading"
	[ "$(why_lines)" = "$fragmentation_why" ] || fail "npu: not why it ran out"
	fragmentation_trace 0 >cuda.trace
	run --flavor cuda --device-capacity 64MiB cuda.trace
	expect_status 0
	[ "$(oom_report | sed -n 2p)" = "CUDA out of memory. Tried to allocate 16.00 MiB. GPU 0 has a total capacity of 64.00 MiB of which 0 bytes is free. Of the allocated memory 42.00 MiB is allocated by PyTorch, and 22.00 MiB is reserved by PyTorch but unallocated. If reserved but unallocated memory is large try setting PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid fragmentation.  See documentation for Memory Management  (https://docs.pytorch.org/docs/stable/notes/cuda.html#optimizing-memory-usage-with-pytorch-cuda-alloc-conf)" ] ||
		fail "cuda: not upstream's message below the heading"
	[ "$(why_lines)" = "$fragmentation_why" ] || fail "cuda: not why it ran out"
	;;
oom_private_pools_says_why)
	# A live MemPool keeps its freed 30 MiB segment; 34 MiB fills the
	# device; the default pool has nothing free for 16 MiB.
	for f in "npu 32" "cuda 0"; do
		set -- $f
		printf 'mempool_create M\nmempool_begin M stream=0\nalloc p %s\nfree p\nmempool_end M\nalloc fill %s\nalloc f %s\n' \
			"$(mib 30 "$2")" "$(mib 34 "$2")" "$(mib 16 "$2")" >"$1.trace"
		run --flavor "$1" --device-capacity 64MiB "$1.trace"
		expect_status 0
		why_lines | grep -qx 'private_pools 31457280 bytes (30.00 MiB) in 1 pool' ||
			fail "$1: the private pool's 30 MiB are not told"
		why_lines | grep -qx 'verdict: held by private pools: 30.00 MiB free in 1 private pool (graphs, MemPools), which this request may not use, would make room for 16.00 MiB' ||
			fail "$1: not held by private pools"
	done
	oom_report | sed -n 2p | grep -qF ' Of the allocated memory 64.00 MiB is allocated by PyTorch, with 30.00 MiB allocated in private pools (e.g., CUDA Graphs), and 0 bytes is reserved by PyTorch but unallocated.' ||
		fail "cuda: upstream's message does not name the private pools"
	;;
oom_pending_frees_says_why)
	# 30 MiB used on stream 1, whose work goes on, freed; 34 MiB fills the
	# device; a capture on stream 2 may not synchronize to get it back.
	printf 'alloc p %s\nalloc fill %s\nrecord_stream p 1\nfree p\ncapture_begin 2\nalloc f %s stream=2\ncapture_end 2\n' \
		"$(mib 30 32)" "$(mib 34 32)" "$(mib 16 32)" >t.trace
	run --device-capacity 64MiB t.trace
	expect_status 0
	why_lines | grep -qx 'pending_frees 31457280 bytes (30.00 MiB): stream 1 31457280 bytes (30.00 MiB)' ||
		fail "the pending free is not told by stream"
	why_lines | grep -qx 'verdict: held by pending frees: 30.00 MiB of blocks freed but waiting on stream events would make room for 16.00 MiB' ||
		fail "not held by pending frees"
	;;
oom_out_of_memory_says_why)
	printf 'alloc x %s\nalloc y %s\nalloc f %s\n' "$(mib 30 32)" "$(mib 34 32)" "$(mib 16 32)" >t.trace
	run --device-capacity 64MiB t.trace
	expect_status 0
	why_lines | grep -qx 'verdict: out of memory: 16.00 MiB (a new segment of 16.00 MiB) is more than the 0 bytes free in large_pool, 0 bytes on the device, 0 bytes in private pools and 0 bytes pending together; 0 bytes held by other allocators' ||
		fail "not out of memory"
	;;
*)
	echo "unknown case $case_name" >&2
	exit 1
	;;
esac
exit 0
