#!/usr/bin/env bash
# A plug-in exports its own block by key and imports it back wherever it
# runs: the same key each time, the block itself on import, the key
# withdrawn by the close that finds no import left; a short buffer, an
# address inside the block and an unknown key are refused (100000).
. "$(dirname "$0")/plugin_runtime_lib.sh"
expect_probe ipc_key "export rc=0,0 same_key=1 prefix=npusim-ipc-0- short=100000 inside=100000
import rc=0 same_block=1
close rc=0
close again rc=0
import withdrawn rc=100000
close withdrawn rc=100000
unknown key rc=100000"
echo PASS
