#!/usr/bin/env bash
# A plug-in's contexts are the daemon's devices' wherever it runs: one per
# device, each making its device current, and a handle that is no
# device's context refused (ACL_ERROR_INVALID_PARAM) with the device left.
. "$(dirname "$0")/plugin_runtime_lib.sh"
expect_probe context "get rc=0,0 distinct=1 nonnull=1
set device1 rc=0 device=1
set other rc=100000 device=1
set device0 same=1"
echo PASS
