#!/usr/bin/env bash
# Tensors as files: truncate allocates through the caching allocator, bytes
# written reach device memory and come back unchanged, resizes keep what
# fits, rm frees, and an allocation the device cannot hold changes nothing.
INI_TEXT='[device]
count = 2
capacity = 1GiB'
. "$(dirname "$0")/lib.sh"
mount_fs
T=$MNT/tensors/device0

# npu flavor: 64 MiB + 32 B pad rounds up to 512 B -> 67109376 allocated;
# a request of 10 MiB or more gets its own segment rounded to 2 MiB -> 69206016.
truncate -s 64M "$T/w" || fail "truncate -s 64M"
expect_eq "$(stat -c %s "$T/w")" 67108864 "ls -l size"
expect_eq "$(value memory_allocated)" 67109376 "memory_allocated after 64M"
expect_eq "$(value memory_reserved)" 69206016 "memory_reserved after 64M"
expect_eq "$(value memory_allocated 1)" 0 "device1 is untouched"
expect_eq "$(ls "$T")" w "ls of the tensor folder"

# Bytes survive empty_cache (only unused blocks are released).
head -c 3145728 /dev/urandom >"$WORK/r"
dd if="$WORK/r" of="$T/data" bs=1M status=none || fail "dd into a tensor"
expect_eq "$(stat -c %s "$T/data")" 3145728 "size after dd"
echo 1 >"$MNT/ctl/empty_cache" || fail "empty_cache"
cmp "$WORK/r" "$T/data" || fail "bytes changed after empty_cache"

# Shrink keeps the first bytes, growing keeps them too.
truncate -s 1M "$T/data"
cmp -n 1048576 "$WORK/r" "$T/data" || fail "bytes changed by shrinking"
truncate -s 5M "$T/data"
cmp -n 1048576 "$WORK/r" "$T/data" || fail "bytes changed by growing"
expect_eq "$(stat -c %s "$T/data")" 5242880 "size after growing"

# A write past the end grows the tensor.
printf abc | dd of="$T/g" bs=1 seek=10 conv=notrunc status=none
expect_eq "$(stat -c %s "$T/g")" 13 "size after a write at offset 10"
expect_eq "$(tail -c 3 "$T/g")" abc "bytes written at offset 10"

# The device holds 1 GiB: 2 GiB cannot be had, and the tensor keeps its
# block and its bytes.
before=$(value memory_allocated)
expect_fail "truncate -s 2G '$T/data'" "Cannot allocate memory"
expect_eq "$(stat -c %s "$T/data")" 5242880 "size after a refused resize"
cmp -n 1048576 "$WORK/r" "$T/data" || fail "bytes changed by a refused resize"
expect_eq "$(value memory_allocated)" "$before" "memory_allocated after a refused resize"
grep -q 'tensors/device0/data: NPU out of memory' "$MNT/log" || fail "the OOM is not in the log"

# rm frees; with every tensor gone nothing is allocated.
rm "$T/w" "$T/data" "$T/g" || fail "rm"
expect_eq "$(ls "$T")" "" "tensor folder after rm"
expect_eq "$(value memory_allocated)" 0 "memory_allocated after rm"
expect_fail "cat '$T/w'" "No such file or directory"

# Tensors are per device.
truncate -s 1M "$MNT/tensors/device1/x"
expect_eq "$(value memory_allocated 1)" 1049088 "device1 after 1M"
expect_eq "$(value memory_allocated 0)" 0 "device0 after a device1 tensor"
touch "$MNT/tensors/device1/x" || fail "touch an existing tensor"
expect_fail "mkdir '$T/sub'" "Permission denied"

# A name with a control character is refused, and nothing is made.
for name in 'a\nb' 'tab\there' 'bell\a' 'del\x7f'; do
	expect_fail "python3 -c 'open(\"$T/$name\", \"w\")'" "Invalid argument"
done
expect_eq "$(ls "$T")" "" "tensor folder after refused names"
grep -q 'refused a new file whose name has a control character' "$MNT/log" ||
	fail "the refused name is not in the log"

check_stats_consistent 0
check_stats_consistent 1
stop_fs
expect_eq "$STATUS" 0 "exit status after SIGTERM"
