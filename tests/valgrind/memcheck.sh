#!/usr/bin/env bash
# Run the unit tests, the replay tool and one daemon session under valgrind's
# memcheck: any error, or any definite/indirect leak at exit, fails.
#
#     tests/valgrind/memcheck.sh BUILD_DIR
set -u
build=${1:?usage: memcheck.sh BUILD_DIR}
src=$(cd "$(dirname "$0")/../.." && pwd)
vg=(valgrind -q --leak-check=full --errors-for-leak-kinds=definite,indirect
    --error-exitcode=99)
failed=0 passed=0

run() {
	local name=$1; shift
	if "${vg[@]}" "$@" >/tmp/memcheck.$$.out 2>&1; then
		passed=$((passed + 1))
	else
		failed=$((failed + 1))
		echo "FAIL: $name"; tail -40 /tmp/memcheck.$$.out
	fi
}

command -v valgrind >/dev/null || { echo "SKIP: valgrind is not installed"; exit 77; }

# Every cmocka program (tests labelled unit), with the arguments ctest gives it.
while read -r name; do
	run "$name" "$build/bin/$name"
done < <(ctest --test-dir "$build" -N -L unit | sed -n 's/^ *Test *#[0-9]*: //p')

run npumem-replay "$build/bin/npumem-replay" --format stats "$src/contrib/traces/training.trace"

# One daemon session: mount, allocate, read every view, unmount.
if [ -e /dev/fuse ] && [ "$(id -u)" -eq 0 ]; then
	mnt=$(mktemp -d)
	"${vg[@]}" "$build/bin/npumemfs" -f "$mnt" >/tmp/memcheck.$$.daemon 2>&1 &
	pid=$!
	for _ in $(seq 100); do mountpoint -q "$mnt" && break; sleep 0.1; done
	truncate -s 64M "$mnt/tensors/device0/t"
	cat "$mnt"/stats/* "$mnt"/summary/* "$mnt"/snapshot/* >/dev/null
	fusermount3 -u "$mnt"
	if wait "$pid"; then passed=$((passed + 1)); else
		failed=$((failed + 1)); echo "FAIL: npumemfs session"; tail -40 /tmp/memcheck.$$.daemon
	fi
	rmdir "$mnt"
else
	echo "SKIP: npumemfs session (needs root and /dev/fuse)"
fi
rm -f /tmp/memcheck.$$.*
echo "memcheck: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
