#!/usr/bin/env bash
# An allocation the device cannot hold, after the retries: oom/device0 and
# the log carry upstream's report (size asked, capacity, free, allocated,
# reserved), per flavor; oom/device0 is empty until then and keeps the last.
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
	expect_eq "$(cat "$OOM")" "$2" "$1: oom/device0"
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

# cuda: no pad, so 256 MiB + 5 MiB allocated in 256 + 20 MiB reserved.
printf '%s\nflavor = cuda\n' "$INI_TEXT" >"$INI"
mount_fs
[ -s "$OOM" ] && fail "oom/device0 is not empty on a new mount"
fill_then_ask 2G
expect_report cuda "CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 1024.00 MiB of which 748.00 MiB is free. Of the allocated memory 261.00 MiB is allocated by PyTorch, and 15.00 MiB is reserved by PyTorch but unallocated. If reserved but unallocated memory is large try setting PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid fragmentation.  See documentation for Memory Management  (https://docs.pytorch.org/docs/stable/notes/cuda.html#optimizing-memory-usage-with-pytorch-cuda-alloc-conf)"
stop_fs
expect_eq "$STATUS" 0 "exit status after SIGTERM (cuda)"
