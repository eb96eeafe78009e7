#!/usr/bin/env python3
"""test_snapshot2trace.py CASE CONVERTER [REPLAY] - snapshot2trace used from
the shell, one behaviour per CASE. Snapshots are built here, shaped like
the ones torch.cuda.memory._dump_snapshot() writes."""

import json
import os
import pickle
import subprocess
import sys
import tempfile

S = 0x7F00A0000000          # the worked example's segment address
STREAM_A = 94613270573536   # upstream streams are pointers
STREAM_B = 94613270581232


def event(action, addr, size, stream=0, time_us=0):
    return {"action": action, "addr": addr, "size": size, "stream": stream,
            "time_us": time_us, "frames": []}


def block(addr, size, requested, state):
    return {"address": addr, "size": size, "requested_size": requested,
            "state": state, "frames": []}


def segment(addr, total, blocks, stream=0, device=0):
    allocated = sum(b["size"] for b in blocks if b["state"] == "active_allocated")
    return {"device": device, "address": addr, "total_size": total,
            "allocated_size": allocated, "active_size": allocated,
            "requested_size": sum(b["requested_size"] for b in blocks
                                  if b["state"] == "active_allocated"),
            "stream": stream, "segment_type": "small",
            "segment_pool_id": (0, 0), "is_expandable": False, "frames": [],
            "blocks": blocks}


def worked_example():
    """Reference §4.4: alloc 1000, alloc 3000, free x, snapshot,
    empty_cache, free y, empty_cache; segments as dumped at the end."""
    trace = [
        event("segment_alloc", S, 2097152, time_us=1),
        event("alloc", S, 1000, time_us=1),
        event("alloc", S + 1024, 3000, time_us=2),
        event("free_requested", S, 1000, time_us=3),
        event("free_completed", S, 1000, time_us=3),
        event("snapshot", 0, 3072, time_us=4),
        event("free_requested", S + 1024, 3000, time_us=6),
        event("free_completed", S + 1024, 3000, time_us=6),
        event("segment_free", S, 2097152, time_us=7),
    ]
    return {"segments": [], "device_traces": [trace],
            "allocator_settings": {"expandable_segments": False}}


WORKED_TRACE = """\
# npumemfs trace converted by snapshot2trace from snap
# device 0: 9 events (2 alloc, 2 free_requested, 2 free_completed, 1 segment_alloc, 1 segment_free, 1 snapshot)
# device 0: skipped 0 frees of blocks allocated before recording began
# written: 2 alloc, 2 free, 0 live before recording, 0 deferred frees, 0 complete, 0 oom
# device 0
alloc 0x7f00a0000000.1 1000 stream=0 device=0
alloc 0x7f00a0000400.1 3000 stream=0 device=0
free 0x7f00a0000000.1
free 0x7f00a0000400.1
"""


class Fail(Exception):
    pass


def check(cond, what):
    if not cond:
        raise Fail(what)


def run(converter, *args, stdin=None):
    p = subprocess.run([sys.executable, converter, *args], input=stdin,
                       capture_output=True, text=True)
    return p.returncode, p.stdout, p.stderr


def write_pickle(data, protocol, name="snap"):
    with open(name, "wb") as f:
        pickle.dump(data, f, protocol=protocol)
    return name


def trace_body(text):
    return [l for l in text.splitlines() if not l.startswith("#")]


def expect_trace(converter, name, expected):
    rc, out, err = run(converter, name)
    check(rc == 0, f"exit {rc}: {err}")
    check(out == expected, f"trace differs:\n{out}--- expected:\n{expected}")


def case_worked_example_pickle2(converter, _):
    expect_trace(converter, write_pickle(worked_example(), 2), WORKED_TRACE)


def case_worked_example_pickle4(converter, _):
    expect_trace(converter, write_pickle(worked_example(), 4), WORKED_TRACE)


def case_worked_example_json(converter, _):
    data = worked_example()
    with open("snap", "w") as f:
        json.dump(data, f)
    expect_trace(converter, "snap", WORKED_TRACE)


def case_summary_on_stderr(converter, _):
    write_pickle(worked_example(), 4)
    rc, _, err = run(converter, "snap", "-o", "out.trace")
    check(rc == 0, f"exit {rc}: {err}")
    check(err == "snapshot2trace: snap -> out.trace: device 0: 2 allocs, "
          "2 frees, 0 live before recording, 0 frees skipped, 0 deferred, "
          "0 completed, 0 OOMs, 0 streams\n", f"summary is: {err!r}")
    with open("out.trace") as f:
        check(f.read() == WORKED_TRACE, "-o wrote another trace")


def case_reused_address_new_id(converter, _):
    trace = [event("alloc", S, 512), event("free_requested", S, 512),
             event("free_completed", S, 512), event("alloc", S, 700),
             event("free_requested", S, 700), event("free_completed", S, 700),
             event("alloc", S, 900)]
    write_pickle({"segments": [], "device_traces": [trace]}, 4)
    rc, out, err = run(converter, "snap")
    check(rc == 0, f"exit {rc}: {err}")
    check(trace_body(out) == [
        "alloc 0x7f00a0000000.1 512 stream=0 device=0",
        "free 0x7f00a0000000.1",
        "alloc 0x7f00a0000000.2 700 stream=0 device=0",
        "free 0x7f00a0000000.2",
        "alloc 0x7f00a0000000.3 900 stream=0 device=0",
    ], f"body is:\n{out}")


def case_two_streams_map_to_1_and_2(converter, _):
    trace = [event("alloc", S, 100, STREAM_B), event("alloc", S + 512, 200, 0),
             event("alloc", S + 1024, 300, STREAM_A),
             event("alloc", S + 1536, 400, STREAM_B)]
    write_pickle({"segments": [], "device_traces": [trace]}, 4)
    rc, out, err = run(converter, "snap")
    check(rc == 0, f"exit {rc}: {err}")
    check(trace_body(out) == [
        "alloc 0x7f00a0000000.1 100 stream=1 device=0",
        "alloc 0x7f00a0000200.1 200 stream=0 device=0",
        "alloc 0x7f00a0000400.1 300 stream=2 device=0",
        "alloc 0x7f00a0000600.1 400 stream=1 device=0",
    ], f"body is:\n{out}")
    check(f"# streams: {STREAM_B} -> 1, {STREAM_A} -> 2\n" in out,
          "no streams line in the header")


def case_unknown_free_skipped_and_counted(converter, _):
    # The block at S was allocated before recording began.
    trace = [event("free_requested", S, 4096), event("free_completed", S, 4096),
             event("alloc", S + 8192, 64), event("free_requested", S + 8192, 64),
             event("free_completed", S + 8192, 64)]
    write_pickle({"segments": [], "device_traces": [trace]}, 4)
    rc, out, err = run(converter, "snap")
    check(rc == 0, f"exit {rc}: {err}")
    check(trace_body(out) == ["alloc 0x7f00a0002000.1 64 stream=0 device=0",
                              "free 0x7f00a0002000.1"], f"body is:\n{out}")
    check("# device 0: skipped 1 frees of blocks allocated before recording "
          "began\n" in out, "the skipped free is not counted in the header")
    check(", 1 frees skipped," in err, f"summary is: {err!r}")


def case_include_live_starts_from_recorded_state(converter, _):
    # Live before recording: S (freed in the trace) and S+2048 (still live
    # at the dump, requested 1500 of a 1536-byte block).
    trace = [event("alloc", S + 1024, 800), event("free_requested", S, 1000),
             event("free_completed", S, 1000)]
    seg = segment(S, 2097152, [block(S, 1024, 1000, "inactive"),
                               block(S + 1024, 1024, 800, "active_allocated"),
                               block(S + 2048, 1536, 1500, "active_allocated"),
                               block(S + 3584, 2093568, 0, "inactive")],
                  stream=STREAM_A)
    write_pickle({"segments": [seg], "device_traces": [trace]}, 4)
    rc, out, err = run(converter, "snap", "--include-live")
    check(rc == 0, f"exit {rc}: {err}")
    check(trace_body(out) == [
        "alloc 0x7f00a0000000.0 1000 stream=0 device=0",
        f"alloc 0x7f00a0000800.0 1500 stream=1 device=0",
        "alloc 0x7f00a0000400.1 800 stream=0 device=0",
        "free 0x7f00a0000000.0",
    ], f"body is:\n{out}")
    check("2 live before recording" in out, "live blocks are not counted")


def case_deferred_free_gets_a_stream_of_its_own_and_complete(converter, _):
    # y was used on another stream (record_stream): its free completes only
    # when the allocator next processes events, after the alloc of z. Its
    # stream (1, after the recorded stream 0) goes back for the next one.
    trace = [event("alloc", S, 1000), event("free_requested", S, 1000),
             event("alloc", S + 1024, 50), event("free_completed", S, 1000),
             event("free_requested", S + 1024, 50),
             event("alloc", S + 2048, 60), event("free_completed", S + 1024, 50)]
    write_pickle({"segments": [], "device_traces": [trace]}, 4)
    rc, out, err = run(converter, "snap")
    check(rc == 0, f"exit {rc}: {err}")
    check(trace_body(out) == ["alloc 0x7f00a0000000.1 1000 stream=0 device=0",
                              "record_stream 0x7f00a0000000.1 1",
                              "free 0x7f00a0000000.1",
                              "alloc 0x7f00a0000400.1 50 stream=0 device=0",
                              "complete 0x7f00a0000000.1",
                              "record_stream 0x7f00a0000400.1 1",
                              "free 0x7f00a0000400.1",
                              "alloc 0x7f00a0000800.1 60 stream=0 device=0",
                              "complete 0x7f00a0000400.1"],
          f"body is:\n{out}")
    check("# streams 1 to 1: one for each deferred free pending at a time "
          "(record_stream, complete)\n" in out, f"no side stream line:\n{out}")


def case_oom_becomes_comment(converter, _):
    trace = [event("alloc", S, 1000),
             {"action": "oom", "device_free": 1048576, "size": 8589934592,
              "stream": 0, "time_us": 5, "frames": []}]
    write_pickle({"segments": [], "device_traces": [trace]}, 4)
    rc, out, err = run(converter, "snap")
    check(rc == 0, f"exit {rc}: {err}")
    check(out.endswith("alloc 0x7f00a0000000.1 1000 stream=0 device=0\n"
                       "# oom: 8589934592 bytes requested, 1048576 bytes free "
                       "on device 0\n"), f"trace is:\n{out}")


def case_device_choice(converter, _):
    traces = [[event("alloc", S, 10)], [event("alloc", S, 20)]]
    write_pickle({"segments": [], "device_traces": traces}, 4)
    rc, out, err = run(converter, "snap")
    check(rc == 2 and err == "snapshot2trace: snap: devices 0, 1 have trace "
          "events: choose one with --device N or take them all with "
          "--all-devices\n", f"exit {rc}: {err!r}")
    rc, out, err = run(converter, "snap", "--device", "1")
    check(rc == 0 and trace_body(out) ==
          ["alloc 0x7f00a0000000.1 20 stream=0 device=1"], f"--device 1:\n{out}")
    rc, out, err = run(converter, "snap", "--all-devices")
    check(rc == 0 and trace_body(out) ==
          ["alloc 0x7f00a0000000.1 10 stream=0 device=0",
           "alloc 0x7f00a0000000.1 20 stream=0 device=1"],
          f"--all-devices:\n{out}")


class Reduce:
    """Unpickles as os.system('touch pwned') if globals were allowed."""

    def __reduce__(self):
        return (os.system, ("touch pwned",))


def case_pickle_global_refused(converter, _):
    data = worked_example()
    data["segments"] = [Reduce()]
    write_pickle(data, 2)
    rc, out, err = run(converter, "snap")
    check(rc == 2, f"exit {rc}")
    check(not os.path.exists("pwned"), "the pickle ran os.system")
    check(err == "snapshot2trace: snap: refusing pickle global posix.system: "
          "a memory snapshot holds only plain data\n", f"stderr is {err!r}")
    check(out == "", "a refused pickle printed a trace")


def case_not_a_snapshot(converter, _):
    with open("notes.txt", "w") as f:
        f.write("hello, this is text\n")
    rc, out, err = run(converter, "notes.txt")
    check(rc == 2 and err == "snapshot2trace: notes.txt: not a memory "
          "snapshot (neither a pickle nor JSON)\n", f"exit {rc}: {err!r}")
    check(out == "", "a text file printed a trace")


def case_no_history_recorded(converter, _):
    # What _dump_snapshot writes without _record_memory_history: segments
    # and empty per-device traces.
    write_pickle({"segments": [segment(S, 2097152,
                                       [block(S, 2097152, 0, "inactive")])],
                  "device_traces": [[]]}, 4)
    rc, out, err = run(converter, "snap")
    check(rc == 2, f"exit {rc}")
    check(err == "snapshot2trace: snap: no device_traces events: memory "
          "history was not recorded; call "
          "torch.cuda.memory._record_memory_history() "
          "(torch_npu.npu.memory._record_memory_history() on an NPU) before "
          "the workload and dump the snapshot before turning it off\n",
          f"stderr is {err!r}")


def case_replay_worked_example(converter, replay):
    write_pickle(worked_example(), 4)
    rc, trace, err = run(converter, "snap")
    check(rc == 0, f"exit {rc}: {err}")
    p = subprocess.run([replay, "--flavor", "cuda", "--format", "stats", "-"],
                       input=trace, capture_output=True, text=True)
    check(p.returncode == 0, f"npumem-replay exit {p.returncode}: {p.stderr}")
    stats = p.stdout.splitlines()
    check("allocated_bytes.all.peak 4096" in stats,
          "allocated_bytes.all.peak is not 4096")
    check("segment.all.peak 1" in stats, "segment.all.peak is not 1")
    check("allocation.all.allocated 2" in stats, "not 2 allocations")
    check("allocated_bytes.all.current 0" in stats, "something is still allocated")


def main():
    case, converter = sys.argv[1], os.path.abspath(sys.argv[2])
    replay = sys.argv[3] if len(sys.argv) > 3 else None
    fn = globals().get("case_" + case)
    if fn is None:
        print(f"unknown case {case}", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory() as tmp:
        os.chdir(tmp)
        try:
            fn(converter, replay)
        except Fail as e:
            print(f"FAIL ({case}): {e}", file=sys.stderr)
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
