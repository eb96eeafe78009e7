#!/usr/bin/env python3
"""segment_lines.py < SNAPSHOT_JSON - npumem-replay's `--format snapshot`
as the "segment ..." lines upstream_replay prints from snapshot(): one a
segment, with its private pool (FIRST_SECOND, 0_0 for none), stream id,
kind, the segment's sizes and its blocks' sizes and states."""

import json
import sys


def line(s):
    pool = "_".join(str(x) for x in s["segment_pool_id"])
    kind = s["segment_type"] + (" expandable" if s["is_expandable"] else "")
    blocks = ",".join(f"{b['size']}:{b['state']}" for b in s["blocks"])
    return (f"segment pool={pool} stream={s['stream']} {kind} total={s['total_size']}"
            f" allocated={s['allocated_size']} active={s['active_size']}"
            f" requested={s['requested_size']} blocks={blocks}")


def main():
    for s in json.load(sys.stdin):
        print(line(s))


if __name__ == "__main__":
    main()
