#!/usr/bin/env bash
# A run recorded on the mount and dumped as snapshot/device0.pickle, given
# straight to npumem-whatif, gives the rows of the trace snapshot2trace
# makes of it.
. "$(dirname "$0")/lib.sh"
command -v python3 >/dev/null || skip "python3 is not installed"
command -v jq >/dev/null || skip "jq is not installed"
WHATIF=${WHATIF:?WHATIF must name npumem-whatif}
S2T=${S2T:?S2T must name contrib/snapshot2trace/snapshot2trace.py}

# Tensors of mixed sizes on two streams, with record_stream and syncs, so
# the pickle has deferred frees the conversion turns into complete lines.
python3 - "$WORK/run.trace" <<'PY'
import random, sys
rng = random.Random(30)
live, lines, n = [], [], 0
for _ in range(400):
    r = rng.random()
    if r < 0.5 or not live:
        size = rng.choice([rng.randint(1, 1 << 20), rng.randint(1 << 20, 24 << 20)])
        lines.append(f"alloc t{n} {size} stream={rng.randint(0, 1)}")
        live.append(n)
        n += 1
    elif r < 0.6:
        lines.append(f"record_stream t{rng.choice(live)} {rng.randint(0, 1)}")
    elif r < 0.93:
        lines.append(f"free t{live.pop(rng.randrange(len(live)))}")
    else:
        lines.append(rng.choice(["sync", "sync 1"]))
open(sys.argv[1], "w").write("\n".join(lines) + "\n")
PY

mount_fs
echo all >"$MNT/ctl/record_memory_history"
echo "$WORK/run.trace" >"$MNT/workload/replay" || fail "starting the replay"
wait_state done
cp "$MNT/snapshot/device0.pickle" "$WORK/run.pickle"
stop_fs

python3 "$S2T" "$WORK/run.pickle" -o "$WORK/converted.trace" 2>/dev/null || fail "snapshot2trace"
for input in run.pickle converted.trace; do
	NPUMEM_SNAPSHOT2TRACE=$S2T "$WHATIF" --device-capacity 4GiB --min-capacity --format json \
		"$WORK/$input" >"$WORK/$input.json" 2>"$WORK/err" || fail "$input: $(cat "$WORK/err")"
	jq -c 'map(del(.seconds))' "$WORK/$input.json" >"$WORK/$input.rows"
done
[ "$(jq length "$WORK/run.pickle.json")" = 8 ] || fail "not the 8 rows of the default set"
cmp -s "$WORK/run.pickle.rows" "$WORK/converted.trace.rows" ||
	fail "the pickle's rows differ from its converted trace's: $(diff "$WORK/run.pickle.rows" "$WORK/converted.trace.rows")"
echo "ok"
