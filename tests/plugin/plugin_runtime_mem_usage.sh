#!/usr/bin/env bash
# aclrtGetMemUsageInfo gives a plug-in the daemon's device figures wherever
# it runs: device 0 holds nothing before the plug-in's 4 MiB
# (aclrtMallocAlign32, no padding: two 2 MiB pages), exactly
# that while it holds it, with the peak kept; a device that does not exist
# is ACL_ERROR_INVALID_DEVICE (100019), before a missing output is
# ACL_ERROR_INVALID_PARAM (100000).
. "$(dirname "$0")/plugin_runtime_lib.sh"
expect_probe mem_usage "before rc=0 n=1 name=npusim cur=0 peak=0
holding rc=0 n=1 name=npusim cur=4194304 peak=4194304
after rc=0 n=1 name=npusim cur=0 peak=4194304
device 9 rc=100019
no room rc=100000
no count rc=100000
device 9 no count rc=100019"
echo PASS
