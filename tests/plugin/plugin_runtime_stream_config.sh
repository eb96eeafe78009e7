#!/usr/bin/env bash
# aclrtCreateStreamWithConfig makes a plug-in the daemon's stream wherever
# it runs: stream id 1 (the first made after the default streams),
# synchronised and destroyed like any stream of its own; a flag the
# runtime does not know is refused (100000). The plug-in is linked to
# nothing, as one may be that takes the runtime from the process loading
# it: the host must define the function for it even to load there.
PROBE_UNLINKED=1
. "$(dirname "$0")/plugin_runtime_lib.sh"
expect_probe stream_config "create rc=0 id=1 unknown_flag=100000
synchronize rc=0
destroy rc=0"
echo PASS
