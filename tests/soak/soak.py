"""soak.py MNT PID SECONDS - the soak's load on a mounted npumemfs.

16 readers open and read the views whole, a tensor writer writes bytes
and reads them back against its own copy, a control writer empties caches,
resets peaks, sets alloc_conf and runs graphs and memory pools, and one
reader blocks on trace_pipe/device0; the daemon's RSS is sampled meanwhile.
Prints the counts; exit 1 on any mismatch, failed read or daemon death.
"""
import errno
import json
import os
import random
import sys
import threading
import time

from soaklib import Counts, RssSampler, deadline, read_whole, report, write_value

MNT, PID, SECONDS = sys.argv[1], int(sys.argv[2]), float(sys.argv[3])
T = f"{MNT}/tensors/device0"
VIEWS = [
    "stats/device0", "stats/device0.json", "summary/device0", "snapshot/device0.json",
    "snapshot/device0.svg", "snapshot/device0.history.svg", "snapshot/device0.pickle",
    "metrics/npumemfs.prom", "pools/device0", "pools/device0.json", "host/stats",
    "devices/device0/memory_allocated", "devices/device0/mem_info", "ctl/graph",
    "ctl/mempool", "ctl/alloc_conf", "ctl/allocator", "log", "config", "README",
]
counts = Counts()
stop = threading.Event()


def reader(k):
    rng = random.Random(k)
    while not stop.is_set():
        name = rng.choice(VIEWS + ["trace/device0", "trace_pipe/device0"])
        nonblock = name.startswith("trace_pipe/")
        got = read_whole(f"{MNT}/{name}", os.O_NONBLOCK if nonblock else 0)
        if isinstance(got, int):
            if nonblock and got == errno.EAGAIN:
                counts.read(0)
                continue
            counts.read(got)
            counts.fail(f"read of {name}: {errno.errorcode.get(got, got)}")
            continue
        counts.read(0)
        counts.add("bytes read", len(got))
        if name.endswith(".json"):
            try:
                json.loads(got)
            except ValueError as e:
                counts.fail(f"{name} is not JSON: {e}")


class Tensor:
    def __init__(self, path):
        self.path, self.shadow = path, bytearray()


def tensor_writer():
    """Bytes written are the bytes read, through writes, resizes and rm."""
    rng = random.Random(7)
    tensors = {}
    while not stop.is_set():
        name = f"t{rng.randrange(8)}"
        t = tensors.get(name)
        op = rng.random()
        try:
            if t is None:
                t = Tensor(f"{T}/{name}")
                size = rng.randrange(1, 1024) * 4096
                with open(t.path, "wb") as f:
                    data = rng.randbytes(size)
                    f.write(data)
                t.shadow = bytearray(data)
                tensors[name] = t
                counts.write(0)
            elif op < 0.5 and t.shadow:
                off = rng.randrange(len(t.shadow))
                data = rng.randbytes(min(rng.randrange(1, 262144), len(t.shadow) - off))
                fd = os.open(t.path, os.O_WRONLY)
                try:
                    os.pwrite(fd, data, off)
                finally:
                    os.close(fd)
                t.shadow[off:off + len(data)] = data
                counts.write(0)
            elif op < 0.7:
                size = rng.randrange(1, 1024) * 4096
                os.truncate(t.path, size)
                del t.shadow[size:]  # what grows was never written
                counts.write(0)
            elif op < 0.8:
                os.unlink(t.path)
                del tensors[name]
                counts.write(0)
                continue
        except OSError as e:
            counts.write(e.errno)
            counts.fail(f"tensor {name}: {os.strerror(e.errno)}")
            continue
        with open(t.path, "rb") as f:
            got = f.read(len(t.shadow))
        counts.add("bytes checked", len(t.shadow))
        if got != t.shadow:
            counts.fail(f"tensor {name}: {len(got)} bytes read differ from the "
                        f"{len(t.shadow)} written")
    for t in tensors.values():
        os.unlink(t.path)


def ctl(name, value):
    err = write_value(f"{MNT}/ctl/{name}", value.encode() + b"\n")
    counts.write(err, f"ctl/{name}")
    return err


def graph_round(n):
    g = f"g{n}"
    ctl("graph", f"create {g}")
    if ctl("graph", f"capture_begin {g} stream=1 mode=thread_local") == 0:
        t = f"{T}/stream1/{g}"
        with open(t, "wb") as f:
            f.write(b"G" * 65536)
        ctl("graph", f"capture_end {g}")
        ctl("graph", f"replay {g}")
        os.unlink(t)
    ctl("graph", f"destroy {g}")


def mempool_round(n):
    m = f"m{n}"
    ctl("mempool", f"create {m}")
    if ctl("mempool", f"begin {m} stream=2") == 0:
        t = f"{T}/stream2/{m}"
        open(t, "wb").close()
        os.truncate(t, 65536)
        ctl("mempool", f"end {m}")
        os.unlink(t)
    ctl("mempool", f"release {m}")


def control_writer():
    rng = random.Random(11)
    confs = ["garbage_collection_threshold:0.6", "max_split_size_mb:256",
             "garbage_collection_threshold:0.8,max_split_size_mb:512",
             "expandable_segments:True", "expandable_segments:False", "roundup_power2_divisions:4"]
    n = 0
    while not stop.is_set():
        n += 1
        pick = rng.randrange(7)
        if pick == 0:
            ctl("empty_cache", rng.choice(["1", "device0"]))
        elif pick == 1:
            ctl("reset_peak_stats", rng.choice(["1", "device0"]))
        elif pick == 2:
            ctl("reset_accumulated_stats", "1")
        elif pick == 3:
            ctl("alloc_conf", rng.choice(confs))
        elif pick == 4:
            graph_round(n)
        elif pick == 5:
            mempool_round(n)
        else:
            ctl("record_memory_history", "all 20000")
        time.sleep(0.002)


def trace_reader():
    """A blocking reader of trace_pipe/device0: every line one JSON object."""
    fd = os.open(f"{MNT}/trace_pipe/device0", os.O_RDONLY)
    tail = b""
    try:
        while not stop.is_set():
            chunk = os.read(fd, 1 << 16)
            if not chunk:  # a pipe gives no end of file; this would be a bug
                counts.fail("trace_pipe/device0 gave end of file to a blocking read")
                time.sleep(0.1)
                continue
            lines = (tail + chunk).split(b"\n")
            tail = lines.pop()
            for line in lines:
                counts.add("trace lines")
                try:
                    json.loads(line)["action"]
                except (ValueError, KeyError) as e:
                    counts.fail(f"trace line {line[:80]!r}: {e}")
    finally:
        os.close(fd)


def main():
    rss = RssSampler(PID)
    rss.start()
    ctl("record_memory_history", "all 20000")
    threads = [threading.Thread(target=reader, args=(k,)) for k in range(16)]
    threads += [threading.Thread(target=f) for f in (tensor_writer, control_writer)]
    tracer = threading.Thread(target=trace_reader, daemon=True)
    tracer.start()
    for th in threads:
        th.start()
    done = deadline(SECONDS)
    while not done() and not rss.died:
        time.sleep(0.5)
    stop.set()
    for th in threads:
        th.join()
    # An event wakes the blocking reader to see the stop.
    with open(f"{T}/wake", "wb") as f:
        f.write(b"x")
    os.unlink(f"{T}/wake")
    tracer.join(10)
    if tracer.is_alive():
        counts.fail("the blocking trace reader did not wake for new events")
    allocated = read_whole(f"{MNT}/devices/device0/memory_allocated")
    if allocated != b"0\n":
        counts.fail(f"memory_allocated with no tensors left: {allocated!r}")
    rss.stop.set()
    rss.join()
    report("soak", SECONDS, counts, rss, MNT)
    if rss.died:
        print("  DAEMON DIED")
    return 1 if rss.died or counts.totals["mismatches"] else 0


sys.exit(main())
