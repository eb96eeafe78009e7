#!/usr/bin/env bash
# A plug-in's aclAppLog line is the daemon's wherever the plug-in runs: on
# the daemon's stderr, with the daemon's pid, kept or dropped by the
# daemon's ASCEND_GLOBAL_LOG_LEVEL (unset: errors only).
. "$(dirname "$0")/plugin_runtime_lib.sh"
unset ASCEND_GLOBAL_LOG_LEVEL ASCEND_SLOG_PRINT_TO_STDOUT
for isolation in none process; do
	probe "$isolation" app_log
	expect_eq "$(grep 'probe_func' "$DAEMON_ERR")" \
		"[ERROR] APP($PROBE_PID):probe_func:probe.c:42 kept 7 seven" \
		"the plug-in's log lines with plugin_isolation = $isolation"
done
echo PASS
