#!/usr/bin/env python3
"""check_pickle.py PICKLE_WRITE - the fixture's pickle, loaded by Python's
own pickle module, holds exactly the fixture's values, and the fields
PyTorch's torch/cuda/_memory_viz.py reads (stats/segsum: segment
total_size, address, blocks with size, state, requested_size, frames as
_frame_fmt formats them: filename:line:name;
trace: device_traces events with action, addr or device_free, size,
stream) add up as that tool expects."""
import os
import pickle
import subprocess
import sys
import tempfile

SEG = 0x7F3A40000000
TIME = 1700000000000000
LINE_3 = [{"name": "alloc", "filename": "/work/run.trace", "line": 3}]
TRUNCATE_BIG = [{"name": "truncate", "filename": "/mnt/tensors/device0/big", "line": 0}]
failures = []


def check(what, got, want):
    if got != want:
        failures.append(f"{what}: got {got!r}, want {want!r}")


def load(writer, flavor):
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "snap.pickle")
        subprocess.run([writer, path, flavor], check=True)
        with open(path, "rb") as f:
            raw = f.read()
        with open(path, "rb") as f:
            return raw, pickle.load(f)


def segsum(data):
    """What _memory_viz.segsum totals: allocated + both frees == reserved."""
    reserved = allocated = free_internal = free_external = 0
    for seg in data["segments"]:
        reserved += seg["total_size"]
        offset = 0
        for b in seg["blocks"]:
            assert isinstance(b["frames"], list)
            if b["state"] == "active_allocated":
                allocated += b["requested_size"]
                free_internal += b["size"] - b["requested_size"]
            else:
                free_external += b["size"]
            offset += b["size"]
        check("blocks span the segment", offset, seg["total_size"])
    check("segsum balance", allocated + free_internal + free_external, reserved)
    return reserved, allocated, free_internal, free_external


def frame_fmt(f):
    """_memory_viz._frame_fmt: the file's last component, line and name."""
    return f"{f['filename'].split('/')[-1]}:{f['line']}:{f['name']}"


def trace(data):
    """What _memory_viz.trace walks: allocations placed in known segments."""
    names = []
    for i, events in enumerate(data["device_traces"]):
        segments = []
        for e in events:
            action, size, stream = e["action"], e["size"], e["stream"]
            if action == "segment_alloc":
                segments.append((e["addr"], size))
            elif action == "alloc":
                inside = [s for s, n in segments if s <= e["addr"] < s + n]
                check("alloc inside a recorded segment", len(inside), 1)
            elif action == "oom":
                e["device_free"]
            names.append((i, action, size, stream,
                          [frame_fmt(f) for f in e["frames"]]))
    return names


def main():
    writer = sys.argv[1]
    raw, data = load(writer, "npu")
    check("protocol", raw[:2], b"\x80\x04")
    check("npu keys", list(data), ["segments", "device_traces"])
    seg = data["segments"][0]
    check("segment", seg, {
        "device": 0, "address": SEG, "total_size": 2097152,
        "allocated_size": 1024, "active_size": 1024, "requested_size": 1000,
        "stream": 0, "segment_type": "small", "segment_pool_id": (0, 0),
        "is_expandable": False, "frames": LINE_3,
        "blocks": [
            {"address": SEG, "size": 1024, "requested_size": 1000,
             "state": "active_allocated", "frames": LINE_3},
            {"address": SEG + 1024, "size": 2096128, "requested_size": 0,
             "state": "inactive", "frames": []},
        ]})
    check("segment key order", list(seg), [
        "device", "address", "total_size", "allocated_size", "active_size",
        "requested_size", "stream", "segment_type", "segment_pool_id",
        "is_expandable", "blocks", "frames"])
    check("frame key order", list(seg["frames"][0]), ["name", "filename", "line"])
    check("device_traces", data["device_traces"], [[
        {"action": "segment_alloc", "addr": SEG, "size": 2097152, "stream": 0,
         "pool_id": (0, 0), "time_us": TIME, "frames": LINE_3},
        {"action": "alloc", "addr": SEG, "size": 1000, "stream": 0,
         "pool_id": (0, 0), "time_us": TIME + 1, "frames": LINE_3},
        {"action": "oom", "device_free": 1048576, "size": 67109376,
         "stream": 0, "pool_id": (0, 1), "time_us": TIME + 2, "frames": TRUNCATE_BIG},
    ]])
    check("trace entry key order", list(data["device_traces"][0][2]), [
        "action", "device_free", "size", "stream", "pool_id", "time_us", "frames"])
    check("segsum", segsum(data), (2097152, 1000, 24, 2096128))
    check("trace", trace(data), [(0, "segment_alloc", 2097152, 0, ["run.trace:3:alloc"]),
                                 (0, "alloc", 1000, 0, ["run.trace:3:alloc"]),
                                 (0, "oom", 67109376, 0, ["big:0:truncate"])])

    _, cuda = load(writer, "cuda")
    check("cuda keys", list(cuda), ["segments", "device_traces", "allocator_settings"])
    divisions = {str(1 << i): 0 for i in range(16)}
    divisions["4"] = 4
    check("allocator_settings", cuda["allocator_settings"], {
        "PYTORCH_CUDA_ALLOC_CONF": "expandable_segments:True,roundup_power2_divisions:[4:4]",
        "max_split_size": -1, "garbage_collection_threshold": 0.0,
        "expandable_segments": True, "pinned_num_register_threads": 1,
        "release_lock_on_cudamalloc": False, "pinned_use_cuda_host_register": False,
        "roundup_power2_divisions": divisions})
    check("garbage_collection_threshold is a float",
          type(cuda["allocator_settings"]["garbage_collection_threshold"]), float)
    for f in failures:
        print("FAIL:", f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
