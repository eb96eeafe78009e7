#!/usr/bin/env bash
# Debian's prometheus-node-exporter reads metrics/ with its textfile
# collector: no scrape error, the samples and the counter types come through,
# the pinned host allocator's too. promtool, from Debian's prometheus, finds
# nothing to say of the file's names, units and types.
INI_TEXT='[device]
count = 1
capacity = 1GiB'
. "$(dirname "$0")/lib.sh"
EXPORTER=$(command -v prometheus-node-exporter) \
	|| skip "prometheus-node-exporter is not installed (contrib/setup-debian.sh installs it)"
PROMTOOL=$(command -v promtool) \
	|| skip "promtool is not installed (contrib/setup-debian.sh installs Debian's prometheus)"
mount_fs
truncate -s 64M "$MNT/tensors/device0/a" || fail "64M tensor"
rm "$MNT/tensors/device0/a"
truncate -s 40960 "$MNT/pinned/p" || fail "pin 40960 bytes"
# A MemPool, so the per-pool families have samples for promtool to judge.
echo "create m" >"$MNT/ctl/mempool" || fail "create a MemPool"

# promtool prints its lint warnings and exits 3; clean is no output, 0.
lint=$("$PROMTOOL" check metrics <"$MNT/metrics/npumemfs.prom" 2>&1) \
	|| fail "promtool check metrics: $lint"
expect_eq "$lint" "" "promtool's output"

PORT=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
"$EXPORTER" --web.listen-address="127.0.0.1:$PORT" --collector.disable-defaults \
	--collector.textfile --collector.textfile.directory="$MNT/metrics" \
	>"$WORK/exporter.log" 2>&1 &
EXPORTER_PID=$!
stop_exporter() { kill "$EXPORTER_PID" 2>/dev/null; wait "$EXPORTER_PID" 2>/dev/null; }
trap 'stop_exporter; cleanup' EXIT

python3 - "$PORT" "$WORK/scrape" <<'PY' || fail "scraping node_exporter: $(cat "$WORK/exporter.log")"
import sys, time, urllib.request
for _ in range(100):
    try:
        text = urllib.request.urlopen(f"http://127.0.0.1:{sys.argv[1]}/metrics", timeout=5).read().decode()
        break
    except OSError:
        time.sleep(0.1)
else:
    sys.exit("node_exporter did not answer")
open(sys.argv[2], "w").write(text)
PY
grep -qx 'node_textfile_scrape_error 0' "$WORK/scrape" \
	|| fail "scrape error: $(grep node_textfile "$WORK/scrape"; tail -3 "$WORK/exporter.log")"
grep -qx 'npumemfs_allocated_bytes{device="0",pool="all",stat="peak"} 6.7109376e+07' "$WORK/scrape" \
	|| fail "the peak did not come through: $(grep 'npumemfs_allocated_bytes{' "$WORK/scrape" | head -3)"
grep -qx '# TYPE npumemfs_allocated_bytes_freed_total counter' "$WORK/scrape" \
	|| fail "the freed total is not a counter at node_exporter"
grep -qx 'npumemfs_allocated_bytes_freed_total{device="0",pool="all"} 6.7109376e+07' "$WORK/scrape" \
	|| fail "the freed total: $(grep allocated_bytes_freed_total "$WORK/scrape" | head -3)"
grep -qx 'npumemfs_host_allocated_bytes{stat="current"} 65536' "$WORK/scrape" \
	|| fail "the pinned block did not come through: $(grep '^npumemfs_host_allocated' "$WORK/scrape")"
grep -qx '# TYPE npumemfs_num_host_alloc_total counter' "$WORK/scrape" \
	|| fail "num_host_alloc is not a counter at node_exporter"
grep -q '^node_textfile_mtime_seconds{file="npumemfs.prom"' "$WORK/scrape" \
	|| grep -q '^node_textfile_mtime_seconds{file=".*npumemfs.prom"' "$WORK/scrape" \
	|| fail "no mtime for npumemfs.prom"
stop_exporter
stop_fs
expect_eq "$STATUS" 0 "exit status after SIGTERM"
