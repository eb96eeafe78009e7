#!/usr/bin/env bash
# MemPools through ctl/mempool and the pools/ files: use_count 1 -> 2 -> 1
# around begin/end, a second begin refused with upstream's text and no use
# taken, a live MemPool's segment kept by empty_cache and gone after
# release, flags, pools/device0 equal to its JSON, the per-pool snapshot
# and the metrics' pool gauges.
. "$(dirname "$0")/lib.sh"
mount_fs

M=$MNT/ctl/mempool
P=$MNT/pools/device0
S1=$MNT/tensors/device0/stream1

mempool() { echo "$1" >"$M" || fail "mempool '$1': $(grep last_error "$M")"; }
# A pool's column in pools/device0, by the header's names.
pool_field() { awk -v p="$1" -v c="$2" 'NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i }
	$1 == p { print $col[c] }' "$P"; }
mempool_field() { awk -v m="$1" -v c="$2" 'NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i }
	$1 == m { print $col[c] }' "$M"; }

# MemPool() in a fresh process: (0, 1), one use.
mempool "create m"
expect_eq "$(mempool_field m pool)" 0_1 "id of the first MemPool"
expect_eq "$(mempool_field m use_count)" 1 "use_count after create"
expect_eq "$(pool_field 0_1 use_count)" 1 "pools/device0 use_count after create"
expect_eq "$(pool_field 0_1 routing)" no "routing after create"

# use_mem_pool's enter takes a use and routes stream 1's allocations.
mempool "begin m stream=1"
expect_eq "$(mempool_field m use_count)" 2 "use_count after begin"
expect_eq "$(mempool_field m routing)" stream1 "routing after begin"
expect_eq "$(pool_field 0_1 routing)" yes "pools/device0 routing after begin"
truncate -s 4000 "$S1/t" || fail "tensor routed to the pool"
expect_eq "$(pool_field 0_1 segments)" 1 "segments after a 4000-byte tensor"
expect_eq "$(pool_field 0_1 reserved_bytes)" 2097152 "pool reserved after a 4000-byte tensor"
expect_eq "$(pool_field 0_1 allocated_bytes)" 4096 "pool allocated after a 4000-byte tensor"
expect_eq "$(pool_field 0_1 device_mallocs)" 1 "device mallocs of the pool"

# A second begin: upstream's text; the use the allocator took is given back.
expect_fail "echo 'begin m stream=2' > '$M'" "Device or resource busy"
expect_eq "$(last_error "$M")" "beginAllocateToPool: already recording to mempool_id" "second begin"
expect_eq "$(mempool_field m use_count)" 2 "use_count after a refused begin"
expect_fail "echo 'release m' > '$M'" "Device or resource busy"
expect_eq "$(last_error "$M")" "mempool m still routes stream 1: end it first" "release while routing"

# use_mem_pool's exit: end routing, give the use back.
mempool "end m"
expect_eq "$(mempool_field m use_count)" 1 "use_count after end"
expect_eq "$(pool_field 0_1 routing)" no "routing after end"
expect_fail "echo 'end m' > '$M'" "No such file or directory"
expect_eq "$(last_error "$M")" "endAllocatePool: not currently recording to mempool_id" "end without begin"
truncate -s 4000 "$S1/u"
expect_eq "$(pool_field 0_1 allocated_bytes)" 4096 "a tensor after end is not the pool's"

# The pool's own snapshot: one small segment with the pool's id.
python3 - "$MNT/snapshot/device0.pools/0_1.json" <<'PY' || fail "snapshot of pool 0_1"
import json, sys
segs = json.load(open(sys.argv[1]))
assert len(segs) == 1, segs
assert segs[0]["segment_pool_id"] == [0, 1], segs[0]
assert segs[0]["total_size"] == 2097152 and segs[0]["segment_type"] == "small", segs[0]
PY
expect_eq "$(ls "$MNT/snapshot/device0.pools")" 0_1.json "pool snapshots listed"

# A live MemPool keeps its segment through empty_cache; release frees it.
rm "$S1/t" "$S1/u"
echo 1 >"$MNT/ctl/empty_cache"
expect_eq "$(pool_field 0_1 segments)" 1 "pool segments after empty_cache"
expect_eq "$(value memory_reserved)" 2097152 "reserved after empty_cache"
mempool "release m"
expect_eq "$(pool_field 0_1 segments)" "" "pool 0_1 after release"
expect_eq "$(value memory_reserved)" 0 "reserved after release"
expect_eq "$(tail -n +2 "$M" | grep -c '^m ')" 0 "m listed after release"
expect_fail "echo 'end m' > '$M'" "No such file or directory"
expect_eq "$(last_error "$M")" "no mempool m (create it first)" "a released MemPool"

# Flags; pools/device0 and its JSON say the same; the metrics have the gauges.
mempool "create f use_on_oom no_split"
mempool "begin f stream=2"
truncate -s 3M "$MNT/tensors/device0/stream2/big"
expect_eq "$(pool_field 0_2 use_on_oom) $(pool_field 0_2 no_split)" "yes yes" "flags"
expect_eq "$(pool_field 0_2 reserved_bytes)" 20971520 "a 3 MiB tensor's large segment"
python3 - "$P" "$P.json" <<'PY' || fail "pools/device0 and pools/device0.json differ"
import json, sys
lines = open(sys.argv[1]).read().split("\n")
head, rows = lines[0].split(), [l.split() for l in lines[1:] if l]
table = [dict(zip(head, r)) for r in rows]
js = json.load(open(sys.argv[2]))
assert len(table) == len(js) == 1, (table, js)
for t, j in zip(table, js):
    for k, v in t.items():
        want = j[k]
        want = ("yes" if want else "no") if isinstance(want, bool) else str(want)
        assert v == want, (k, v, want)
    assert j["id"] == [int(x) for x in t["pool"].split("_")], j
PY
grep -qx 'npumemfs_pool_reserved_bytes{device="0",pool="0_2"} 20971520' "$MNT/metrics/npumemfs.prom" ||
	fail "no pool_reserved_bytes gauge for 0_2"
grep -qx 'npumemfs_pool_uses{device="0",pool="0_2"} 2' "$MNT/metrics/npumemfs.prom" ||
	fail "no pool_uses gauge for 0_2"
grep -qx '# TYPE npumemfs_pool_segments gauge' "$MNT/metrics/npumemfs.prom" ||
	fail "pool_segments is not a gauge"

# Refusals change nothing.
before=$(grep -v last_error "$M")
expect_fail "echo 'create f' > '$M'" "File exists"
expect_fail "echo 'create g bogus' > '$M'" "Invalid argument"
expect_eq "$(last_error "$M")" "create does not take 'bogus'" "unknown flag"
expect_fail "echo 'begin f stream=9' > '$M'" "Invalid argument"
expect_fail "echo 'grow f' > '$M'" "Invalid argument"
expect_fail "echo 'create a/b' > '$M'" "Invalid argument"
expect_eq "$(grep -v last_error "$M")" "$before" "ctl/mempool after refused writes"
grep -q 'ctl/mempool: create does not take' "$MNT/log" || fail "refusals are not logged"

# Shutdown with a MemPool still routing: its exit and destructor run.
check_stats_consistent 0
stop_fs
expect_eq "$STATUS" 0 "exit status after SIGTERM"
