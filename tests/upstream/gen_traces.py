#!/usr/bin/env python3
"""gen_traces.py OUTDIR DEVICE POOLS HOST [SEED [NPU_DEVICE NPU_POOLS]] -
random traces for the differential test, and OUTDIR/cases: one line per
trace, "NAME CAPACITY ALLOC_CONF" (ALLOC_CONF "-" for none). DEVICE traces
are named dNNNN, POOLS traces pNNNN, HOST traces hNNNN; for the npu
flavor, NPU_DEVICE traces nNNNN and NPU_POOLS traces qNNNN.

A device trace mixes allocations of every size class on streams 0 to 4,
runs of one size allocated and freed in turn,
record_stream (to its own stream too), frees, syncs of one stream or all,
complete lines, empty_cache, stat resets and memory fractions below 1.0,
on a device small enough that allocations fail and retry. Fraction 1.0 is
left out: PyTorch 2.6 turns the limit on at 1.0, the cuda flavor follows
newer PyTorch, which turns it off (README).

A pools trace adds private pools to that mix: captures on streams 1 to 4
into a pool of their own, a shared graph_pool_handle (pool=P), another
graph's pool (pool=graph:G) or a MemPool's (pool=M), graph resets and
recaptures, MemPools routing one stream, released when nothing else
uses them, and empty_cache after and, now and then, during a capture
(upstream refuses it, and so must the replay: the trace ends there).
What 2.6.0 cannot do is left out: MemPool's use_on_oom and no_split
(absent in 2.6.0), destroying a MemPool a graph still shares (2.6.0
asserts use_count 1), sharing a pool whose use count reached 0,
record_stream during a capture (2.6.0 keeps those uses past their
block); and two scopes routing one stream at once, where 2.6.0 and the
cuda flavor part by design (README).

A host trace pins, copies on streams, unpins, syncs and empties the
pinned host allocator's cache (host_trace).
"""

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


class Device:
    """Allocations, frees, stream uses, syncs and cache lines."""

    def __init__(self, rng):
        self.rng = rng
        self.live, self.freed_with_uses, self.uses = [], [], {}
        self.lines, self.n = [], 0
        self.capturing = set()      # capturing streams: no sync of them, no complete
        self.quiet = lambda: False  # no stream use may begin or end, no OOM (npu pools)
        self.route = lambda stream: None  # the pool a stream allocates into
        self.pool_of = {}           # ID -> the pool it was allocated in, or None

    def loop(self):
        # About one size allocated and freed over and over, as a loop's
        # temporaries are: the free merges back what the malloc split.
        # The requests differ a little, mostly within one rounded size.
        rng = self.rng
        sz, stream = size(rng), rng.randint(0, 4)
        for _ in range(rng.randint(2, 6)):
            req = sz - rng.randint(0, min(sz, 300))
            self.lines.append(f"alloc t{self.n} {req} stream={stream}")
            self.lines.append(f"free t{self.n}")
            self.n += 1

    def sync(self):
        choices = [s for s in range(5) if s not in self.capturing]
        if self.capturing:
            self.lines.append(f"sync {self.rng.choice(choices)}")
        else:
            self.lines.append(self.rng.choice(["sync"] + [f"sync {s}" for s in choices]))

    def step(self, cache_ok=True):
        rng, lines = self.rng, self.lines
        r = rng.random()
        if r < 0.04:
            self.loop()
        elif r < 0.40 or not self.live:
            stream = rng.randint(0, 4)
            sz = rng.randint(0, 10 * MiB) if self.quiet() else size(rng)
            lines.append(f"alloc t{self.n} {sz} stream={stream}")
            self.pool_of[self.n] = self.route(stream)
            self.live.append(self.n)
            self.n += 1
        elif r < 0.55 and not self.capturing and not self.quiet():
            # 2.6.0 keeps the uses recorded during a capture past their
            # block (README): none are recorded then.
            t = rng.choice(self.live)
            self.uses[t] = True
            lines.append(f"record_stream t{t} {rng.randint(0, 4)}")
        elif r < 0.85 and self.quiet():
            unused = [t for t in self.live if not self.uses.get(t)]
            if unused:
                t = rng.choice(unused)
                self.live.remove(t)
                lines.append(f"free t{t}")
        elif r < 0.85:
            t = self.live.pop(rng.randrange(len(self.live)))
            lines.append(f"free t{t}")
            if self.uses.pop(t, False):
                self.freed_with_uses.append(t)
        elif r < 0.90 and self.freed_with_uses and not self.capturing:
            # Synchronizing an event is refused during a capture.
            t = self.freed_with_uses.pop(rng.randrange(len(self.freed_with_uses)))
            lines.append(f"complete t{t}")
        elif r < 0.96:
            self.sync()
        else:
            extra = ["empty_cache", "empty_cache"] if cache_ok else []
            fraction = [] if self.quiet() else [f"fraction {rng.choice([0.5, 0.7, 0.9, 0.95])}"]
            lines.append(rng.choice(extra + ["reset_peak", "reset_accumulated"] + fraction))


class Pools:
    """Graph captures and MemPools over a Device's lines. Use counts are
    tracked per pool so that a pool is shared only while it lives."""

    def __init__(self, dev, expandable):
        self.dev, self.rng = dev, dev.rng
        self.expandable = expandable
        dev.route = self.route
        self.captures = {}      # stream -> (graph name or None, pool key)
        self.graphs = {}        # name -> pool key of its finished capture, or None
        self.handles = {}       # handle name -> pool key
        self.mempools = {}      # live MemPool name -> pool key
        self.routing = {}       # MemPool name -> stream, inside mempool_begin
        self.use = {}           # pool key -> use count
        self.recording = set()  # pool keys a capture or a MemPool routes to
        self.n = 0

    def fresh(self, prefix):
        self.n += 1
        return f"{prefix}{self.n}"

    def routed(self):
        # One scope a stream: where two route it, 2.6.0 takes the oldest and
        # the cuda flavor, as newer PyTorch, the newest (README).
        return set(self.captures) | set(self.routing.values())

    def route(self, stream):
        if stream in self.captures:
            return self.captures[stream][1]
        for m, s in self.routing.items():
            if s == stream:
                return m
        return None

    def may_drop(self, key):
        """Whether the pool's last use may go. With expandable segments
        2.6.0 deletes a released pool once as many ranges were unmapped as
        blocks were allocated, which can leave its live blocks, and blocks
        waiting for events, with a deleted pool (README): keep to pools
        that hold neither."""
        if not self.expandable or self.use.get(key, 0) > 1:
            return True
        held = self.dev.live + self.dev.freed_with_uses
        return all(self.dev.pool_of.get(t) != key for t in held)

    def busy(self):
        return bool(self.captures or self.routing)

    def refuses_cache(self):
        """Whether empty_cache is refused by both sides now."""
        return True

    def shareable(self, key):
        return self.use.get(key, 1) > 0 and key not in self.recording

    def capture_pool(self):
        """The pool= field and the pool's key, or ("", new key)."""
        rng, r = self.rng, self.rng.random()
        if r < 0.3:
            names = [h for h, k in self.handles.items() if self.shareable(k)]
            name = rng.choice(names) if names and rng.random() < 0.6 else self.fresh("h")
            key = self.handles.setdefault(name, name)
            return f" pool={rng.choice(['', 'handle:'])}{name}", key
        if r < 0.45:
            names = [g for g, k in self.graphs.items() if k and self.shareable(k)]
            if names:
                g = rng.choice(names)
                return f" pool=graph:{g}", self.graphs[g]
        if r < 0.6:
            names = [m for m, k in self.mempools.items() if self.shareable(k)]
            if names:
                m = rng.choice(names)
                return f" pool={m}", self.mempools[m]
        return "", self.fresh("anon")

    def capture_begin(self):
        free = [s for s in range(1, 5) if s not in self.routed()]
        if not free:
            return
        s = self.rng.choice(free)
        pool, key = self.capture_pool()
        held = {g for g, _ in self.captures.values()}
        named = [g for g, k in self.graphs.items() if k is None and g not in held]
        graph = None
        if self.rng.random() < 0.6:
            graph = self.rng.choice(named) if named and self.rng.random() < 0.5 else self.fresh("g")
            self.graphs[graph] = None
        # A MemPool's pool a capture shares counts against its destructor.
        self.use[key] = self.use.get(key, 0) + 1
        self.recording.add(key)
        self.captures[s] = (graph, key)
        self.dev.capturing.add(s)
        self.dev.lines.append(f"capture_begin {s}{pool}" + (f" graph={graph}" if graph else ""))

    def capture_end(self):
        s = self.rng.choice(list(self.captures))
        graph, key = self.captures.pop(s)
        self.recording.discard(key)
        self.dev.capturing.discard(s)
        if graph:
            self.graphs[graph] = key
        self.dev.lines.append(f"capture_end {s}")

    def graph_reset(self):
        done = [g for g, k in self.graphs.items() if k and self.may_drop(k)]
        if done:
            self.graph_reset_named(self.rng.choice(done))

    def graph_reset_named(self, g):
        self.use[self.graphs[g]] -= 1
        self.graphs[g] = None
        self.dev.lines.append(f"graph_reset {g}")

    def mempool_create(self):
        m = self.fresh("m")
        self.mempools[m] = m
        self.use[m] = 1
        self.dev.lines.append(f"mempool_create {m}")

    def mempool_begin(self):
        idle = [m for m, k in self.mempools.items() if m not in self.routing and
                k not in self.recording]
        streams = [s for s in range(5) if s not in self.routed()]
        if idle and streams:
            m, s = self.rng.choice(idle), self.rng.choice(streams)
            self.routing[m] = s
            self.recording.add(m)
            self.use[m] += 1
            self.dev.lines.append(f"mempool_begin {m} stream={s}")

    def mempool_end(self, m):
        del self.routing[m]
        self.recording.discard(m)
        self.use[m] -= 1
        self.dev.lines.append(f"mempool_end {m}")

    def mempool_release(self):
        # 2.6.0's destructor asserts use_count 1 and synchronizes the pool's
        # events, which asserts that no capture is under way.
        ok = [m for m, k in self.mempools.items() if self.use[k] == 1 and self.may_drop(k)]
        if ok and not self.busy():
            self.mempool_release_named(self.rng.choice(ok))

    def mempool_release_named(self, m):
        del self.mempools[m]
        self.use[m] = 0
        self.dev.lines.append(f"mempool_release {m}")

    def step(self):
        r = self.rng.random()
        if r < 0.25:
            self.capture_begin()
        elif r < 0.45 and self.captures:
            self.capture_end()
        elif r < 0.55:
            self.graph_reset()
        elif r < 0.65:
            self.mempool_create()
        elif r < 0.77:
            self.mempool_begin()
        elif r < 0.89 and self.routing:
            self.mempool_end(self.rng.choice(list(self.routing)))
        elif r < 0.97:
            self.mempool_release()
        elif not self.busy() or (self.refuses_cache() and self.rng.random() < 0.1):
            # During a capture both refuse it, which ends the trace: rarely.
            self.dev.lines.append("empty_cache")

    def wind_down(self):
        """Every capture ended, MemPool left, graph reset, then empty_cache:
        what the pools give back once nothing uses them."""
        while self.captures:
            self.capture_end()
        for m in list(self.routing):
            self.mempool_end(m)
        for g in [g for g, k in self.graphs.items() if k]:
            if self.may_drop(self.graphs[g]):
                self.graph_reset_named(g)
        for m in [m for m, k in self.mempools.items() if self.use[k] == 1]:
            if self.may_drop(m):
                self.mempool_release_named(m)
        self.dev.lines.append("empty_cache")


def pin_size(rng):
    # Few power-of-two lists, so that blocks come back and are taken again.
    top = rng.choice([12, 16, 20, 20, 22, 24, 26, 28])
    return rng.randint((1 << (top - 1)) + 1, 1 << top)


def host_trace(rng, steps, conf):
    """Pins of a few sizes, copies on streams 1 to 4 (work until a sync),
    unpins with and without copies pending, syncs and host_empty_cache."""
    live, lines, n = [], [], 0
    for _ in range(steps):
        r = rng.random()
        if r < 0.35 or not live:
            lines.append(f"pin p{n} {pin_size(rng)} stream={rng.randint(0, 4)}")
            live.append(n)
            n += 1
        elif r < 0.55:
            lines.append(f"copy p{rng.choice(live)} {rng.randint(1, 4)}")
        elif r < 0.85:
            lines.append(f"unpin p{live.pop(rng.randrange(len(live)))}")
        elif r < 0.96:
            lines.append(rng.choice(["sync"] + [f"sync {s}" for s in range(5)]))
        else:
            lines.append("host_empty_cache")
    return lines


def device_trace(rng, steps, conf):
    dev = Device(rng)
    for _ in range(steps):
        dev.step()
    return dev.lines


def pools_trace(rng, steps, conf, kind=None):
    dev = Device(rng)
    pools = kind(dev, conf) if kind else Pools(dev, "expandable" in conf)
    for _ in range(steps):
        if rng.random() < 0.12:
            pools.step()
            if pools.busy() and dev.lines[-1] == "empty_cache":
                return dev.lines        # refused by both; nothing runs after it
        else:
            dev.step(cache_ok=not pools.busy())
    if rng.random() < 0.5:
        pools.wind_down()
    return dev.lines


# The npu flavor's parts: torch_npu 2.6.0's options. It refuses
# expandable_segments with max_split_size_mb or garbage collection.
NPU_CONFS = ["-", "expandable_segments:True", "max_split_size_mb:200",
             "roundup_power2_divisions:4", "garbage_collection_threshold:0.6",
             "expandable_segments:True,segment_size_mb:40",
             "max_split_size_mb:100,garbage_collection_threshold:0.8",
             "expandable_segments:True,base_addr_aligned_kb:4",
             "multi_stream_lazy_reclaim:True",
             "garbage_collection_threshold:0.9,roundup_power2_divisions:2,"
             "multi_stream_lazy_reclaim:True",
             "expandable_segments:True,multi_stream_lazy_reclaim:True",
             "roundup_power2_divisions:[256:1,512:2,1024:4,>:8]", "page_size:1g"]
# page_size:1g puts large requests on 1 GiB segments: a pools trace's
# device of a few GiB runs out during a scope, which NpuPools keeps away.
# Garbage collection synchronizes the device, which torch_npu does with
# npuSynchronizeDevice(true): while a stream captures that throws, and the
# npu flavor goes on (npumemfs-flavors(7)).
NPU_POOL_CONFS = [c for c in NPU_CONFS if not c.startswith("page_size") and "garbage" not in c]


class NpuPools(Pools):
    """Pools as torch_npu 2.6.0 can take them: its MemPool has no
    destructor (mempool_release), no use_on_oom and no no_split.

    2.6.0 takes any pool routing allocations for a capture under way
    (captures_underway, NPUCachingAllocator.cpp lines 1163, 1224, 1466):
    no event is queried, a free with stream uses waits for the scope's end
    and empty_cache asserts (line 2915). The npu flavor follows later
    torch_npu (is_capture_context): only a capture on the current stream
    counts, and without a free that retry 2.6.0 makes no release of cached
    blocks on OOM (line 1224). While a scope is open, then, no stream use
    begins or ends, no event waits from before it (a sync and an
    allocation, which processes them, come first), empty_cache comes only
    while a capture runs, where both refuse it, and the allocations are
    small, the memory fraction unchanged and the device large (4 to 8 GiB)
    so that none fails (npumemfs-flavors(7))."""

    def __init__(self, dev, conf):
        super().__init__(dev, "expandable" in conf)
        dev.quiet = self.busy
        self.lazy = "multi_stream_lazy_reclaim" in conf

    def settle(self):
        """Every event processed: an allocation processes them, unless
        multi_stream_lazy_reclaim finds it a block first; empty_cache then."""
        if self.busy():
            return
        if self.lazy:
            self.dev.lines += ["sync", "empty_cache"]
            return
        n = self.dev.n
        self.dev.n += 1
        self.dev.lines += ["sync", f"alloc t{n} 512 stream=0", f"free t{n}"]

    def capture_begin(self):
        self.settle()
        super().capture_begin()

    def mempool_begin(self):
        self.settle()
        super().mempool_begin()

    def refuses_cache(self):
        return bool(self.captures)

    def mempool_release(self):
        pass

    def mempool_release_named(self, m):
        pass


def npu_pools_trace(rng, steps, conf):
    return pools_trace(rng, steps, conf, NpuPools)


def write_traces(rng, out, prefix, count, make, steps, capacities, confs):
    """COUNT traces PREFIXNNNN in OUT, each on a device of one of
    CAPACITIES GiB with the alloc conf its number picks; their cases lines."""
    cases = []
    for i in range(count):
        name = f"{prefix}{i:04d}.trace"
        capacity = rng.choice(capacities) << 30
        conf = confs[i % len(confs)]
        with open(os.path.join(out, name), "w") as f:
            f.write("\n".join(make(rng, rng.randint(*steps), conf)) + "\n")
        cases.append(f"{name} {capacity} {conf}")
    return cases


def npu_cases(rng, out, ndevice, npools):
    """The npu flavor's traces, nNNNN (device) and qNNNN (pools), made
    after the cuda ones so that those stay the same for a seed."""
    return (write_traces(rng, out, "n", ndevice, device_trace, (300, 900), [1, 2, 3, 4], NPU_CONFS)
            + write_traces(rng, out, "q", npools, npu_pools_trace, (200, 600), [4, 6, 8],
                           NPU_POOL_CONFS))


def main(argv):
    out, ndevice, npools, nhost = argv[1], int(argv[2]), int(argv[3]), int(argv[4])
    rng = random.Random(int(argv[5]) if len(argv) > 5 else 12)
    os.makedirs(out, exist_ok=True)
    cases = []
    kinds = [("d", ndevice, device_trace, (300, 900)), ("p", npools, pools_trace, (200, 600)),
             ("h", nhost, host_trace, (100, 400))]
    for prefix, count, make, steps in kinds:
        cases += write_traces(rng, out, prefix, count, make, steps, [1, 2, 3, 4], CONFS)
    if len(argv) > 7:
        cases += npu_cases(rng, out, int(argv[6]), int(argv[7]))
    with open(os.path.join(out, "cases"), "w") as f:
        f.write("\n".join(cases) + "\n")


if __name__ == "__main__":
    main(sys.argv)
