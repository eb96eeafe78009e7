#!/usr/bin/env bash
# Pinned memory in graph private pools through the mount: the six
# scenarios of torch_npu's test_aclgraph_pin_memory.py ("[ACLGRAPH]
# support pin memory"), with ctl/graph's enter (torch.npu.graph's entry) on
# stream 1, pinned/NAME and ctl/copy, 64 floats (256 bytes) a tensor.
. "$(dirname "$0")/lib.sh"
mount_fs

H=$MNT/host/stats
G=$MNT/ctl/graph
graph() { echo "$1" >"$G" || fail "ctl/graph: $1: $(last_error "$G")"; }
sync1() { echo "sync stream=$1" >"$MNT/ctl/op" || fail "sync stream $1"; }
# torch.full((64,), V): 64 little-endian floats into file $1.
fill() {
	perl -e 'print pack("f<*", ($ARGV[0]) x 64)' -- "$2" |
		dd of="$1" conv=notrunc status=none || fail "fill $1 with $2"
}
# The distinct floats of file $1, e.g. "7".
floats() { od -An -v -tf4 "$1" | tr -s ' ' '\n' | sed '/^$/d' | sort -u | paste -sd' '; }
# Column $2 of the host block at address $1 (4 pool, 5 state).
block_col() { awk -v a="$1" -v c="$2" '$1 == a { print $c }' "$MNT/host/blocks"; }
# Addresses of the blocks of pool $1.
pool_blocks() { awk -v p="$1" 'NR > 1 && $4 == p { print $1 }' "$MNT/host/blocks"; }
new_dst() { truncate -s 256 "$MNT/tensors/device0/stream1/$1" && fill "$MNT/tensors/device0/stream1/$1" 0; }
# with torch.npu.graph(g, stream=s): p = torch.full((64,), V).pin_memory(); dst.copy_(p, non_blocking=True)
pin_and_copy() {
	truncate -s 256 "$MNT/pinned/$1" || fail "pin $1 during the capture"
	fill "$MNT/pinned/$1" "$2"
	echo "pinned/$1 tensors/device0/stream1/$3" >"$MNT/ctl/copy" ||
		fail "copy $1: $(last_error "$MNT/ctl/copy")"
}

# 1. test_pin_memory_h2d_during_capture: gpu_dst = torch.zeros(64, device="npu")
# is made before the capture, on the default stream; its copy_ inside the
# graph context runs on the current stream, the capture stream.
truncate -s 256 "$MNT/tensors/device0/dst" && fill "$MNT/tensors/device0/dst" 0
graph "create g"
graph "enter g stream=1"
truncate -s 256 "$MNT/pinned/pinned" || fail "pin during the capture"
fill "$MNT/pinned/pinned" 7.0
echo "pinned/pinned tensors/device0/dst" >"$MNT/ctl/copy" ||
	fail "copy into a default-stream tensor: $(last_error "$MNT/ctl/copy")"
graph "capture_end g"
expect_eq "$(floats "$MNT/tensors/device0/dst")" 0 "a captured copy runs at replay"
captured=$(pool_blocks 1_0)
[ -n "$captured" ] || fail "the pin made during the capture is not in the graph's host pool 1_0"
expect_eq "$(block_col "$captured" 8)" yes "the captured pin is marked allocated during capture"
graph "replay g"
sync1 0
expect_eq "$(floats "$MNT/tensors/device0/dst")" 7 "h2d captured and replayed"

# 2. test_captured_pinned_block_isolated_from_default_pool
rm "$MNT/pinned/pinned"
before="$(host_stat allocations.current) $(host_stat allocated_bytes.current)"
echo 1 >"$MNT/ctl/host_empty_cache"
expect_eq "$(host_stat allocations.current) $(host_stat allocated_bytes.current)" "$before" \
	"host_empty_cache freed the captured pinned block"
expect_eq "$(block_col "$captured" 5)" pending "the captured block waits for an event never recorded"
for i in $(seq 32); do
	truncate -s 256 "$MNT/pinned/s$i" && fill "$MNT/pinned/s$i" "-$i"
done
expect_eq "$(block_col "$captured" 4)" 1_0 "a post-capture pin took the captured block"
expect_eq "$(pool_blocks 0_0 | grep -c "^$captured\$")" 0 "the captured address in the default pool"
for _ in 1 2 3 4 5; do
	fill "$MNT/tensors/device0/dst" 0
	graph "replay g"
	sync1 0
	expect_eq "$(floats "$MNT/tensors/device0/dst")" 7 "replays keep reading 7"
done
rm "$MNT"/pinned/s*

# 3. test_intra_capture_block_reuse_stays_in_private_pool
new_dst dst1
new_dst dst2
graph "create g3"
graph "enter g3 stream=1"
pin_and_copy t1 3.0 dst1
rm "$MNT/pinned/t1"
pin_and_copy t2 5.0 dst2
graph "capture_end g3"
t2=$(pool_blocks 2_0 | tail -1)
expect_eq "$(pool_blocks 2_0 | wc -l)" 2 "t1 and t2 each have a block of the graph's pool"
rm "$MNT/pinned/t2"
for i in $(seq 16); do
	truncate -s 256 "$MNT/pinned/p$i" && fill "$MNT/pinned/p$i" -1
done
expect_eq "$(block_col "$t2" 4)" 2_0 "a post-capture pin took t2's block"
graph "replay g3"
sync1 0
expect_eq "$(floats "$MNT/tensors/device0/stream1/dst1")" 3 "dst1 after the replay"
expect_eq "$(floats "$MNT/tensors/device0/stream1/dst2")" 5 "dst2 after the replay"
rm "$MNT"/pinned/p*

# 4. test_two_graphs_shared_pool_no_cross_contamination
new_dst d1
new_dst d2
graph "create g1"
graph "create g2"
graph "enter g1 stream=1 pool=handle:shared"
pin_and_copy t1 11.0 d1
graph "capture_end g1"
graph "enter g2 stream=1 pool=handle:shared"
pin_and_copy t2 22.0 d2
graph "capture_end g2"
expect_eq "$(pool_blocks 0_1 | sort -u | wc -l)" 2 "two graphs sharing a pool share a pinned block"
for _ in 1 2 3; do
	graph "replay g2"
	graph "replay g1"
	graph "replay g1"
	graph "replay g2"
done
sync1 0
expect_eq "$(floats "$MNT/tensors/device0/stream1/d1")" 11 "d1 after interleaved replays"
expect_eq "$(floats "$MNT/tensors/device0/stream1/d2")" 22 "d2 after interleaved replays"

# 5. test_release_pool_frees_unused_captured_blocks
echo 1 >"$MNT/ctl/host_empty_cache"
baseline="$(host_stat allocations.current) $(host_stat allocated_bytes.current)"
for i in $(seq 10); do
	graph "create c$i"
	graph "enter c$i stream=1"
	truncate -s 4096 "$MNT/pinned/unused" || fail "pin in capture $i"
	graph "capture_end c$i"
	rm "$MNT/pinned/unused"
	graph "reset c$i"
	graph "destroy c$i"
done
echo 1 >"$MNT/ctl/host_empty_cache"
expect_eq "$(host_stat allocations.current) $(host_stat allocated_bytes.current)" "$baseline" \
	"ten capture/reset cycles, then host_empty_cache: host memory back to the baseline"

# torch.npu.graph's entry empties the pinned cache; capture_begin alone does not.
held=$(host_stat allocated_bytes.current)
truncate -s 256 "$MNT/pinned/warm" && rm "$MNT/pinned/warm"
graph "create plain"
graph "capture_begin plain stream=1"
expect_eq "$(host_stat allocated_bytes.current)" $((held + 256)) "capture_begin kept the cached pin"
graph "capture_end plain"
graph "create ctx"
graph "enter ctx stream=1"
expect_eq "$(host_stat allocated_bytes.current)" "$held" "enter emptied the pinned cache"
graph "capture_end ctx"
# Its synchronize is refused while another stream of the device captures.
graph "create busy"
graph "capture_begin busy stream=2"
expect_fail "echo 'enter ctx stream=1' >$G" "Device or resource busy"
expect_eq "$(last_error "$G")" \
	"torch.npu.synchronize(): aclrtSynchronizeDevice: ACL_ERROR_RT_STREAM_CAPTURED (107027)" \
	"enter during another capture"
graph "capture_end busy"

stop_fs
expect_eq "$STATUS" 0 "daemon exit status"

# 6. test_capture_rejects_expandable_segments: a fresh daemon, the variant fixed at start.
printf '%s\n' "$INI_TEXT" "[allocator]" "alloc_conf = pin_memory_expandable_segments:True" >"$INI"
mount_fs
echo "create g" >"$G" || fail "create g"
before=$(cat "$G" "$H")
expect_fail "echo 'enter g stream=1' >$G" "Invalid argument"
case "$(last_error "$G")" in
"ACLGraph capture is not supported when pin_memory_expandable_segments=True. "*) ;;
*) fail "enter with the expandable variant: $(last_error "$G")" ;;
esac
expect_eq "$(cat "$G" "$H" | grep -v '^last_error')" "$(echo "$before" | grep -v '^last_error')" \
	"a refused capture changed something"
stop_fs
expect_eq "$STATUS" 0 "daemon exit status (expandable)"
