#!/usr/bin/env bash
# A plug-in shares its own physical handle by number and imports it back
# wherever it runs: one number, never 0; the import is the same handle,
# one more reference, so it is freed twice and a third free is refused;
# the number names nothing on another device, nor once the pages are gone.
. "$(dirname "$0")/plugin_runtime_lib.sh"
expect_probe shareable "export rc=0,0 nonzero=1 same=1
bad flags rc=100000
import rc=0 same_handle=1
import on device 1 rc=100000
free rc=0
free rc=0
free again rc=100000
import freed rc=100000"
echo PASS
