#!/usr/bin/env bash
# An allocation the device cannot hold, after the retries: oom/device0 and
# the log carry upstream's report (size asked, capacity, free, allocated,
# reserved), per flavor; oom/device0 is empty until then and keeps the last,
# and below upstream's line it says why it ran out, with a verdict.
INI_TEXT='[device]
count = 1
capacity = 1GiB
malloc_latency_us = 0
free_latency_us = 0'
. "$(dirname "$0")/lib.sh"
T=$MNT/tensors/device0
OOM=$MNT/oom/device0

# 256 MiB in its own segment, 5 MiB split from a 20 MiB one (15 MiB of it
# reserved but unallocated), 100 MiB cached, which the retry releases.
fill_then_ask() { # size
	truncate -s 256M "$T/a" && truncate -s 5M "$T/c" && truncate -s 100M "$T/b" \
		&& rm "$T/b" || fail "filling the device"
	expect_fail "truncate -s $1 '$T/big'" "Cannot allocate memory"
}

expect_report() { # flavor text
	expect_eq "$(head -n 1 "$OOM")" "$2" "$1: oom/device0's first line"
	grep -qF "tensors/device0/big: $2" "$MNT/log" || fail "$1: the log lacks the report"
	grep -qx "num_ooms 1" "$MNT/stats/device0" || fail "$1: num_ooms is not 1"
	expect_eq "$(stat -c %s "$T/big")" 0 "$1: the refused tensor keeps its size"
}

mount_fs
expect_eq "$(stat -c %a "$OOM")" 444 "mode of oom/device0"
expect_eq "$(stat -c %s "$OOM")" 0 "oom/device0 size"
[ -s "$OOM" ] && fail "oom/device0 is not empty before any OOM: $(cat "$OOM")"
# npu: 256 MiB + 32 B -> 258 MiB segment; allocated 256 MiB + 5 MiB + 1 KiB.
fill_then_ask 2G
expect_report npu "NPU out of memory. Tried to allocate 2.00 GiB (NPU 0; 1024.00 MiB total capacity; 261.00 MiB already allocated; 261.00 MiB current active; 746.00 MiB free; 278.00 MiB reserved in total by PyTorch).If reserved memory is >> allocated memory try setting max_split_size_mb to avoid fragmentation."
# 2 GiB + 512 asked; free in the large pool: 2 MiB - 512 after a's 256 MiB
# + 512 and 15 MiB - 512 after c's 5 MiB + 512, in two segments; 1024 - 278
# MiB left on the device: out of memory.
expect_eq "$(tail -n +2 "$OOM")" "request 2147484160 bytes (2.00 GiB) from large_pool on stream 0; a new segment 2149580800 bytes (2.00 GiB)
largest_free_block 15728128 bytes (15.00 MiB) on stream 0
pool_free 17824768 bytes (17.00 MiB) in 2 segments
headroom 782237696 bytes (746.00 MiB)
private_pools 0 bytes in 0 pools
pending_frees 0 bytes
other_allocators 0 bytes
verdict: out of memory: 2.00 GiB (a new segment of 2.00 GiB) is more than the 17.00 MiB free in large_pool, 746.00 MiB on the device, 0 bytes in private pools and 0 bytes pending together; 0 bytes held by other allocators" "npu: why it ran out"

# A write past the end grows the tensor to 800 MiB + 1 B (802 MiB with the
# pad, rounded to 2 MiB): the same path, a newer report.
expect_fail "dd if=/dev/zero of='$T/w' bs=1 count=1 seek=800M status=none" "Cannot allocate memory"
case "$(cat "$OOM")" in
"NPU out of memory. Tried to allocate 802.00 MiB (NPU 0; "*) ;;
*) fail "oom/device0 does not show the write's report: $(cat "$OOM")" ;;
esac
grep -qF "tensors/device0/w: NPU out of memory. Tried to allocate 802.00 MiB" "$MNT/log" \
	|| fail "the log lacks the write's report"
stop_fs
expect_eq "$STATUS" 0 "exit status after SIGTERM (npu)"

# 900 MiB cached, then cut into three 300 MiB tensors; the first and the
# third freed leave 600 MiB free in that one segment, 124 MiB on the device
# (122 with npu's pad): 400 MiB fits in the free bytes, in no one block.
fragment_then_ask() {
	truncate -s 900M "$T/big" && rm "$T/big" && truncate -s 300M "$T/t1" \
		&& truncate -s 300M "$T/t2" && truncate -s 300M "$T/t3" && rm "$T/t1" "$T/t3" \
		|| fail "fragmenting the device"
	expect_fail "truncate -s 400M '$T/f'" "Cannot allocate memory"
	rm "$T/t2"
}

# npu: each 300 MiB + 32 is a 300 MiB + 512 block; the third leaves the 902
# MiB segment's last 2 MiB - 1536, which it merges with when freed:
# 300 MiB + 512 and 302 MiB - 1024 free.
mount_fs
fragment_then_ask
expect_eq "$(cat "$OOM")" "NPU out of memory. Tried to allocate 402.00 MiB (NPU 0; 1024.00 MiB total capacity; 300.00 MiB already allocated; 300.00 MiB current active; 122.00 MiB free; 902.00 MiB reserved in total by PyTorch).If reserved memory is >> allocated memory try setting max_split_size_mb to avoid fragmentation.
request 419430912 bytes (400.00 MiB) from large_pool on stream 0; a new segment 421527552 bytes (402.00 MiB)
largest_free_block 316668928 bytes (302.00 MiB) on stream 0
pool_free 631242240 bytes (602.00 MiB) in 1 segment
headroom 127926272 bytes (122.00 MiB)
private_pools 0 bytes in 0 pools
pending_frees 0 bytes
other_allocators 0 bytes
verdict: fragmentation: 400.00 MiB would fit in the free bytes (602.00 MiB in 1 segment of large_pool, 122.00 MiB on the device) but in no one block (the largest on stream 0 is 302.00 MiB)" "npu: fragmentation in oom/device0"
stop_fs
expect_eq "$STATUS" 0 "exit status after SIGTERM (npu, fragmentation)"

# cuda: no pad, so 256 MiB + 5 MiB allocated in 256 + 20 MiB reserved.
printf '%s\nflavor = cuda\n' "$INI_TEXT" >"$INI"
mount_fs
[ -s "$OOM" ] && fail "oom/device0 is not empty on a new mount"
fill_then_ask 2G
expect_report cuda "CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 1024.00 MiB of which 748.00 MiB is free. Of the allocated memory 261.00 MiB is allocated by PyTorch, and 15.00 MiB is reserved by PyTorch but unallocated. If reserved but unallocated memory is large try setting PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid fragmentation.  See documentation for Memory Management  (https://docs.pytorch.org/docs/stable/notes/cuda.html#optimizing-memory-usage-with-pytorch-cuda-alloc-conf)"
stop_fs
expect_eq "$STATUS" 0 "exit status after SIGTERM (cuda)"

# cuda: 300 MiB blocks exactly, the third the segment's last.
mount_fs
fragment_then_ask
expect_eq "$(cat "$OOM")" "CUDA out of memory. Tried to allocate 400.00 MiB. GPU 0 has a total capacity of 1024.00 MiB of which 124.00 MiB is free. Of the allocated memory 300.00 MiB is allocated by PyTorch, and 600.00 MiB is reserved by PyTorch but unallocated. If reserved but unallocated memory is large try setting PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid fragmentation.  See documentation for Memory Management  (https://docs.pytorch.org/docs/stable/notes/cuda.html#optimizing-memory-usage-with-pytorch-cuda-alloc-conf)
request 419430400 bytes (400.00 MiB) from large_pool on stream 0; a new segment 419430400 bytes (400.00 MiB)
largest_free_block 314572800 bytes (300.00 MiB) on stream 0
pool_free 629145600 bytes (600.00 MiB) in 1 segment
headroom 130023424 bytes (124.00 MiB)
private_pools 0 bytes in 0 pools
pending_frees 0 bytes
other_allocators 0 bytes
verdict: fragmentation: 400.00 MiB would fit in the free bytes (600.00 MiB in 1 segment of large_pool, 124.00 MiB on the device) but in no one block (the largest on stream 0 is 300.00 MiB)" "cuda: fragmentation in oom/device0"
stop_fs
expect_eq "$STATUS" 0 "exit status after SIGTERM (cuda, fragmentation)"
