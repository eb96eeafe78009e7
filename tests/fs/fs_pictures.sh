#!/usr/bin/env bash
# snapshot/deviceN.svg and snapshot/deviceN.history.svg: pictures a
# browser shows, whose shapes add up to the snapshot's bytes.
INI_TEXT='[device]
count = 1
capacity = 4GiB'
. "$(dirname "$0")/lib.sh"
mount_fs
T=$MNT/tensors/device0
# A 20 MiB segment split into 3 MiB allocated and the rest inactive; a
# 2 MiB small segment with 1.5 KiB allocated; a 42 MiB one freed whole.
truncate -s 3M "$T/a"
truncate -s 1000 "$T/b"
truncate -s 40M "$T/c"
rm "$T/c"
sleep 0.3   # a few readings of the sampler

cp "$MNT/snapshot/device0.svg" "$WORK/seg.svg" || fail "copying the SVG"
cat "$MNT/snapshot/device0.json" >"$WORK/seg.json"
python3 - "$WORK" <<'PY' || fail "snapshot/device0.svg"
import json, sys, xml.etree.ElementTree as ET
work = sys.argv[1]
ns = {"s": "http://www.w3.org/2000/svg"}
root = ET.parse(f"{work}/seg.svg").getroot()
assert root.tag == "{http://www.w3.org/2000/svg}svg", root.tag
segments = json.load(open(f"{work}/seg.json"))
groups = root.findall(".//s:g[@class='segment']", ns)
assert len(groups) == len(segments) == 3, (len(groups), len(segments))
# Largest first: the segments that hold the most are drawn at the top.
sizes = [int(g.get("data-bytes")) for g in groups]
if sizes != sorted(sizes, reverse=True):
    sys.exit(f"segments are not drawn largest first: {sizes}")
by_address = {int(g.get("data-address")): g for g in groups}
by_state = {}
for seg in segments:
    g = by_address[seg["address"]]
    blocks = g.findall("s:rect[@class='block']", ns)
    if int(g.get("data-bytes")) != seg["total_size"]:
        sys.exit(f"segment {seg['address']}: {g.get('data-bytes')} bytes drawn, {seg['total_size']} held")
    if sum(int(b.get("data-bytes")) for b in blocks) != seg["total_size"]:
        sys.exit(f"segment {seg['address']}: its blocks do not add up to it")
    allocated = sum(int(b.get("data-bytes")) for b in blocks if b.get("data-state") == "allocated")
    if allocated != seg["allocated_size"]:
        sys.exit(f"segment {seg['address']}: {allocated} allocated drawn, {seg['allocated_size']} held")
    for b in blocks:
        by_state[b.get("data-state")] = by_state.get(b.get("data-state"), 0) + int(b.get("data-bytes"))
# npu flavor: 3 MiB + 32 B and 1000 + 32 B, rounded to 512.
expect = {"allocated": 3146240 + 1536, "inactive split": 20971520 - 3146240 + 2097152 - 1536,
          "free": 44040192}
if by_state != expect:
    sys.exit(f"bytes by state: {by_state}, expected {expect}")
# Drawn to one scale: the 40 MiB segment is twice as wide as the 20 MiB one.
def width(g):
    return sum(float(b.get("width")) for b in g.findall("s:rect[@class='block']", ns))
widths = sorted(width(g) for g in groups)
if abs(widths[2] / widths[1] - 44040192 / 20971520) > 0.01:
    sys.exit(f"segments are not drawn to one scale: {widths}")
labels = [t.text for t in root.iter("{http://www.w3.org/2000/svg}text")]
if "42 MiB" not in labels or "3.00 MiB" not in labels:
    sys.exit(f"blocks are not labelled by size: {labels}")
PY

cat "$MNT/snapshot/device0.history.svg" >"$WORK/history.svg"
python3 - "$WORK" <<'PY' || fail "snapshot/device0.history.svg"
import sys, xml.etree.ElementTree as ET
root = ET.parse(f"{sys.argv[1]}/history.svg").getroot()
lines = {p.get("class"): p.get("points").split() for p in root.iter("{http://www.w3.org/2000/svg}polyline")}
if sorted(lines) != ["active", "allocated", "reserved"]:
    sys.exit(f"series: {sorted(lines)}")
if len(lines["reserved"]) < 3:
    sys.exit(f"too few readings: {len(lines['reserved'])}")
legend = " ".join(t.text for t in root.iter("{http://www.w3.org/2000/svg}text"))
if "allocated 3.00 MiB" not in legend or "reserved 64 MiB" not in legend:
    sys.exit(f"the legend does not give the latest bytes: {legend}")
PY
stop_fs
expect_eq "$STATUS" 0 "exit status after SIGTERM"
