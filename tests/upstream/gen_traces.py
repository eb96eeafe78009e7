#!/usr/bin/env python3
"""gen_traces.py OUTDIR COUNT [SEED] - random multi-stream traces for the
differential test, and OUTDIR/cases: one line per trace, "NAME CAPACITY
ALLOC_CONF" (ALLOC_CONF "-" for none).

Each trace mixes allocations of every size class on streams 0 to 4,
runs of one size allocated and freed in turn,
record_stream (to its own stream too), frees, syncs of one stream or all,
complete lines, empty_cache, stat resets and memory fractions below 1.0,
on a device small enough that allocations fail and retry. Fraction 1.0 is
left out: PyTorch 2.6 turns the limit on at 1.0, the cuda flavor follows
newer PyTorch, which turns it off (README)."""

import os
import random
import sys

CONFS = ["-", "expandable_segments:True", "max_split_size_mb:200",
         "roundup_power2_divisions:4",
         "max_split_size_mb:100,max_non_split_rounding_mb:64",
         "expandable_segments:True,max_split_size_mb:100",
         "garbage_collection_threshold:0.6"]
MiB = 1 << 20


def size(rng):
    kind = rng.random()
    if kind < 0.35:
        return rng.randint(0, MiB)               # small pool
    if kind < 0.75:
        return rng.randint(MiB + 1, 10 * MiB)    # large, shared 20 MiB segments
    if kind < 0.95:
        return rng.randint(10 * MiB, 96 * MiB)   # large, own segment
    return rng.randint(96 * MiB, 300 * MiB)      # above max_split_size


def trace(rng, steps):
    live, freed_with_uses, uses, lines, n = [], [], {}, [], 0
    for _ in range(steps):
        r = rng.random()
        if r < 0.04:
            # About one size allocated and freed over and over, as a loop's
            # temporaries are: the free merges back what the malloc split.
            # The requests differ a little, mostly within one rounded size.
            sz, stream = size(rng), rng.randint(0, 4)
            for _ in range(rng.randint(2, 6)):
                req = sz - rng.randint(0, min(sz, 300))
                lines.append(f"alloc t{n} {req} stream={stream}")
                lines.append(f"free t{n}")
                n += 1
        elif r < 0.40 or not live:
            lines.append(f"alloc t{n} {size(rng)} stream={rng.randint(0, 4)}")
            live.append(n)
            n += 1
        elif r < 0.55:
            t = rng.choice(live)
            uses[t] = True
            lines.append(f"record_stream t{t} {rng.randint(0, 4)}")
        elif r < 0.85:
            t = live.pop(rng.randrange(len(live)))
            lines.append(f"free t{t}")
            if uses.pop(t, False):
                freed_with_uses.append(t)
        elif r < 0.90 and freed_with_uses:
            t = freed_with_uses.pop(rng.randrange(len(freed_with_uses)))
            lines.append(f"complete t{t}")
        elif r < 0.96:
            lines.append(rng.choice(["sync", "sync 0", "sync 1", "sync 2",
                                     "sync 3", "sync 4"]))
        else:
            lines.append(rng.choice(["empty_cache", "empty_cache", "reset_peak",
                                     "reset_accumulated",
                                     f"fraction {rng.choice([0.5, 0.7, 0.9, 0.95])}"]))
    return lines


def main(argv):
    out, count = argv[1], int(argv[2])
    rng = random.Random(int(argv[3]) if len(argv) > 3 else 12)
    os.makedirs(out, exist_ok=True)
    cases = []
    for i in range(count):
        name = f"t{i:03d}.trace"
        capacity = rng.choice([1, 2, 3, 4]) << 30
        conf = CONFS[i % len(CONFS)]
        with open(os.path.join(out, name), "w") as f:
            f.write("\n".join(trace(rng, rng.randint(300, 900))) + "\n")
        cases.append(f"{name} {capacity} {conf}")
    with open(os.path.join(out, "cases"), "w") as f:
        f.write("\n".join(cases) + "\n")


if __name__ == "__main__":
    main(sys.argv)
