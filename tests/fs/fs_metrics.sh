#!/usr/bin/env bash
# metrics/npumemfs.prom: Prometheus text a textfile collector can read,
# holding for each device exactly the numbers of stats/deviceN, and for the
# pinned host allocator exactly those of host/stats.
INI_TEXT='[device]
count = 2
capacity = 1GiB
malloc_latency_us = 0
free_latency_us = 0'
. "$(dirname "$0")/lib.sh"
mount_fs
PROM=$MNT/metrics/npumemfs.prom

expect_eq "$(ls "$MNT/metrics")" npumemfs.prom "the metrics folder holds only .prom files"
expect_eq "$(stat -c %a "$PROM")" 444 "mode of metrics/npumemfs.prom"
truncate -s 64M "$MNT/tensors/device0/a" || fail "64M on device0"
truncate -s 3M "$MNT/tensors/device1/b" || fail "3M on device1"
truncate -s 40960 "$MNT/pinned/p" || fail "pin 40960 bytes"
grep -qx 'npumemfs_host_allocated_bytes{stat="current"} 65536' "$PROM" \
	|| fail "the pinned block: $(grep '^npumemfs_host_allocated_bytes' "$PROM")"
grep -qx 'npumemfs_allocated_bytes{device="0",pool="all",stat="current"} 67109376' "$PROM" \
	|| fail "device0's allocated bytes: $(grep allocated_bytes "$PROM" | head -3)"
grep -qx '# TYPE npumemfs_allocated_bytes_allocated_total counter' "$PROM" \
	|| fail "the running total of allocated bytes is not a counter"
grep -qx 'npumemfs_allocated_bytes_allocated_total{device="0",pool="all"} 67109376' "$PROM" \
	|| fail "device0's allocated total: $(grep allocated_bytes_allocated "$PROM" | head -3)"

cat "$PROM" >"$WORK/prom"
cat "$MNT/stats/device0" >"$WORK/flat0"
cat "$MNT/stats/device1" >"$WORK/flat1"
cat "$MNT/host/stats" >"$WORK/host"
python3 - "$WORK" <<'PY' || fail "metrics/npumemfs.prom is not valid or differs from stats"
import decimal, re, sys
work = sys.argv[1]
text = open(f"{work}/prom").read()
if not text.endswith("\n"):
    sys.exit("no trailing newline")
sample = re.compile(r'^([a-zA-Z_][a-zA-Z0-9_]*)(?:\{((?:[a-z]+="[^"\\\n]*",?)+)\})? (-?[0-9]+(?:\.[0-9]+)?)$')
typed, helped, done, seen, current = {}, set(), set(), set(), None
per_device = {"0": {}, "1": {}}
host = {}
for n, line in enumerate(text.splitlines(), 1):
    if line.startswith("# HELP "):
        name = line.split()[2]
        if name in helped:
            sys.exit(f"line {n}: second HELP for {name}")
        helped.add(name)
        continue
    if line.startswith("# TYPE "):
        _, _, name, kind = line.split()
        if name in typed or kind not in ("counter", "gauge"):
            sys.exit(f"line {n}: bad TYPE line: {line}")
        typed[name] = kind
        continue
    m = sample.match(line)
    if not m:
        sys.exit(f"line {n}: not 'name{{labels}} value': {line!r}")
    name, labels, value = m.group(1), dict(re.findall(r'([a-z]+)="([^"]*)"', m.group(2) or "")), m.group(3)
    if name not in typed:
        sys.exit(f"line {n}: {name} has no TYPE before its samples")
    if name != current:
        if name in done:
            sys.exit(f"line {n}: {name} is not one group")
        if current:
            done.add(current)
        current = name
    if (name, m.group(2)) in seen:
        sys.exit(f"line {n}: repeated sample {line}")
    seen.add((name, m.group(2)))
    if typed[name] == "counter" and not name.endswith("_total"):
        sys.exit(f"line {n}: counter {name} without _total")
    key = name[len("npumemfs_"):]
    if "device" not in labels:
        # host_memory_stats(): host_KEY{stat}, host_KEY_FIELD_total,
        # host_*_time_seconds{stat}, _seconds_total (host/stats has
        # microseconds), _count_total, num_host_*_total.
        key = re.sub(r"^host_(?!alloc_time|free_time)", "", key)
        key = re.sub(r"_total$", "", key)
        if key.endswith("_seconds"):
            value = str(int(decimal.Decimal(value) * 1000000))
        key = re.sub(r"_seconds$", ".total", key) if typed[name] == "counter" else re.sub(r"_seconds$", "", key)
        key = re.sub(r"_(allocated|freed|count)$", r".\1", key)
        if "stat" in labels:
            key += "." + labels["stat"]
        host[key] = value
        continue
    if typed[name] == "counter":
        key = key[: -len("_total")]
    total = re.match(r"(.*)_(allocated|freed)$", key) if typed[name] == "counter" else None
    if total:
        key, labels["stat"] = total.group(1), total.group(2)
    elif "stat" in labels and labels["stat"] not in ("current", "peak"):
        sys.exit(f"line {n}: running total {labels['stat']} in gauge {name}")
    key = ".".join([key] + [labels[l] for l in ("pool", "stat") if l in labels])
    per_device[labels["device"]][key] = value
for dev in ("0", "1"):
    flat = dict(l.split(" ") for l in open(f"{work}/flat{dev}").read().splitlines())
    if per_device[dev] != flat:
        diff = sorted(set(per_device[dev].items()) ^ set(flat.items()))[:6]
        sys.exit(f"device{dev}: metrics and stats differ: {diff}")
    if len(flat) != 123:
        sys.exit(f"device{dev}: {len(flat)} stats, not 123")
flat = dict(l.split(" ") for l in open(f"{work}/host").read().splitlines())
if host != flat or len(flat) != 28:
    sys.exit(f"host: metrics and host/stats differ: {sorted(set(host.items()) ^ set(flat.items()))[:6]}")
PY

stop_fs
expect_eq "$STATUS" 0 "exit status after SIGTERM"
