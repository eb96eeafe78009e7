#!/bin/sh
# whatif_cli_test.sh CASE WHATIF REPLAY SRCDIR PLUGIN_DIR - npumem-whatif
# used from the shell, one behaviour per CASE, its figures checked against
# sums done by hand and against npumem-replay. Needs jq.
set -u

case_name=$1 whatif=$2 replay=$3 srcdir=$4 plugin_dir=$5
passthrough="$plugin_dir/passthrough.so passthrough_alloc_silent passthrough_free_silent"
training=$srcdir/contrib/traces/training.trace
command -v jq >/dev/null || { echo "SKIP: jq is not installed"; exit 77; }
program=$whatif
. "$(dirname "$0")/cli_lib.sh"

# field ROW NAME: a field of row ROW (0-based) of out's JSON.
field() {
	jq -r ".[$1].$2" out
}

expect_field() { # ROW NAME VALUE
	[ "$(field "$1" "$2")" = "$3" ] || fail "row $1 $2 is $(field "$1" "$2"), expected $3"
}

# search_beside_plugin FUNCTIONS: --min-capacity on expand.trace at 64 MiB,
# the defaults' row beside faulty.so with FUNCTIONS, whose row fails in
# the search while the defaults' finds 80 MiB.
search_beside_plugin() {
	expandable_trace
	run --device-capacity 64MiB --min-capacity --format json --alloc-conf "" \
		--plugin "$plugin_dir/faulty.so $1" --plugin-dir "$plugin_dir" expand.trace
	expect_status 1
	expect_field 0 min_capacity_bytes $((80 * MiB))
	expect_field 1 failed true
}

# Nothing on standard output, a message on standard error.
expect_refused() {
	expect_status 2
	[ ! -s out ] || fail "something was written to standard output"
	grep -q "$1" err || fail "stderr does not say: $1"
}

MiB=1048576

# Ten 6 MiB tensors (6 MiB - 32: the npu flavor pads 32 bytes), all live.
#   defaults: 1 to 10 MiB requests take 20 MiB segments and a block never
#   spans two: 3 a segment (18 MiB, 2 MiB wasted), so tensor 10 (line 10)
#   needs a 4th segment: 4 x 20 = 80 MiB, 60 MiB is all a 64 MiB device
#   gives (segments are in 20 MiB), nothing cached to free: an OOM.
#   expandable_segments: one range mapped 20 MiB a page, blocks across
#   pages: 60 MiB = 3 pages holds all ten. Least capacity 60 MiB.
expandable_trace() {
	i=1
	while [ $i -le 10 ]; do echo "alloc a$i 6291424"; i=$((i + 1)); done >expand.trace
}

# A 40 MiB block freed, an 8 MiB tensor, the 40 MiB again (sizes - 32).
#   defaults: the 8 MiB is split from the cached 40 MiB segment, so the
#   second 40 MiB (line 4) needs a new one: 80 MiB; at 64 MiB the cache
#   holds nothing whole to free: an OOM.
#   max_split_size_mb:32: a block of 32 MiB or more is not split for a
#   smaller request, so the 8 MiB takes a 20 MiB segment of its own and
#   the 40 MiB comes back from the cache: 40 + 20 = 60 MiB.
split_trace() {
	printf 'alloc b1 41943008\nfree b1\nalloc s 8388576\nalloc b2 41943008\n' >split.trace
}

# replay_stat SETTING KEY: what npumem-replay's stats say.
replay_stat() {
	"$replay" --alloc-conf "$1" --format stats "$training" 2>/dev/null |
		awk -v k="$2" '$1 == k { print $2 }'
}

strip_seconds() {
	jq -c 'map(del(.seconds))' "$1"
}

# A plug-in that crashes in its first alloc (line 3 of the training trace).
crash="$plugin_dir/faulty.so faulty_segv_alloc faulty_free"
crash_why="$training:3: plug-in $plugin_dir/faulty.so faulted in faulty_segv_alloc: signal 11 (Segmentation fault) at (nil); retired, never called again; its 0 live blocks (0 bytes) are lost"
# A sanitizer's own handlers would end the plug-in's host before the
# fault barrier could report: the crash is the point.
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}handle_segv=0:handle_sigbus=0:handle_abort=0"

# The comparison of a good setting, the crashing plug-in and another good
# one, in JSON; and the good ones alone in alone.json.
run_beside_crash() {
	"$whatif" --format json --alloc-conf "" --alloc-conf expandable_segments:True \
		"$training" >alone.json 2>/dev/null || fail "the good rows alone"
	run --format json --alloc-conf "" --plugin "$crash" --alloc-conf expandable_segments:True \
		--plugin-dir "$plugin_dir" "$@" "$training"
}

# Row ROW of out without what depends on its place and its time.
figures_of() { # FILE ROW
	jq -c ".[$2] | del(.index, .rows, .seconds)" "$1"
}

case $case_name in
expandable_segments_removes_the_oom)
	expandable_trace
	for flavor in npu cuda; do
		run --flavor "$flavor" --device-capacity 64MiB --min-capacity --format json \
			--alloc-conf "" --alloc-conf expandable_segments:True expand.trace
		expect_status 0
		expect_field 0 num_ooms 1
		expect_field 0 first_oom_line 10
		expect_field 0 min_capacity_bytes $((80 * MiB))
		expect_field 1 num_ooms 0
		expect_field 1 first_oom_line null
		expect_field 1 min_capacity_bytes $((60 * MiB))
		expect_field 1 best_min_capacity true
	done
	;;
max_split_size_removes_the_oom)
	split_trace
	for flavor in npu cuda; do
		run --flavor "$flavor" --device-capacity 64MiB --min-capacity --format json \
			--alloc-conf "" --alloc-conf max_split_size_mb:32 split.trace
		expect_status 0
		expect_field 0 num_ooms 1
		expect_field 0 first_oom_line 4
		expect_field 0 min_capacity_bytes $((80 * MiB))
		expect_field 1 num_ooms 0
		expect_field 1 min_capacity_bytes $((60 * MiB))
		# Reserved peaks at 60 MiB when the 8 MiB segment comes: 8 allocated.
		expect_field 1 peak_reserved_bytes $((60 * MiB))
		expect_field 1 fragmentation_bytes $((52 * MiB))
	done
	;;
table_marks_the_best_and_says_what_to_set)
	expandable_trace
	run --device-capacity 64MiB --min-capacity --alloc-conf "" \
		--alloc-conf expandable_segments:True expand.trace
	expect_status 0
	grep -q '^expandable_segments:True .* 60 MiB \* ' out || fail "the expandable row is not marked"
	tail -n 1 out | grep -qx 'Set PYTORCH_NPU_ALLOC_CONF=expandable_segments:True: runs in 60 MiB (defaults: 80 MiB).' ||
		fail "the advice is not the expected line"
	;;
rows_equal_separate_npumem_replay_runs)
	run --format json "$training"
	expect_status 0
	[ "$(jq length out)" = 8 ] || fail "the default set is not 8 rows"
	row=0
	while [ $row -lt 8 ]; do
		s=$(field $row settings)
		for pair in peak_reserved_bytes:reserved_bytes.all.peak \
			peak_allocated_bytes:allocated_bytes.all.peak \
			peak_active_bytes:active_bytes.all.peak \
			peak_inactive_split_bytes:inactive_split_bytes.all.peak \
			num_device_alloc:num_device_alloc num_device_free:num_device_free \
			num_alloc_retries:num_alloc_retries num_ooms:num_ooms \
			num_sync_all_streams:num_sync_all_streams; do
			expect_field $row "${pair%%:*}" "$(replay_stat "$s" "${pair#*:}")"
		done
		row=$((row + 1))
	done
	;;
plugin_row_equals_npumem_replay_plugin)
	run --alloc-conf "" --plugin "$passthrough" --plugin-dir "$plugin_dir" --format json "$training"
	expect_status 0
	expect_field 1 plugin true
	want=$("$replay" --plugin "$passthrough" --plugin-dir "$plugin_dir" --format stats \
		"$training" 2>/dev/null | awk '$1 == "num_device_alloc" { print $2 }')
	expect_field 1 num_device_alloc "$want"
	;;
csv_has_a_header_and_a_line_a_row)
	run --format csv --alloc-conf "" --alloc-conf 'max_split_size_mb:256' "$training"
	expect_status 0
	[ "$(wc -l <out)" = 3 ] || fail "not 3 lines"
	head -n 1 out | grep -q '^settings,plugin,peak_reserved_bytes,' || fail "bad header"
	sed -n 3p out | grep -q '^"max_split_size_mb:256",0,' || fail "bad row"
	;;
capacity_probes_stop_at_the_first_oom)
	# split.trace, free s and 1000 pairs of 8 MiB that reuse its block:
	# 2005 events. The search starts at 64 MiB (32 pages; the floor is the
	# 40 MiB request, 20 pages), where the row's own replay ran out of
	# memory, so it is not replayed: it runs 64 (runs), then bisects: 48,
	# 40 run, 36, 38, 39 fail; runs 40 again; tries 20, 24, 29, 34 pages
	# below it (39 is known): 4 runs of 2005 events, 7 that stop at the OOM
	# on line 4 after 4 events: 8048.
	split_trace
	echo 'free s' >>split.trace
	i=0
	while [ $i -lt 1000 ]; do printf 'alloc p%d 8388576\nfree p%d\n' $i $i; i=$((i + 1)); done >>split.trace
	run --device-capacity 64MiB --min-capacity --format json --alloc-conf "" split.trace
	expect_status 0
	expect_field 0 min_capacity_bytes $((80 * MiB))
	expect_field 0 min_capacity_replays 11
	expect_field 0 min_capacity_events 8048
	;;
least_capacity_runs_and_one_page_less_does_not)
	# Pages are 2 MiB: 80 MiB runs the defaults, 78 MiB does not.
	expandable_trace
	run --device-capacity 64MiB --min-capacity --format json --alloc-conf "" expand.trace
	expect_field 0 min_capacity_bytes $((80 * MiB))
	expect_field 0 min_capacity_smaller_also_runs null
	run --device-capacity 80MiB --format json --alloc-conf "" expand.trace
	expect_field 0 num_ooms 0
	run --device-capacity 78MiB --format json --alloc-conf "" expand.trace
	expect_field 0 num_ooms 1
	;;
jobs_give_the_same_rows)
	run --jobs 1 --min-capacity --format json "$training"
	strip_seconds out >one
	run --jobs 3 --min-capacity --format json "$training"
	strip_seconds out >three
	cmp -s one three || fail "--jobs 3 differs from --jobs 1"
	;;
svg_has_a_line_per_setting)
	run --svg pic.svg --alloc-conf "" --alloc-conf expandable_segments:True "$training"
	expect_status 0
	[ "$(grep -c '<polyline' pic.svg)" = 2 ] || fail "not 2 curves"
	grep -q '>expandable_segments:True<' pic.svg || fail "no legend for the setting"
	;;
shards_merge_into_the_single_run)
	run --min-capacity --format json "$training"
	strip_seconds out >single
	for i in 1 2 3; do
		"$whatif" --shard $i/3 --min-capacity "$training" >shard$i.jsonl || fail "shard $i"
	done
	run --merge --format json shard3.jsonl shard1.jsonl shard2.jsonl
	expect_status 0
	strip_seconds out >merged
	cmp -s single merged || fail "the merge differs from the single run"
	run --merge shard1.jsonl shard2.jsonl
	expect_refused 'row 3 of 8 is in none'
	;;
unreadable_trace_is_refused)
	run missing.trace
	expect_refused 'missing.trace: No such file or directory'
	;;
bad_line_is_refused)
	printf 'alloc a 1MiB\nfreee a\n' >bad.trace
	run bad.trace
	expect_refused 'bad.trace:2'
	;;
malformed_setting_is_refused_with_upstream_s_text)
	run --alloc-conf "" --alloc-conf max_split_size_mb:10 "$training"
	expect_refused "^npumem-whatif: --alloc-conf 'max_split_size_mb:10': "
	;;
capacity_below_the_largest_request_is_refused_at_once)
	split_trace
	run --min-capacity --device-capacity 32MiB split.trace
	expect_refused 'split.trace:1: a request of 41943008 bytes is larger than the device capacity'
	;;
snapshot_that_is_no_snapshot_is_refused)
	command -v python3 >/dev/null || { echo "SKIP: python3 is not installed"; exit 77; }
	python3 -c 'import pickle; pickle.dump([1, 2], open("list.pickle", "wb"))'
	run list.pickle
	expect_refused 'list.pickle: snapshot2trace could not convert it (exit status 2)'
	;;
device_option_shows_that_device_s_figures)
	# 1 MiB - 32, padded to 1 MiB, is a small block: a 2 MiB segment on
	# device 1; device 0 holds nothing.
	printf 'alloc a 1048544 device=1\n' >dev.trace
	run --format json --alloc-conf "" dev.trace
	expect_field 0 peak_reserved_bytes 0
	run --device 1 --format json --alloc-conf "" dev.trace
	expect_field 0 peak_reserved_bytes $((2 * MiB))
	expect_field 0 peak_allocated_bytes $MiB
	;;
device_the_machine_lacks_is_refused_once)
	printf 'alloc a 1MiB device=1\n' >dev.trace
	run --devices 1 dev.trace
	expect_refused 'dev.trace names device 1; the machine has 1 (--devices)'
	[ "$(wc -l <err)" = 1 ] || fail "said more than once"
	;;
ini_alloc_conf_is_under_every_row)
	# The ini's max_split_size_mb:256 is what "" gives; the table says so.
	printf '[allocator]\nalloc_conf = max_split_size_mb:256\n' >w.ini
	run --config w.ini --format json --alloc-conf "" "$training"
	expect_field 0 ini_alloc_conf max_split_size_mb:256
	expect_field 0 peak_reserved_bytes "$(replay_stat max_split_size_mb:256 reserved_bytes.all.peak)"
	run --config w.ini --alloc-conf "" --alloc-conf expandable_segments:True "$training"
	sed -n 1p out | grep -qx "Every row's settings are parsed over the ini's alloc_conf: max_split_size_mb:256" ||
		fail "the table does not say what is under the rows"
	grep -q "^(the ini's) " out || fail "the \"\" row is not called the ini's"
	tail -n 1 out | grep -q "(the ini's: " || fail "the advice compares with defaults"
	;;
jobs_0_is_refused)
	run --jobs 0 "$training"
	expect_refused "bad --jobs '0'"
	;;
svg_not_written_when_refused)
	run --svg pic.svg --alloc-conf "foo:1" "$training"
	expect_refused "Unrecognized key 'foo'"
	[ ! -e pic.svg ] || fail "the picture was written"
	;;
crashing_plugin_row_fails_in_place_and_the_others_are_shown)
	run --alloc-conf "" --plugin "$crash" --alloc-conf expandable_segments:True \
		--plugin-dir "$plugin_dir" "$training"
	expect_status 1
	sed -n 2p out | grep -q '^(defaults)  *7.22 GiB  *5.35 GiB ' || fail "the defaults' row is not second"
	sed -n 3p out | grep -qxF "plugin $crash  failed: $crash_why" ||
		fail "the plug-in's row does not say why, in its place"
	sed -n 4p out | grep -q '^expandable_segments:True  *5.53 GiB \* ' ||
		fail "the expandable row is not fourth, marked"
	tail -n 1 out | grep -qx 'Set PYTORCH_NPU_ALLOC_CONF=expandable_segments:True: peak reserved 5.53 GiB (defaults: 7.22 GiB).' ||
		fail "the advice is not the good rows'"
	grep -qxF "npumem-whatif: --plugin $crash: $crash_why" err || fail "stderr does not say which row failed"
	;;
good_rows_beside_a_failed_one_are_as_when_run_alone)
	run_beside_crash
	expect_status 1
	expect_field 0 peak_reserved_bytes 7751073792
	expect_field 0 peak_reserved_bytes "$(replay_stat "" reserved_bytes.all.peak)"
	expect_field 2 num_device_alloc "$(replay_stat expandable_segments:True num_device_alloc)"
	[ "$(figures_of out 0)" = "$(figures_of alone.json 0)" ] || fail "row 0 differs from its run alone"
	[ "$(figures_of out 2)" = "$(figures_of alone.json 1)" ] || fail "row 2 differs from its run alone"
	;;
json_says_a_row_failed_and_why)
	run_beside_crash
	expect_status 1
	expect_field 0 failed false
	expect_field 0 failure null
	expect_field 1 failed true
	expect_field 1 failure "$crash_why"
	expect_field 1 plugin true
	expect_field 1 peak_reserved_bytes null
	expect_field 1 best_peak_reserved false
	expect_field 2 best_peak_reserved true
	;;
csv_leaves_a_failed_row_s_figures_empty)
	run --format csv --alloc-conf "" --plugin "$crash" --plugin-dir "$plugin_dir" "$training"
	expect_status 1
	head -n 1 out | grep -q ',best_min_capacity,failed,failure$' || fail "bad header"
	sed -n 2p out | grep -q '^"",0,7751073792,.*,1,0,0,$' || fail "the good row"
	sed -n 3p out | grep -qxF "\"$crash\",1,,,,,,,,,,,,,,,,0,0,1,\"$crash_why\"" || fail "the failed row"
	;;
plugin_that_never_returns_fails_its_row_at_plugin_timeout)
	printf '[allocator]\nplugin_timeout = 200ms\n' >t.ini
	run --config t.ini --format json --alloc-conf "" \
		--plugin "$plugin_dir/faulty.so faulty_loop_alloc faulty_free" --plugin-dir "$plugin_dir" \
		"$training"
	expect_status 1
	expect_field 0 peak_reserved_bytes 7751073792
	expect_field 1 failure "$training:3: plug-in $plugin_dir/faulty.so faulted in faulty_loop_alloc: no return within 200 ms (plugin_timeout); its host was killed; retired, never called again; its 0 live blocks (0 bytes) are lost"
	;;
fault_in_a_capacity_probe_fails_the_row_at_that_capacity)
	# At 64 MiB the plug-in's ten 6 MiB blocks fit, 60 MiB at the peak: the
	# search tries that first (30 pages: it runs), then bisects: 16 pages
	# (32 MiB, between the 3-page floor and 30 pages), where the sixth
	# alloc finds no memory and it crashes.
	search_beside_plugin "faulty_segv_oom_alloc faulty_free"
	expect_field 1 failure "--min-capacity, probing 32 MiB (33554432 bytes): expand.trace:6: plug-in $plugin_dir/faulty.so faulted in faulty_segv_oom_alloc: signal 11 (Segmentation fault) at (nil); retired, never called again; its 5 live blocks (31457120 bytes) are lost"
	;;
refusal_in_a_capacity_probe_fails_the_row_at_that_capacity)
	# The init_checked hook accepts the configured 64 MiB and the 60 MiB
	# the replay held at its peak, and refuses the bisection's first probe,
	# 32 MiB: the row fails there, the comparison is still written.
	search_beside_plugin "faulty_alloc faulty_free init_checked=faulty_init_refuse_small"
	field 1 failure | grep -q "^--min-capacity, probing 32 MiB (33554432 bytes): init_checked hook 'faulty_init_refuse_small' of .* refused the load (returned -1)" ||
		fail "row 1's failure: $(field 1 failure)"
	;;
shards_keep_a_failed_row)
	run_beside_crash
	strip_seconds out >single
	"$whatif" --shard 1/2 --alloc-conf "" --plugin "$crash" --alloc-conf expandable_segments:True \
		--plugin-dir "$plugin_dir" "$training" >shard1.jsonl 2>/dev/null || fail "shard 1"
	status=0
	"$whatif" --shard 2/2 --alloc-conf "" --plugin "$crash" --alloc-conf expandable_segments:True \
		--plugin-dir "$plugin_dir" "$training" >shard2.jsonl 2>/dev/null || status=$?
	expect_status 1
	[ "$(jq -r .failure shard2.jsonl)" = "$crash_why" ] || fail "the shard's line lost the failure"
	run --merge --format json shard2.jsonl shard1.jsonl
	expect_status 1
	strip_seconds out >merged
	cmp -s single merged || fail "the merge differs from the single run"
	grep -qxF "npumem-whatif: --plugin $crash: $crash_why" err || fail "the merge does not say which row failed"
	;;
svg_marks_a_failed_row_and_draws_the_others)
	run --svg pic.svg --alloc-conf "" --plugin "$crash" --alloc-conf expandable_segments:True \
		--plugin-dir "$plugin_dir" "$training"
	expect_status 1
	[ "$(grep -c '<polyline' pic.svg)" = 2 ] || fail "not 2 curves"
	grep -q "^<g class=\"failed\"><title>$training:3: plug-in .*faulted in faulty_segv_alloc" pic.svg ||
		fail "the failed row is not marked with why"
	grep -q 'fill="none" .*>plugin .*faulty_segv_alloc faulty_free (failed, not drawn)<' pic.svg ||
		fail "no empty swatch and label for the failed row"
	;;
killed_replay_process_fails_its_row)
	# In process, a plug-in that never returns holds its row's process,
	# which is then killed: row 0's, the first of --jobs 1.
	command -v pgrep >/dev/null || { echo "SKIP: pgrep is not installed"; exit 77; }
	printf '[allocator]\nplugin_isolation = none\n' >none.ini
	"$whatif" --config none.ini --jobs 1 --format json \
		--plugin "$plugin_dir/faulty.so faulty_loop_alloc faulty_free" --alloc-conf "" \
		--plugin-dir "$plugin_dir" "$training" >out 2>err &
	pid=$!
	child=
	for _ in $(seq 100); do child=$(pgrep -P $pid) && break; sleep 0.05; done
	[ -n "$child" ] || fail "no replay process"
	kill -KILL "$child"
	status=0
	wait $pid || status=$?
	expect_status 1
	expect_field 0 failure "its replay process was killed by signal 9 (Killed)"
	expect_field 1 peak_reserved_bytes 7751073792
	;;
plugin_whose_init_faults_fails_its_row)
	run --format json --alloc-conf "" \
		--plugin "$plugin_dir/faulty.so faulty_alloc faulty_free init=faulty_init_crash" \
		--plugin-dir "$plugin_dir" "$training"
	expect_status 1
	expect_field 0 peak_reserved_bytes 7751073792
	field 1 failure | grep -q "^the init hook of $plugin_dir/faulty.so faulted: signal 11 (Segmentation fault) at 0x[0-9a-f]*; not loaded$" ||
		fail "row 1 does not say its init hook faulted"
	;;
advice_counts_only_the_rows_that_ran)
	expandable_trace
	run --device-capacity 64MiB --alloc-conf "" --plugin "$crash" --plugin-dir "$plugin_dir" \
		expand.trace
	expect_status 1
	tail -n 1 out | grep -qx "Every setting that ran runs out of memory at this capacity; --min-capacity finds how much each needs." ||
		fail "the advice does not set the failed row apart"
	;;
merge_of_failed_rows_only_says_none_ran)
	printf '{"index":0,"rows":1,"settings":"/p/x.so a f","flavor":"npu","plugin":true,"failed":true,"failure":"x.trace:3: it faulted"}\n' >only.jsonl
	run --merge only.jsonl
	expect_status 1
	sed -n 2p out | grep -qxF "plugin /p/x.so a f  failed: x.trace:3: it faulted" || fail "the failed row"
	tail -n 1 out | grep -qx "No setting's replay ran to its end." || fail "the advice is not that none ran"
	;;
refused_plugin_spec_still_stops_everything)
	run --alloc-conf "" --plugin "$plugin_dir/faulty.so nothere faulty_free" \
		--plugin-dir "$plugin_dir" "$training"
	expect_refused "has no function 'nothere' (ALLOC_FN)"
	;;
*)
	echo "unknown case $case_name" >&2
	exit 2
	;;
esac
