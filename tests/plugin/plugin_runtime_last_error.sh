#!/usr/bin/env bash
# A plug-in thread's last error is its own last failing call wherever the
# plug-in runs: an absurd aclrtMalloc's ACL_ERROR_RT_MEMORY_ALLOCATION
# (207001) stays through a later success until aclrtGetLastError reads it,
# and a failure on a thread of the plug-in's own is that thread's only.
. "$(dirname "$0")/plugin_runtime_lib.sh"
expect_probe last_error "start 0
malloc rc=207001 peek=207001 after_success=207001 get=207001 then=0
other level 100000
own thread rc=207001 its_peek=207001 this_peek=0"
echo PASS
