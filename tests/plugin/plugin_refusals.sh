# plugin_refusals.sh - every failed load keeps the current allocator and
# says why; a misbehaving plug-in fails allocations, never the daemon.
. "$(dirname "$0")/plugin_lib.sh"
mount_fs

use "$PLUGIN_DIR/passthrough.so passthrough_alloc_silent passthrough_free_silent"
truncate -s 1M "$MNT/tensors/device0/keep"

# refuse SPEC ERRNO-TEXT REASON: the write fails, plugin1 stays current,
# and the reason is in last_error and in the log.
refuse() {
	expect_fail "echo '$1' > '$CTL'" "$2"
	expect_eq "$(current)" plugin1 "current allocator after '$1'"
	expect_contains "$(grep last_error "$CTL")" "$3" "last_error after '$1'"
	expect_contains "$(grep -v UserWarning "$MNT/log" | tail -1)" "$3" "log after '$1'"
}

refuse "$PLUGIN_DIR/missing.so a b" "No such file or directory" "No such file"
refuse "lib/passthrough.so a b" "Invalid argument" "must be absolute"
refuse "$PLUGIN_DIR/passthrough.so passthrough_alloc" "Invalid argument" "missing FREE_FN"
refuse "$PLUGIN_DIR/passthrough.so a b capture=c" "Invalid argument" "unknown hook"
refuse "$PLUGIN_DIR/passthrough.so passthrough_alloc nope" "Invalid argument" \
	"has no function 'nope'"
# libc's malloc is reachable through the plug-in's dependencies, not its own.
refuse "$PLUGIN_DIR/passthrough.so valloc free" "Invalid argument" \
	"does not define 'valloc' (ALLOC_FN): the symbol comes from a library it links"
refuse "$PLUGIN_DIR/faulty.so faulty_alloc faulty_free init_checked=faulty_init_refuse" \
	"Invalid argument" "refused the load"
refuse "/usr/lib/x86_64-linux-gnu/libc.so.6 malloc free" "Permission denied" \
	"not in a folder allowed"
refuse "$PLUGIN_DIR/../lib/../../etc/x.so a b" "No such file" "No such file"
# A spec split over two lines in one write is refused, not read as one.
python3 - "$CTL" "$PLUGIN_DIR/passthrough.so" <<'PY' || fail "a two-line spec"
import errno, os, sys
fd = os.open(sys.argv[1], os.O_WRONLY)
try:
    os.write(fd, f"{sys.argv[2]} passthrough_alloc_silent\npassthrough_free_silent\n".encode())
    sys.exit("a two-line spec was accepted")
except OSError as e:
    assert e.errno == errno.EINVAL, e
PY
expect_eq "$(current)" plugin1 "current allocator after a two-line spec"
expect_contains "$(grep last_error "$CTL")" "more than one line" "last_error after a two-line spec"

cp "$PLUGIN_DIR/passthrough.so" "$PRIVATE/open.so"
chmod 0666 "$PRIVATE/open.so"
refuse "$PRIVATE/open.so passthrough_alloc passthrough_free" "Permission denied" \
	"world-writable"
ln -s "$PLUGIN_DIR/passthrough.so" "$PRIVATE/link.so"
refuse "$PRIVATE/link.so passthrough_alloc passthrough_free" "Permission denied" \
	"symbolic link"
echo "not an object" >"$PRIVATE/text.so"
chmod 0644 "$PRIVATE/text.so"
refuse "$PRIVATE/text.so a b" "Exec format error" "not a loadable shared object"
# A FIFO named like a plug-in is refused at once, not waited on.
mkfifo -m 0644 "$PRIVATE/fifo.so"
refuse "$PRIVATE/fifo.so a b" "Operation not supported" "not a regular file"
mkdir -m 0755 "$PRIVATE/dir.so"
refuse "$PRIVATE/dir.so a b" "Is a directory" "is a folder"

# Only the mount's owner may write ctl/allocator.
if command -v setpriv >/dev/null && [ "$(id -u)" -eq 0 ]; then
	expect_fail "setpriv --reuid=65534 --regid=65534 --clear-groups \
		sh -c 'echo caching > $CTL'" "Permission denied"
	expect_eq "$(current)" plugin1 "current after a stranger's write"
fi

cmp <(head -c 1048576 "$MNT/tensors/device0/keep") <(head -c 1048576 "$MNT/tensors/device0/keep") ||
	fail "keep unreadable"

# NULL from the plug-in: ENOMEM for the tensor, counted as an OOM.
use "$PLUGIN_DIR/faulty.so faulty_null3_alloc faulty_free"
truncate -s 4096 "$MNT/tensors/device0/n1"
truncate -s 4096 "$MNT/tensors/device0/n2"
expect_fail "truncate -s 4096 '$MNT/tensors/device0/n3'" "Cannot allocate memory"
expect_eq "$(stat_of num_ooms 0)" 1 "num_ooms after a NULL"
expect_contains "$(grep -v UserWarning "$MNT/log" | tail -1)" "returned NULL" "log after a NULL"

# Overlap and misalignment: refused with a message, memory not lost. Each
# plug-in runs in a host process of its own, so one cannot hand out
# another's block from shared state; that refusal ("inside memory of
# plugin2: not given back") is checked on the switch itself
# (test_allocator_switch). Here a plug-in hands out its own live block
# again.
rm "$MNT/tensors/device0/n1" "$MNT/tensors/device0/n2"
use "$PLUGIN_DIR/faulty.so faulty_overlap_alloc faulty_free"
truncate -s 8192 "$MNT/tensors/device0/o1"
expect_fail "truncate -s 8192 '$MNT/tensors/device0/o2'" "Bad address"
expect_contains "$(grep -v UserWarning "$MNT/log" | tail -1)" "overlapping live block" "log after an overlap"
use "$PLUGIN_DIR/faulty.so faulty_unaligned_alloc faulty_free"
expect_fail "truncate -s 8192 '$MNT/tensors/device0/u1'" "Bad address"
expect_contains "$(grep -v UserWarning "$MNT/log" | tail -1)" "not 512-byte aligned" "log after a bad pointer"

rm -f "$MNT"/tensors/device0/*
expect_eq "$(value memory_allocated 0)" 0 "nothing live (current plug-in)"
use caching
expect_eq "$(grep -c retired "$CTL")" 0 "every plug-in unloaded"
expect_eq "$(cut -d' ' -f1 "$MNT/devices/device0/mem_info")" 1073741824 "all device memory free"

stop_fs
expect_eq "$STATUS" 0 "exit status"
grep -q "no leaks" "$DAEMON_ERR" || fail "leaks reported at shutdown"
echo PASS
