#!/usr/bin/env bash
# Graphs and MemPools are the built-in allocator's: while a plug-in is
# current, graph capture and MemPool creation and routing are refused with
# EBUSY and a sentence saying why; with caching back they work. While a
# capture or a MemPool routes allocations, a switch to a plug-in is refused.
. "$(dirname "$0")/plugin_lib.sh"
mount_fs

G=$MNT/ctl/graph
M=$MNT/ctl/mempool
last_error() { sed -n 's/^last_error: //p' "$1"; }
why="graphs and memory pools are the built-in caching allocator's, and a plug-in allocator is current (echo caching > ctl/allocator first)"

echo "create g" >"$G" || fail "create a graph"
echo "create m" >"$M" || fail "create a MemPool"
use "$PLUGIN_DIR/passthrough.so passthrough_alloc_silent passthrough_free_silent"
expect_fail "echo 'capture_begin g stream=1' > '$G'" "Device or resource busy"
expect_eq "$(last_error "$G")" "graph capture refused: $why" "capture with a plug-in"
expect_fail "echo 'create n' > '$M'" "Device or resource busy"
expect_eq "$(last_error "$M")" "MemPool() refused: $why" "MemPool with a plug-in"
expect_fail "echo 'begin m stream=1' > '$M'" "Device or resource busy"
expect_eq "$(last_error "$M")" "use_mem_pool refused: $why" "routing with a plug-in"
expect_eq "$(awk '$1 == "g" { print $2 }' "$G")" empty "graph after a refused capture"

use caching
A=$MNT/ctl/allocator
spec="$PLUGIN_DIR/passthrough.so passthrough_alloc_silent passthrough_free_silent"
routing="device0 routes allocations to a private pool (a graph capture or a MemPool in use); switch once it ends"
echo "capture_begin g stream=1" >"$G" || fail "capture with caching: $(last_error "$G")"
expect_fail "echo '$spec' > '$A'" "Device or resource busy"
expect_eq "$(last_error "$A")" "$routing" "switch during a capture"
echo "capture_end g" >"$G" || fail "capture_end: $(last_error "$G")"
echo "begin m stream=2" >"$M" || fail "routing with caching: $(last_error "$M")"
expect_fail "echo '$spec' > '$A'" "Device or resource busy"
expect_eq "$(last_error "$A")" "$routing" "switch while a MemPool routes"
echo "end m" >"$M" || fail "end: $(last_error "$M")"
use "$spec"
use caching
stop_fs
expect_eq "$STATUS" 0 "exit status after SIGTERM"
