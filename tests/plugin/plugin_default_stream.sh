#!/usr/bin/env bash
# The default stream is a real stream, as torch_npu's is (made with
# aclrtCreateStreamWithConfig): a plug-in allocating for a tensor of
# tensors/deviceN/ is given a non-NULL handle whose runtime id is 0, the
# stream the mount calls stream 0 (acl/allocators' runtime_stream once an
# ACL allocator is registered on it), the same handle each time and
# another one for stream 1; and `register caching stream=0` is accepted,
# as aclrtAllocatorRegister accepts torch_npu's default stream.
. "$(dirname "$0")/plugin_lib.sh"
export PASSTHROUGH_STREAM_LOG=$WORK/streams.log
: >"$PASSTHROUGH_STREAM_LOG"
mount_fs
ACL=$MNT/ctl/acl_allocator
OP=$MNT/ctl/op
col() { awk -v c="$1" 'NR == 2 { print $c }' "$MNT/acl/allocators"; }
logged() { sed -n "${1}p" "$PASSTHROUGH_STREAM_LOG"; }
handle() { logged "$1" | sed 's/.* stream=\([^ ]*\) .*/\1/'; }

use "$PLUGIN_DIR/passthrough.so passthrough_alloc_streams passthrough_free_silent"
truncate -s 4096 "$MNT/tensors/device0/a"
truncate -s 4096 "$MNT/tensors/device0/b"
truncate -s 4096 "$MNT/tensors/device0/stream1/c"
expect_eq "$(wc -l <"$PASSTHROUGH_STREAM_LOG")" 3 "three allocations"
case "$(handle 1)" in
0x*) ;;
*) fail "the default stream's handle is not a pointer: $(logged 1)" ;;
esac
expect_eq "$(logged 1 | sed 's/ stream=[^ ]*//')" "alloc device=0 id=0" \
	"the default stream, by its runtime id"
expect_eq "$(handle 2)" "$(handle 1)" "one handle for the default stream"
expect_eq "$(logged 3 | sed 's/ stream=[^ ]*//')" "alloc device=0 id=1" "stream 1"
[ "$(handle 3)" != "$(handle 1)" ] || fail "stream 1 has the default stream's handle"
rm "$MNT/tensors/device0/a" "$MNT/tensors/device0/b" "$MNT/tensors/device0/stream1/c"
use caching

echo "register caching stream=0" >"$ACL" ||
	fail "register on the default stream: $(grep last_error "$ACL")"
expect_eq "$(col 1) $(col 2) $(col 3) $(col 6)" "0 0 0 caching" \
	"device, stream, runtime_stream, allocator"
echo "launch stream=0 workspace=4096" >"$OP" || fail "launch: $(grep last_error "$OP")"
expect_eq "$(col 11) $(col 13) $(col 14)" "1 1 4096" "the workspace comes through it"
echo "sync stream=0" >"$OP"
expect_eq "$(col 12) $(col 13)" "1 0" "freed once the work completed"
echo "unregister stream=0" >"$ACL" || fail "unregister: $(grep last_error "$ACL")"

stop_fs
expect_eq "$STATUS" 0 "exit status"
grep -q "no leaks" "$DAEMON_ERR" || fail "leaks reported at shutdown"
echo PASS
