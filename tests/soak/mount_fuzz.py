"""mount_fuzz.py MNT PID SECONDS WORK [PLUGIN_DIR] - random and mutated
values written to every writable file of a mounted npumemfs.

Values start from each file's documented syntax and are mutated (bytes
flipped, inserted, deleted; numbers made extreme; NULs, newlines, long
values, two writes on one open), with plain garbage among them. Two
writers run at once. At the end every file is read once. Prints the
counts; exit 1 if the daemon died.
"""
import errno
import os
import random
import re
import stat
import sys
import threading
import time

from soaklib import Counts, RssSampler, deadline, read_whole, report, write_value

MNT, PID, SECONDS, WORK = sys.argv[1], int(sys.argv[2]), float(sys.argv[3]), sys.argv[4]
PLUGIN_DIR = sys.argv[5] if len(sys.argv) > 5 else "/nonexistent"
counts = Counts()


def seeds():
    trace = f"{WORK}/fuzz.trace"
    with open(trace, "w") as f:
        f.write("alloc a 1MiB\nalloc b 4096 stream=1\nrecord_stream a 1\nfree a\n"
                "loop_start\nalloc c 2MiB\nfree c\nsync\nempty_cache\n")
    fifo = f"{WORK}/fuzz.fifo"
    if not os.path.exists(fifo):
        os.mkfifo(fifo)
    devs = ["1", "device0", "device1", "device99", "0", "2", "device-1"]
    return {
        "ctl/empty_cache": devs, "ctl/reset_peak_stats": devs,
        "ctl/reset_accumulated_stats": devs, "ctl/empty_virt_addr_cache": devs,
        "ctl/host_empty_cache": ["1"], "ctl/reset_peak_host_memory_stats": ["1"],
        "ctl/reset_accumulated_host_memory_stats": ["1"],
        "ctl/record_memory_history": ["all", "all 100", "state", "off", "all 0",
                                      "all 18446744073709551616"],
        "ctl/alloc_conf": [
            "max_split_size_mb:20", "garbage_collection_threshold:0.6",
            "expandable_segments:True", "expandable_segments:False",
            "roundup_power2_divisions:[256:1,512:2,>:4]", "roundup_power2_divisions:4",
            "pinned_max_round_threshold_mb:64", "pinned_max_cached_size_mb:8",
            "page_size:1g", "base_addr_aligned_kb:16", "segment_size_mb:20",
            "large_segment_size_mb:40", "multi_stream_lazy_reclaim:True",
            "max_split_size_mb:20,garbage_collection_threshold:0.8",
            "pin_memory_expandable_segments:True", "pinned_reserve_segment_size_mb:8"],
        "ctl/allocator": ["caching",
                          f"{PLUGIN_DIR}/passthrough.so passthrough_alloc passthrough_free",
                          f"{PLUGIN_DIR}/arena.so arena_alloc arena_free init=arena_init",
                          f"{PLUGIN_DIR}/faulty.so faulty_alloc faulty_free",
                          "/nonexistent.so a b", f"{fifo} a b", f"{WORK} a b"],
        "ctl/graph": ["create g", "create h", "capture_begin g stream=1",
                      "capture_begin h stream=2 pool=g mode=relaxed",
                      "capture_begin g stream=1 pool=handle:H mode=thread_local device=0",
                      "capture_end g", "capture_end h", "replay g stream=2", "replay h",
                      "reset g", "destroy g", "destroy h", "capture_begin g stream=0"],
        "ctl/mempool": ["create m", "create n use_on_oom no_split device=0",
                        "begin m stream=2", "begin n stream=3", "end m", "end n",
                        "release m", "release n", "empty m"],
        "ctl/acl_allocator": ["register caching stream=1", "register plugin1 stream=2 device=0",
                              "unregister stream=1", "register caching stream=0"],
        "ctl/op": ["launch stream=1 workspace=1MiB ns=1000", "launch stream=2 workspace=4KiB",
                   "sync stream=1", "sync stream=2 device=0", "launch stream=3 workspace=1GiB ns=5"],
        "devices/device0/memory_fraction": ["0.5", "1", "0.0001", "0", "1.5", "nan", "-0"],
        "workload/replay": [trace, f"loop {trace}", "loop", "/dev/zero", fifo, WORK,
                            "/nonexistent", "relative.trace"],
    }


NUMBERS = [b"0", b"-1", b"18446744073709551616", b"1e309", b"nan", b"0x10", b"99999999999999999999"]


def mutate(rng, v):
    v = bytearray(v)
    for _ in range(rng.randrange(1, 4)):
        op = rng.randrange(7)
        i = rng.randrange(len(v) + 1)
        if op == 0 and v:
            v[min(i, len(v) - 1)] ^= 1 << rng.randrange(8)
        elif op == 1:
            v[i:i] = bytes([rng.choice([0, 10, 32, 44, 58, 61, 255, rng.randrange(256)])])
        elif op == 2:
            del v[i:i + rng.randrange(1, 8)]
        elif op == 3:
            v[i:i] = rng.choice(NUMBERS)
        elif op == 4:
            v += b" " + bytes(v)
        elif op == 5:
            v[i:i] = b"\n"
        else:
            v += rng.randbytes(rng.randrange(1, 16))
    return bytes(v)


def value(rng, seed_list):
    r = rng.random()
    base = rng.choice(seed_list).encode() if seed_list else b"1"
    if r < 0.3:
        return base + rng.choice([b"", b"\n"])
    if r < 0.8:
        return mutate(rng, base)
    if r < 0.9:
        return rng.randbytes(rng.randrange(0, 64))
    return rng.choice([b"1" * 4095, b"1" * 4096, b"x" * 5000, base + b"\0" * 70000,
                       b"\n" * 10, b"\0"])


def split_write(path, data):
    """Two writes on one open: the second must be refused."""
    try:
        fd = os.open(path, os.O_WRONLY | os.O_TRUNC)
    except OSError as e:
        return e.errno
    err = 0
    try:
        for part in (data[:len(data) // 2], data[len(data) // 2:]):
            os.write(fd, part)
    except OSError as e:
        err = e.errno
    finally:
        try:
            os.close(fd)
        except OSError:
            pass
    return err


def writable_files():
    for d in ("tensors/device0", "pinned"):
        p = f"{MNT}/{d}/fuzz"
        if os.path.isdir(f"{MNT}/{d}"):
            open(p, "wb").close()
            os.truncate(p, 4096)
    found = []
    for root, _, files in os.walk(MNT):
        for name in files:
            p = os.path.join(root, name)
            try:
                if os.stat(p).st_mode & stat.S_IWUSR:
                    found.append(os.path.relpath(p, MNT))
            except OSError:
                pass
    return sorted(found)


def fuzzer(k, files, table, done):
    rng = random.Random(1000 + k)
    while not done():
        f = rng.choice(files)
        path = f"{MNT}/{f}"
        data = value(rng, table.get(re.sub(r"device\d+", "device0", f)))
        if rng.random() < 0.05 and len(data) > 1:
            err = split_write(path, data)
        else:
            err = write_value(path, data)
        counts.write(err, f)


def read_all():
    for root, _, files in os.walk(MNT):
        for name in files:
            got = read_whole(os.path.join(root, name), os.O_NONBLOCK)
            counts.read(got if isinstance(got, int) else 0)


def main():
    rss = RssSampler(PID)
    rss.start()
    table = seeds()
    files = writable_files()
    done = deadline(SECONDS)
    workers = [threading.Thread(target=fuzzer, args=(k, files, table, done)) for k in range(2)]
    for w in workers:
        w.start()
    while any(w.is_alive() for w in workers) and not rss.died:
        time.sleep(0.5)
    for w in workers:
        w.join()
    if not rss.died:
        read_all()
    rss.stop.set()
    rss.join()
    counts.add("writable files", len(files))
    report("mount fuzz", SECONDS, counts, rss, MNT)
    if rss.died:
        print("  DAEMON DIED")
    return 1 if rss.died else 0


sys.exit(main())
