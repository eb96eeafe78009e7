#!/usr/bin/env python3
"""snapshot2trace - turn a PyTorch / torch_npu memory snapshot into an
npumemfs allocation trace, so a recorded workload can be replayed.

    snapshot2trace.py SNAPSHOT [-o OUT] [--device N | --all-devices] [--include-live]

SNAPSHOT is what torch.cuda.memory._dump_snapshot() (or
torch_npu.npu.memory._dump_snapshot()) wrote after
_record_memory_history(): a pickle, or the same dict as JSON.
Only the standard library is used: the machines that replay have no torch.
"""

import argparse
import io
import json
import pickle
import sys

PROG = "snapshot2trace"
RECORD_CALL = ("torch.cuda.memory._record_memory_history() "
               "(torch_npu.npu.memory._record_memory_history() on an NPU)")

# Actions in the order the header lists them; others follow by name.
KNOWN_ACTIONS = ("alloc", "free_requested", "free_completed", "segment_alloc",
                 "segment_free", "segment_map", "segment_unmap", "snapshot",
                 "oom")


class Refusal(Exception):
    """A reason to stop with exit status 2; the text is shown as is."""


class PlainDataUnpickler(pickle.Unpickler):
    # A pickle can name any importable callable and call it while loading
    # (os.system, builtins.eval, ...), so loading one from elsewhere runs
    # whatever its author chose. A memory snapshot holds only dicts, lists,
    # tuples, strings, numbers, booleans and None, none of which need a
    # global, so every global is refused before anything is called.
    def find_class(self, module, name):
        raise Refusal(f"refusing pickle global {module}.{name}: a memory "
                      "snapshot holds only plain data")

    def persistent_load(self, pid):
        raise Refusal("refusing a pickle persistent id: a memory snapshot "
                      "holds only plain data")


def load_snapshot(path):
    """The snapshot dict of a pickle or JSON file; Refusal if it is neither."""
    try:
        with open(path, "rb") as f:
            raw = f.read()
    except OSError as e:
        raise Refusal(f"{path}: {e.strerror}")
    if raw.lstrip()[:1] in (b"{", b"["):
        try:
            return json.loads(raw)
        except (ValueError, UnicodeDecodeError) as e:
            raise Refusal(f"{path}: not a memory snapshot (bad JSON: {e})")
    try:
        return PlainDataUnpickler(io.BytesIO(raw)).load()
    except Refusal as e:
        raise Refusal(f"{path}: {e}")
    except Exception:
        # Unpickling garbage raises almost anything (UnpicklingError,
        # EOFError, ValueError, KeyError, ...): all mean "not a pickle".
        raise Refusal(f"{path}: not a memory snapshot (neither a pickle "
                      "nor JSON)")


def device_traces(snap, path):
    """The per-device event lists, or Refusal saying history was not recorded."""
    traces = snap.get("device_traces") if isinstance(snap, dict) else None
    if not isinstance(traces, list) or not any(traces):
        raise Refusal(f"{path}: no device_traces events: memory history was "
                      f"not recorded; call {RECORD_CALL} before the workload "
                      "and dump the snapshot before turning it off")
    return traces


def choose_devices(traces, args, path):
    if args.all_devices:
        return [d for d, t in enumerate(traces) if t]
    if args.device is not None:
        if args.device >= len(traces) or not traces[args.device]:
            raise Refusal(f"{path}: device {args.device} has no trace events")
        return [args.device]
    used = [d for d, t in enumerate(traces) if t]
    if len(used) > 1:
        raise Refusal(f"{path}: devices {', '.join(map(str, used))} have "
                      "trace events: choose one with --device N or take them "
                      "all with --all-devices")
    return used


def as_int(v):
    """Addresses and streams: ints in a pickle, possibly strings in JSON."""
    return v if isinstance(v, int) else int(v, 0)


class Converter:
    """Trace IDs and stream numbers shared by every device converted."""

    def __init__(self):
        self.streams = {0: 0}   # upstream stream (a pointer) -> small int
        self.generation = {}    # (device, addr) -> allocations seen so far
        self.lines = []
        self.written = {"alloc": 0, "free": 0, "live": 0, "deferred": 0,
                        "complete": 0, "oom": 0}
        self.side_base = None   # first stream number of the side streams
        self.side_free = []     # side streams no pending free holds
        self.side_count = 0

    def stream(self, s):
        s = as_int(s)
        if s not in self.streams:
            self.streams[s] = len(self.streams)
        return self.streams[s]

    def take_side_stream(self):
        """A stream of its own for one pending free: the lowest that no
        other pending free holds, numbered after every recorded stream, so
        completing it completes nothing else."""
        if self.side_free:
            self.side_free.sort()
            return self.side_free.pop(0)
        self.side_count += 1
        return self.side_base + self.side_count - 1

    def new_id(self, device, addr):
        gen = self.generation.get((device, addr), 0) + 1
        self.generation[(device, addr)] = gen
        return f"0x{addr:x}.{gen}"

    def alloc(self, tid, size, stream, device):
        self.lines.append(f"alloc {tid} {int(size)} stream={self.stream(stream)} "
                          f"device={device}")


def deferred_frees(events):
    """Indexes of free_requested events whose free_completed does not follow
    at once: upstream completes a free later only when the block was used on
    another stream (record_stream), which the trace does not name."""
    out = set()
    for i, e in enumerate(events):
        if e.get("action") != "free_requested":
            continue
        nxt = events[i + 1] if i + 1 < len(events) else None
        if (nxt is None or nxt.get("action") != "free_completed" or
                as_int(nxt.get("addr")) != as_int(e.get("addr"))):
            out.add(i)
    return out


def unknown_frees(events):
    """free_requested events of blocks allocated before recording began."""
    seen, out = set(), []
    for e in events:
        action = e.get("action")
        if action == "alloc":
            seen.add(as_int(e["addr"]))
        elif action == "free_requested" and as_int(e["addr"]) not in seen:
            out.append(e)
            seen.add(as_int(e["addr"]))
    return out


def walk_device(conv, events, device, live_ids):
    """Append the trace lines of one device's events; live_ids maps the
    address of each block allocated before recording (when --include-live
    made them) to its ID, and ends holding the blocks still live.

    A free whose free_completed comes later (the block was used on another
    stream, which the snapshot does not name) becomes record_stream to a
    stream of its own, the free, and `complete` where free_completed is, so
    the replay returns the block where the recorded run did."""
    counts = {"events": {}, "unknown_frees": 0}
    deferred = deferred_frees(events)
    pending = {}    # address -> (ID, side stream) of a deferred free
    for i, e in enumerate(events):
        action = e.get("action", "?")
        counts["events"][action] = counts["events"].get(action, 0) + 1
        if action == "alloc":
            addr = as_int(e["addr"])
            tid = conv.new_id(device, addr)
            live_ids[addr] = tid
            conv.alloc(tid, e["size"], e.get("stream", 0), device)
            conv.written["alloc"] += 1
        elif action == "free_requested":
            addr = as_int(e["addr"])
            tid = live_ids.pop(addr, None)
            if tid is None:
                counts["unknown_frees"] += 1
                continue
            if i in deferred:
                side = conv.take_side_stream()
                pending[addr] = (tid, side)
                conv.lines.append(f"record_stream {tid} {side}")
                conv.written["deferred"] += 1
            conv.lines.append(f"free {tid}")
            conv.written["free"] += 1
        elif action == "free_completed" and as_int(e["addr"]) in pending:
            tid, side = pending.pop(as_int(e["addr"]))
            conv.lines.append(f"complete {tid}")
            conv.side_free.append(side)
            conv.written["complete"] += 1
        elif action == "oom":
            conv.lines.append(f"# oom: {e.get('size', 0)} bytes requested, "
                              f"{e.get('device_free', 0)} bytes free on "
                              f"device {device}")
            conv.written["oom"] += 1
        # other free_completed, segment_*, snapshot and the rest are the
        # allocator's own doing: the replay reproduces them.
    return counts


def live_blocks(snap, device):
    """(address, requested size, stream) of every active_allocated block of
    the device in the snapshot's segments, in address order."""
    out = []
    for seg in snap.get("segments") or []:
        if seg.get("device", 0) != device:
            continue
        addr = as_int(seg["address"])
        for b in seg.get("blocks", []):
            if b.get("state") == "active_allocated":
                size = b.get("requested_size") or b["size"]
                out.append((addr, size, seg.get("stream", 0)))
            addr += b["size"]
    return out


def addrs_allocated_in(events):
    return {as_int(e["addr"]) for e in events if e.get("action") == "alloc"}


def prealloc_live(conv, snap, events, device):
    """Allocate, before the trace, the blocks that were live when recording
    began: those freed in the trace without being allocated there, then
    those still allocated at the dump that the trace never allocated.
    Their IDs take generation 0."""
    live_ids = {}
    traced = addrs_allocated_in(events)
    pre = [(as_int(e["addr"]), e["size"], e.get("stream", 0))
           for e in unknown_frees(events)]
    pre += [b for b in live_blocks(snap, device) if b[0] not in traced]
    for addr, size, stream in pre:
        if addr in live_ids:
            continue
        tid = f"0x{addr:x}.0"
        live_ids[addr] = tid
        conv.alloc(tid, size, stream, device)
        conv.written["live"] += 1
    return live_ids


def event_counts_text(events):
    order = [a for a in KNOWN_ACTIONS if a in events]
    order += sorted(a for a in events if a not in KNOWN_ACTIONS)
    total = sum(events.values())
    parts = ", ".join(f"{events[a]} {a}" for a in order)
    return f"{total} events ({parts})" if parts else "0 events"


def number_streams(conv, snap, traces, devices, include_live):
    """Number the recorded streams in the order the walk meets them, so
    the side streams can come after them all."""
    for d in devices:
        if include_live:
            for e in unknown_frees(traces[d]):
                conv.stream(e.get("stream", 0))
            for _, _, stream in live_blocks(snap, d):
                conv.stream(stream)
        for e in traces[d]:
            if e.get("action") == "alloc":
                conv.stream(e.get("stream", 0))
    conv.side_base = len(conv.streams)


def convert(snap, path, devices, include_live):
    conv = Converter()
    traces = snap["device_traces"]
    headers = []
    number_streams(conv, snap, traces, devices, include_live)
    for d in devices:
        body_start = len(conv.lines)
        live_ids = prealloc_live(conv, snap, traces[d], d) if include_live else {}
        counts = walk_device(conv, traces[d], d, live_ids)
        headers.append((d, counts))
        conv.lines.insert(body_start, f"# device {d}")
    return conv, headers


def header_lines(path, conv, headers):
    out = [f"# npumemfs trace converted by {PROG} from {path}"]
    for d, counts in headers:
        out.append(f"# device {d}: {event_counts_text(counts['events'])}")
        out.append(f"# device {d}: skipped {counts['unknown_frees']} frees of "
                   "blocks allocated before recording began")
    w = conv.written
    out.append(f"# written: {w['alloc']} alloc, {w['free']} free, {w['live']} "
               f"live before recording, {w['deferred']} deferred frees, "
               f"{w['complete']} complete, {w['oom']} oom")
    if conv.side_count:
        out.append(f"# streams {conv.side_base} to "
                   f"{conv.side_base + conv.side_count - 1}: one for each "
                   "deferred free pending at a time (record_stream, complete)")
    mapped = [f"{s} -> {n}" for s, n in conv.streams.items() if n]
    if mapped:
        out.append("# streams: " + ", ".join(mapped))
    return out


def summary(path, out_name, conv, headers):
    skipped = sum(c["unknown_frees"] for _, c in headers)
    devs = ",".join(str(d) for d, _ in headers)
    w = conv.written
    return (f"{PROG}: {path} -> {out_name}: device {devs}: {w['alloc']} "
            f"allocs, {w['free']} frees, {w['live']} live before recording, "
            f"{skipped} frees skipped, {w['deferred']} deferred, "
            f"{w['complete']} completed, "
            f"{w['oom']} OOMs, {len(conv.streams) - 1} streams")


def parse_args(argv):
    p = argparse.ArgumentParser(
        prog=PROG,
        description="Turn a PyTorch / torch_npu memory snapshot (pickle or "
                    "JSON) into an npumemfs allocation trace.")
    p.add_argument("snapshot", help="file written by _dump_snapshot()")
    p.add_argument("-o", "--output", default="-",
                   help="trace file to write (default: standard output)")
    g = p.add_mutually_exclusive_group()
    g.add_argument("--device", type=int, help="convert this device's trace")
    g.add_argument("--all-devices", action="store_true",
                   help="convert every device's trace, device after device")
    p.add_argument("--include-live", action="store_true",
                   help="first allocate the blocks that were live before "
                        "recording began")
    return p.parse_args(argv)


def write_trace(name, lines):
    text = "".join(line + "\n" for line in lines)
    if name == "-":
        sys.stdout.write(text)
        return
    try:
        with open(name, "w") as f:
            f.write(text)
    except OSError as e:
        raise Refusal(f"{name}: {e.strerror}")


def main(argv):
    args = parse_args(argv)
    try:
        snap = load_snapshot(args.snapshot)
        traces = device_traces(snap, args.snapshot)
        devices = choose_devices(traces, args, args.snapshot)
        conv, headers = convert(snap, args.snapshot, devices, args.include_live)
        write_trace(args.output,
                    header_lines(args.snapshot, conv, headers) + conv.lines)
    except Refusal as e:
        print(f"{PROG}: {e}", file=sys.stderr)
        return 2
    except (KeyError, TypeError, ValueError, AttributeError) as e:
        print(f"{PROG}: {args.snapshot}: not a memory snapshot (unexpected "
              f"layout: {type(e).__name__}: {e})", file=sys.stderr)
        return 2
    out_name = "stdout" if args.output == "-" else args.output
    print(summary(args.snapshot, out_name, conv, headers), file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
