#!/usr/bin/env bash
# Frames: each recorded trace entry and each block says where it came from,
# in upstream's frame format ({"name", "filename", "line"}), so PyTorch's
# memory_viz can name the origin of every block: a replayed trace's file
# and line, a tensor file and the operation on it, a control file written.
# Checked in trace_pipe/device0 (JSON lines), snapshot/device0.json and
# snapshot/device0.pickle (read with python3's pickle).
. "$(dirname "$0")/lib.sh"
command -v python3 >/dev/null || skip "python3 is not installed"
mount_fs

echo all >"$MNT/ctl/record_memory_history"
# 1 MiB (npu: 1049088 bytes) takes a 20 MiB large segment.
truncate -s 1M "$MNT/tensors/device0/t"
printf '%s\n' '# one activation of 4 KiB, freed' 'alloc a 4096' 'free a' >"$WORK/run.trace"
echo "$WORK/run.trace" >"$MNT/workload/replay"
wait_state done
# The replay's 2 MiB small segment is free now: empty_cache gives it back.
echo 1 >"$MNT/ctl/empty_cache"

STATUS=0
timeout 2 cat "$MNT/trace_pipe/device0" >"$WORK/trace.jsonl" || STATUS=$?
expect_eq "$STATUS" 124 "cat of trace_pipe/device0 waits for more"
cp "$MNT/snapshot/device0.json" "$WORK/snapshot.json"
cp "$MNT/snapshot/device0.pickle" "$WORK/snapshot.pickle"

python3 - "$MNT" "$WORK" <<'PY' || fail "frames"
import json, pickle, sys
mnt, work = sys.argv[1], sys.argv[2]

def frame(filename, line, name):
    return [{"name": name, "filename": filename, "line": line}]

TENSOR = frame(f"{mnt}/tensors/device0/t", 0, "truncate")
want = [
    ("segment_alloc", 20971520, TENSOR),
    ("alloc", 1048576, TENSOR),
    ("segment_alloc", 2097152, frame(f"{work}/run.trace", 2, "alloc")),
    ("alloc", 4096, frame(f"{work}/run.trace", 2, "alloc")),
    ("free_requested", 4096, frame(f"{work}/run.trace", 3, "free")),
    ("free_completed", 4096, frame(f"{work}/run.trace", 3, "free")),
    ("segment_free", 2097152, frame(f"{mnt}/ctl/empty_cache", 0, "write")),
]

def entries(events):
    return [(e["action"], e["size"], e["frames"]) for e in events]

lines = [json.loads(l) for l in open(f"{work}/trace.jsonl")]
assert entries(lines) == want, entries(lines)
assert list(lines[0])[-1] == "frames", list(lines[0])

# The snapshot: t's block and its segment carry the truncate's frame, the
# free rest of the segment none; a segment's frames come after its blocks.
segs = json.load(open(f"{work}/snapshot.json"))
assert len(segs) == 1, segs
seg = segs[0]
assert seg["frames"] == TENSOR, seg["frames"]
assert list(seg)[-2:] == ["blocks", "frames"], list(seg)
assert [(b["state"], b["frames"]) for b in seg["blocks"]] == \
    [("active_allocated", TENSOR), ("inactive", [])], seg["blocks"]

data = pickle.load(open(f"{work}/snapshot.pickle", "rb"))
events = data["device_traces"][0]
assert entries(events[:7]) == want, entries(events)
# Reading the snapshot files recorded their snapshot entries, each with
# the file that was read.
reads = {e["frames"][0]["filename"] for e in events[7:] if e["action"] == "snapshot"}
assert f"{mnt}/snapshot/device0.pickle" in reads, events[7:]
assert {e["frames"][0]["name"] for e in events[7:]} == {"read"}, events[7:]
assert data["segments"][0]["blocks"][0]["frames"] == TENSOR
# What memory_viz prints for them (_memory_viz._frame_fmt).
fmt = [f"{f['filename'].split('/')[-1]}:{f['line']}:{f['name']}" for e in events[:7]
       for f in e["frames"]]
assert fmt == ["t:0:truncate"] * 2 + ["run.trace:2:alloc"] * 2 + \
    ["run.trace:3:free"] * 2 + ["empty_cache:0:write"], fmt
PY

# Recording off forgets them: t's block shows no frame afterwards.
echo off >"$MNT/ctl/record_memory_history"
python3 - "$MNT" <<'PY' || fail "frames after recording off"
import json, sys
seg = json.load(open(f"{sys.argv[1]}/snapshot/device0.json"))[0]
assert seg["frames"] == [] and seg["blocks"][0]["frames"] == [], seg
PY
