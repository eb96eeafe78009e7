#!/bin/sh
# whatif_parallel_test.sh WHATIF TRACE - four shards of npumem-whatif run
# by GNU parallel on this machine (--sshlogin :, as a cluster's command
# line names its hosts) merge into the rows of a single run.
set -u

whatif=$1 trace=$2
command -v parallel >/dev/null || { echo "SKIP: GNU parallel is not installed"; exit 77; }
command -v jq >/dev/null || { echo "SKIP: jq is not installed"; exit 77; }
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
cd "$tmp" || exit 1

fail() { echo "FAIL: $*" >&2; exit 1; }

"$whatif" --min-capacity --format json "$trace" >single.json || fail "the single run"
# The README's command line: each job's lines come back on parallel's
# standard output, one job's after another's.
parallel --will-cite --sshlogin : --basefile "$trace" \
	"'$whatif'" --shard {}/4 --min-capacity "'$trace'" ::: 1 2 3 4 >shards.jsonl ||
	fail "a shard failed under parallel"
"$whatif" --merge --format json shards.jsonl >merged.json || fail "the merge"
# Times differ from run to run; every other field must not.
jq -c 'map(del(.seconds))' single.json >a
jq -c 'map(del(.seconds))' merged.json >b
cmp -s a b || fail "the merge differs from the single run: $(diff a b)"
