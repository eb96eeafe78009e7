"""soaklib.py - what the soak and the mount fuzzer share: counters by
errno, the daemon's RSS sampled in the background, and the closing report.
"""
import collections
import errno
import os
import statistics
import threading
import time


class Counts:
    """Thread-safe counters: reads, writes by errno, named totals."""

    def __init__(self):
        self.lock = threading.Lock()
        self.writes = collections.Counter()
        self.per_file = collections.defaultdict(collections.Counter)
        self.reads = collections.Counter()
        self.totals = collections.Counter()
        self.failures = []

    def write(self, err, path=None):
        name = errno.errorcode.get(err, str(err)) if err else "ok"
        with self.lock:
            self.writes[name] += 1
            if path:
                self.per_file[path][name] += 1

    def read(self, err):
        with self.lock:
            self.reads[errno.errorcode.get(err, str(err)) if err else "ok"] += 1

    def add(self, name, n=1):
        with self.lock:
            self.totals[name] += n

    def fail(self, what):
        with self.lock:
            self.totals["mismatches"] += 1
            if len(self.failures) < 20:
                self.failures.append(what)


def kib_of_rss(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return None


class RssSampler(threading.Thread):
    """The daemon's VmRSS every `period` seconds until stopped."""

    def __init__(self, pid, period=0.5):
        super().__init__(daemon=True)
        self.pid, self.period = pid, period
        self.samples = []
        self.stop = threading.Event()
        self.died = False

    def run(self):
        while not self.stop.is_set():
            try:
                kib = kib_of_rss(self.pid)
            except OSError:
                kib = None
            if kib is None:
                self.died = True
                return
            self.samples.append(kib)
            self.stop.wait(self.period)


def by_errno(counter):
    return ", ".join(f"{k} {v}" for k, v in sorted(counter.items(), key=lambda kv: -kv[1])) or "none"


def last_error(path):
    got = read_whole(path)
    if isinstance(got, int):
        return ""
    lines = [l for l in got.decode(errors="replace").splitlines() if l.startswith("last_error")]
    return lines[-1][:160] if lines else ""


def report(name, seconds, counts, rss, mnt=None):
    s = rss.samples or [0]
    print(f"{name}: {seconds:.0f} s")
    print(f"  reads: {sum(counts.reads.values())} ({by_errno(counts.reads)})")
    print(f"  writes: {sum(counts.writes.values())} ({by_errno(counts.writes)})")
    for path in sorted(counts.per_file):
        why = last_error(f"{mnt}/{path}") if mnt and set(counts.per_file[path]) - {"ok"} else ""
        print(f"    {path}: {by_errno(counts.per_file[path])}" + (f" ({why})" if why else ""))
    for k in sorted(counts.totals):
        print(f"  {k}: {counts.totals[k]}")
    if "mismatches" not in counts.totals:
        print("  mismatches: 0")
    print(f"  daemon RSS KiB: min {min(s)} median {int(statistics.median(s))} "
          f"max {max(s)} ({len(rss.samples)} samples)")
    for f in counts.failures:
        print(f"  MISMATCH: {f}")


def write_value(path, data):
    """One open, one write (O_TRUNC, as the shell's >): 0 or the errno."""
    try:
        fd = os.open(path, os.O_WRONLY | os.O_TRUNC)
    except OSError as e:
        return e.errno
    try:
        os.write(fd, data)
        return 0
    except OSError as e:
        return e.errno
    finally:
        try:
            os.close(fd)
        except OSError:
            pass


def read_whole(path, flags=0):
    """The file's bytes, or the errno of the open or read that failed."""
    try:
        fd = os.open(path, os.O_RDONLY | flags)
    except OSError as e:
        return e.errno
    try:
        out = []
        while True:
            b = os.read(fd, 1 << 16)
            if not b:
                return b"".join(out)
            out.append(b)
    except OSError as e:
        return e.errno
    finally:
        os.close(fd)


def deadline(seconds):
    end = time.monotonic() + seconds
    return lambda: time.monotonic() >= end
