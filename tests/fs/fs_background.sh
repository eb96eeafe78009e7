#!/usr/bin/env bash
# In the background (no -f) the daemon's stderr is gone, so its messages
# and the report it makes at unmount (tensors freed, invariant check,
# leaks) go to a file: $XDG_STATE_HOME/npumemfs/MOUNT.log by default, MOUNT
# the mount point as systemd-escape --path writes it, or --log FILE. The
# file is named on the terminal at start; one it cannot open refuses the
# mount.
. "$(dirname "$0")/lib.sh"

export XDG_STATE_HOME=$WORK/state
# mktemp's folder name has one '-' and no other character to escape.
NAME=${MNT#/}
NAME=${NAME//-/\\x2d}
NAME=${NAME//\//-}
LOG=$XDG_STATE_HOME/npumemfs/$NAME.log
if command -v systemd-escape >/dev/null; then
	expect_eq "$NAME" "$(systemd-escape --path "$MNT")" "the file's name is systemd's"
fi

# Wait up to 10 s for file $1 to hold the last line of ${2:-1} runs' reports.
wait_report() {
	for _ in $(seq 200); do
		[ "$(grep -cE '^npumemfs: (no leaks|leak: .*)$' "$1" 2>/dev/null)" -ge "${2:-1}" ] &&
			return 0
		sleep 0.05
	done
	fail "no report in $1: $(cat "$1" 2>&1)"
}

"$NPUMEMFS" --config "$INI" "$MNT" 2>"$WORK/terminal" || fail "background mount: $(cat "$WORK/terminal")"
mounted || fail "not mounted after the command returned"
grep -qxF "npumemfs: in the background, messages and the report at unmount go to $LOG" \
	"$WORK/terminal" || fail "the terminal was not told where: $(cat "$WORK/terminal")"
expect_eq "$(stat -c %a "$LOG")" 600 "the log's mode"
grep -qE "^npumemfs: [0-9T:+-]+: pid [0-9]+ serves $MNT in the background$" "$LOG" \
	|| fail "no header line: $(cat "$LOG")"
grep -q '^npumemfs: started: 1 npu device of 4294967296 bytes' "$LOG" \
	|| fail "what was logged before daemonizing is not in the file: $(cat "$LOG")"

truncate -s 1M "$MNT/tensors/device0/t"
# The graph thread starts after the fork, so graph calls work here too.
timeout 10 bash -c "echo 'create g' > '$MNT/ctl/graph'" || fail "ctl/graph in the background"
fusermount3 -u "$MNT"
wait_report "$LOG"
grep -qx 'npumemfs: shutdown: freed 1 tensor (1048576 bytes) on device0' "$LOG" \
	|| fail "no tensor freed in: $(cat "$LOG")"
grep -qx 'npumemfs: graph: create g' "$LOG" || fail "no graph line in: $(cat "$LOG")"
grep -qx 'npumemfs: invariant check: ok' "$LOG" || fail "no invariant check in: $(cat "$LOG")"
grep -qx 'npumemfs: no leaks' "$LOG" || fail "no leak report in: $(cat "$LOG")"

# A second run appends, and a SIGTERM ends it with its report too. The
# command returns only once the daemon serves: its header and "mounted on"
# are in the file, and a SIGTERM sent at once is handled (the first run's
# pid, still exiting, must not be taken for it).
"$NPUMEMFS" --config "$INI" "$MNT" 2>"$WORK/terminal" || fail "second mount"
expect_eq "$(grep -c ' in the background$' "$LOG")" 2 "runs in the file when the command returns"
expect_eq "$(grep -c '^npumemfs: mounted on ' "$LOG")" 2 "mounted when the command returns"
pid=$(sed -n 's/^npumemfs: [0-9T:+-]*: pid \([0-9]*\) serves .*/\1/p' "$LOG" | tail -n 1)
kill -TERM "$pid"
wait_report "$LOG" 2
grep -qx 'npumemfs: signal 15: unmounting' "$LOG" || fail "no signal line: $(cat "$LOG")"
expect_eq "$(grep -c '^npumemfs: no leaks$' "$LOG")" 2 "reports in the file"
for _ in $(seq 200); do mounted || break; sleep 0.05; done
mounted && fail "still mounted after SIGTERM"

# --log names the file; one that cannot be opened refuses the mount.
"$NPUMEMFS" --config "$INI" --log "$WORK/my.log" "$MNT" 2>"$WORK/terminal" || fail "--log"
fusermount3 -u "$MNT"
wait_report "$WORK/my.log"
STATUS=0
"$NPUMEMFS" --config "$INI" --log "$WORK/absent/my.log" "$MNT" 2>"$WORK/terminal" || STATUS=$?
expect_eq "$STATUS" 1 "exit status with a log that cannot be opened"
expect_eq "$(cat "$WORK/terminal")" "npumemfs: $WORK/absent/my.log: cannot open: No such file or directory: name another file with --log FILE, or stay in the foreground with -f" "refusal"
mounted && fail "mounted without a log file"
STATUS=0
env -u HOME -u XDG_STATE_HOME "$NPUMEMFS" --config "$INI" "$MNT" 2>"$WORK/terminal" || STATUS=$?
expect_eq "$STATUS" 1 "exit status with no place for the log"
grep -q 'neither $XDG_STATE_HOME nor $HOME is set' "$WORK/terminal" \
	|| fail "refusal without HOME: $(cat "$WORK/terminal")"
mounted && fail "mounted without a log file"
exit 0
