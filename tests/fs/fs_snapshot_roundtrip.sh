#!/usr/bin/env bash
# A run recorded from the mount, converted by snapshot2trace and replayed on
# a fresh mount, ends with the same segments and blocks, and its history has
# the same events at the same positions: every free_completed of a block
# used on another stream (record_stream) comes back where it came first.
# Blocks that came back together (one run of free_completed) may come back
# in another order: the snapshot does not name the streams that ordered them.
. "$(dirname "$0")/lib.sh"
command -v python3 >/dev/null || skip "python3 is not installed"
S2T=${S2T:?S2T must name contrib/snapshot2trace/snapshot2trace.py}

# record_stream traffic on three streams, with syncs between the uses and
# the frees, so many frees complete later and several at one alloc.
python3 - "$WORK/run.trace" <<'PY'
import random, sys
rng = random.Random(12)
live, lines, n = [], [], 0
for _ in range(700):
    r = rng.random()
    if r < 0.45 or not live:
        size = rng.choice([rng.randint(1, 1 << 20), rng.randint(1 << 20, 24 << 20)])
        lines.append(f"alloc t{n} {size} stream={rng.randint(0, 2)}")
        live.append(n)
        n += 1
    elif r < 0.60:
        lines.append(f"record_stream t{rng.choice(live)} {rng.randint(0, 2)}")
    elif r < 0.92:
        lines.append(f"free t{live.pop(rng.randrange(len(live)))}")
    else:
        lines.append(rng.choice(["sync", "sync 0", "sync 1", "sync 2"]))
open(sys.argv[1], "w").write("\n".join(lines) + "\n")
PY

record() { # trace pickle
	echo all >"$MNT/ctl/record_memory_history"
	echo "$1" >"$MNT/workload/replay" || fail "starting the replay of $1"
	wait_state done
	cp "$MNT/snapshot/device0.pickle" "$2"
}

mount_fs
record "$WORK/run.trace" "$WORK/first.pickle"
stop_fs

python3 "$S2T" "$WORK/first.pickle" -o "$WORK/converted.trace" 2>"$WORK/s2t.err" \
	|| fail "snapshot2trace: $(cat "$WORK/s2t.err")"
grep -q '^complete ' "$WORK/converted.trace" || fail "no complete line in the converted trace"

mount_fs
record "$WORK/converted.trace" "$WORK/second.pickle"
stop_fs

python3 - "$S2T" "$WORK/first.pickle" "$WORK/second.pickle" <<'PY' || fail "the replay differs from the recorded run"
import importlib.util, sys
spec = importlib.util.spec_from_file_location("s2t", sys.argv[1])
s2t = importlib.util.module_from_spec(spec)
spec.loader.exec_module(s2t)

def load(path):
    snap = s2t.load_snapshot(path)
    trace = snap["device_traces"][0]
    base = min(e["addr"] for e in trace if e["action"] == "segment_alloc")
    events = [(e["action"], e["addr"] - base if e["action"] != "snapshot" else 0, e["size"])
              for e in trace]
    segments = sorted((s["address"] - base, s["total_size"],
                       [(b["size"], b["requested_size"], b["state"]) for b in s["blocks"]])
                      for s in snap["segments"])
    return events, segments

def runs_sorted(events):
    """Each run of consecutive free_completed entries in address order."""
    out, i = [], 0
    while i < len(events):
        j = i
        while j < len(events) and events[j][0] == "free_completed":
            j += 1
        if j > i:
            out += sorted(events[i:j])
            i = j
        else:
            out.append(events[i])
            i += 1
    return out

first, second = load(sys.argv[2]), load(sys.argv[3])
completed = [i for i, e in enumerate(first[0]) if e[0] == "free_completed"]
pending_returns = sum(1 for i in completed if first[0][i - 1][0] != "free_requested")
print(f"{len(first[0])} events, {len(completed)} free_completed, "
      f"{pending_returns} of them later than their free_requested, "
      f"{len(first[1])} segments")
if pending_returns < 20:
    sys.exit("too few deferred frees to show anything")
if first[1] != second[1]:
    sys.exit(f"segments differ:\n{first[1]}\n{second[1]}")
if [e[0] for e in first[0]] != [e[0] for e in second[0]]:
    sys.exit("the actions differ in order or number")
if runs_sorted(first[0]) != runs_sorted(second[0]):
    i = next(i for i, (a, b) in enumerate(zip(runs_sorted(first[0]),
                                               runs_sorted(second[0]))) if a != b)
    sys.exit(f"history differs at entry {i} of {len(first[0])}: {first[0][i]} vs {second[0][i]}")
PY
