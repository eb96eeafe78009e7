#!/usr/bin/env bash
# Run the unit tests, the replay tools and two daemon sessions under valgrind's
# memcheck: any error, or any definite/indirect leak at exit, fails.
#
#     tests/valgrind/memcheck.sh BUILD_DIR
set -u
build=${1:?usage: memcheck.sh BUILD_DIR}
src=$(cd "$(dirname "$0")/../.." && pwd)
vg=(valgrind -q --leak-check=full --errors-for-leak-kinds=definite,indirect
    --error-exitcode=99)
failed=0 passed=0

# run NAME "VAR=VALUE ..." COMMAND...: COMMAND under memcheck with VARs set.
run() {
	local name=$1 vars=$2; shift 2
	# shellcheck disable=SC2086
	if env $vars "${vg[@]}" "$@" >/tmp/memcheck.$$.out 2>&1; then
		passed=$((passed + 1))
	else
		failed=$((failed + 1))
		echo "FAIL: $name"; tail -40 /tmp/memcheck.$$.out
	fi
}

command -v valgrind >/dev/null || { echo "SKIP: valgrind is not installed"; exit 77; }

# Every C unit test (label unit), run as ctest runs it: same command, same
# environment (the expandable-segments re-runs set one).
while IFS='|' read -r name env cmd; do
	# shellcheck disable=SC2086
	run "$name" "$env" $cmd
done < <(ctest --test-dir "$build" --show-only=json-v1 | python3 -c '
import json, sys
for t in json.load(sys.stdin)["tests"]:
    props = {p["name"]: p["value"] for p in t.get("properties", [])}
    cmd = t.get("command") or []
    if "unit" not in props.get("LABELS", []) or not cmd or cmd[0].endswith("python3"):
        continue
    print(t["name"], " ".join(props.get("ENVIRONMENT", [])), " ".join(cmd), sep="|")
')

run npumem-replay "" "$build/bin/npumem-replay" --format stats "$src/contrib/traces/training.trace"
# Its rows run in forked children, which memcheck follows; a child's error
# is its exit status, which the parent's becomes.
run npumem-whatif "" "$build/bin/npumem-whatif" --min-capacity --device-capacity 8GiB \
	--alloc-conf "" --alloc-conf expandable_segments:True --svg /dev/null \
	"$src/contrib/traces/training.trace"

# One daemon session: mount, allocate, pin and copy, read every view, unmount.
if [ -e /dev/fuse ] && [ "$(id -u)" -eq 0 ]; then
	mnt=$(mktemp -d)
	"${vg[@]}" "$build/bin/npumemfs" -f "$mnt" >/tmp/memcheck.$$.daemon 2>&1 &
	pid=$!
	for _ in $(seq 100); do mountpoint -q "$mnt" && break; sleep 0.1; done
	truncate -s 64M "$mnt/tensors/device0/t"
	truncate -s 40960 "$mnt/pinned/p" "$mnt/tensors/device0/stream1/d"
	echo "pinned/p tensors/device0/stream1/d" >"$mnt/ctl/copy"
	rm "$mnt/pinned/p"
	find "$mnt"/stats "$mnt"/summary "$mnt"/snapshot "$mnt"/host "$mnt"/pools/host \
		"$mnt"/metrics -type f -exec cat {} + >/dev/null
	fusermount3 -u "$mnt"
	if wait "$pid"; then passed=$((passed + 1)); else
		failed=$((failed + 1)); echo "FAIL: npumemfs session"; tail -40 /tmp/memcheck.$$.daemon
	fi
	rmdir "$mnt"
else
	echo "SKIP: npumemfs session (needs root and /dev/fuse)"
fi

# A session with plug-ins in their hosts: the lanes, the ACL calls served,
# a host that crashes (its watcher, the reaper) and one unloaded. Each step
# must do what it says, or the session fails.
if [ -e /dev/fuse ] && [ "$(id -u)" -eq 0 ] && [ -e "$build/lib/passthrough.so" ]; then
	lib=$(cd "$build/lib" && pwd)
	mnt=$(mktemp -d)
	printf '[device]\ncount = 2\ncapacity = 1GiB\n[allocator]\nplugin_dirs = %s\n' "$lib" >"$mnt.ini"
	"${vg[@]}" "$build/bin/npumemfs" --config "$mnt.ini" -f "$mnt" >/tmp/memcheck.$$.daemon 2>&1 &
	pid=$!
	for _ in $(seq 100); do mountpoint -q "$mnt" && break; sleep 0.1; done
	steps=ok
	echo "$lib/passthrough.so passthrough_alloc_silent passthrough_free_silent" \
		>"$mnt/ctl/allocator" || steps="loading passthrough.so"
	truncate -s 1M "$mnt/tensors/device0/a" "$mnt/tensors/device1/b" || steps="allocating"
	cat "$mnt/stats/device0" "$mnt/summary/device1" >/dev/null || steps="reading views"
	rm "$mnt/tensors/device0/a" "$mnt/tensors/device1/b" || steps="freeing"
	echo "$lib/faulty.so faulty_segv_alloc faulty_free" >"$mnt/ctl/allocator" ||
		steps="loading faulty.so"
	truncate -s 4096 "$mnt/tensors/device0/c" 2>/dev/null && steps="a crashing alloc succeeded"
	grep -q "faulted in faulty_segv_alloc" "$mnt/log" || steps="no crash in the log"
	echo caching >"$mnt/ctl/allocator" || steps="swapping back"
	fusermount3 -u "$mnt"
	if wait "$pid" && [ "$steps" = ok ]; then passed=$((passed + 1)); else
		failed=$((failed + 1)); echo "FAIL: npumemfs session with plug-in hosts: $steps"
		tail -40 /tmp/memcheck.$$.daemon
	fi
	rmdir "$mnt"
	rm -f "$mnt.ini"
fi
rm -f /tmp/memcheck.$$.*
echo "memcheck: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
