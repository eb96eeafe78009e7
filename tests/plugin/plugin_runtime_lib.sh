# plugin_runtime_lib.sh - plugin_lib.sh, and runtime_probe.c built as a
# plug-in author builds one (pkg-config, linked to libnpusim; with
# PROBE_UNLINKED=1 set first, linked to nothing, taking the runtime from
# the process that loads it): a test asks one of its probes for a tensor
# on a fresh mount, once with the plug-in in the daemon and once in a host
# of its own, and holds both to the same lines.
. "$(dirname "$0")/plugin_lib.sh"
BUILD=${BUILD_DIR:?BUILD_DIR must name the build tree}
command -v cc >/dev/null || skip "no C compiler (cc)"
command -v pkg-config >/dev/null || skip "no pkg-config"

export PROBE_LOG=$WORK/probe.log
cp "$INI" "$WORK/base.ini"
FLAGS=$(PKG_CONFIG_PATH=$BUILD/pkgconfig pkg-config --cflags npusim)
[ "${PROBE_UNLINKED:-0}" = 1 ] || FLAGS="$FLAGS $(PKG_CONFIG_PATH=$BUILD/pkgconfig pkg-config --libs npusim)"
# shellcheck disable=SC2086
cc -shared -fPIC -Wall -Werror "$SRC_DIR/tests/plugin/runtime_probe.c" -lpthread $FLAGS \
	-o "$PRIVATE/probe.so" 2>"$WORK/build.log" || fail "building the probe: $(cat "$WORK/build.log")"
chmod 0755 "$PRIVATE/probe.so"

# probe ISOLATION NAME: NAME_alloc serves one tensor on device 0 of a fresh
# mount; $PROBE_LOG holds what it saw, $PROBE_PID is the daemon's pid and
# $DAEMON_ERR its stderr.
probe() {
	cp "$WORK/base.ini" "$INI"
	echo "plugin_isolation = $1" >>"$INI"
	: >"$PROBE_LOG"
	mount_fs
	PROBE_PID=$PID
	use "$PRIVATE/probe.so $2_alloc probe_free"
	truncate -s 1M "$MNT/tensors/device0/t" || fail "$2_alloc served no tensor"
	rm "$MNT/tensors/device0/t"
	stop_fs
	expect_eq "$STATUS" 0 "the daemon's exit status"
}

# expect_probe NAME WANT: NAME's lines are WANT, in the daemon and in a host.
expect_probe() {
	for isolation in none process; do
		probe "$isolation" "$1"
		expect_eq "$(cat "$PROBE_LOG")" "$2" "$1 with plugin_isolation = $isolation"
	done
}
