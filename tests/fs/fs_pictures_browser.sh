#!/usr/bin/env bash
# The pictures as a browser shows them: headless Chromium lays out
# snapshot/device0.svg and snapshot/device0.history.svg of README's
# command 1 (conf/npumemfs.ini, the demo's looping replay) at 1400x900,
# and a script measures the rendered elements: the widest segment and
# nine tenths of the reserved bytes on the first screen, every segment
# labelled with no label over another, a scale bar as long as the bytes
# it names, and ticks on the history's time axis.
. "$(dirname "$0")/lib.sh"
SRC=$(cd "$(dirname "$0")/../.." && pwd)
browser=$(command -v chromium || command -v chromium-browser) || skip "chromium is not installed"
INI=$SRC/conf/npumemfs.ini
mount_fs
wait_state running
sleep 3 # a few of the replay's steps: segments of many sizes, and history
cp "$MNT/snapshot/device0.svg" "$WORK/seg.svg" && cp "$MNT/snapshot/device0.history.svg" "$WORK/hist.svg" ||
	fail "copying the pictures"

# One page, both pictures inline (a file:// page cannot script an <object>'s
# document), and the script that measures them.
python3 - "$WORK" <<'PY' || fail "cannot write the page"
import sys
work = sys.argv[1]
def inline(name):
    return open(f"{work}/{name}").read().split("?>", 1)[1]
script = r"""
const out = {};
const svgs = document.querySelectorAll("svg");
const seg = svgs[0], hist = svgs[1];
const box = (e) => e.getBoundingClientRect();
const overlap = (a, b) => a.left < b.right - 0.5 && b.left < a.right - 0.5 && a.top < b.bottom - 0.5 && b.top < a.bottom - 0.5;
const segments = [...seg.querySelectorAll("g.segment")];
const screen = window.innerHeight;
out.viewport = [window.innerWidth, window.innerHeight];
out.segments = segments.length;
const widest = segments.reduce((a, b) => (+b.dataset.bytes > +a.dataset.bytes ? b : a));
out.widest_bottom = box(widest).bottom;
const total = segments.reduce((s, g) => s + +g.dataset.bytes, 0);
const seen = segments.filter((g) => box(g).bottom <= screen).reduce((s, g) => s + +g.dataset.bytes, 0);
out.first_screen_share = seen / total;
out.too_thin = segments.filter((g) => box(g).width < 1).length;
const labels = [...seg.querySelectorAll("g.item > text.label")];
out.outside_runs = segments.filter((g) => !g.closest("g.item")).length;
out.unlabelled = [...seg.querySelectorAll("g.item")].filter((i) => !i.querySelector("text.label") || box(i.querySelector("text.label")).width <= 0).length;
let overlaps = 0;
for (let i = 0; i < labels.length; i++)
  for (let j = i + 1; j < labels.length; j++)
    if (overlap(box(labels[i]), box(labels[j]))) overlaps++;
out.label_overlaps = overlaps;
// Each label stands above the first segment of its run.
out.labels_not_above = [...seg.querySelectorAll("g.item")].filter((i) => {
  const l = box(i.querySelector("text.label")), g = box(i.querySelector("g.segment"));
  return l.bottom > g.top + 0.5 || Math.abs(l.left - g.left) > 2;
}).length;
const scale = seg.querySelector("g.scale");
out.scale_px = scale ? box(scale.querySelector("path")).width : 0;
out.scale_expected_px = scale ? +scale.dataset.bytes * box(widest).width / +widest.dataset.bytes : -1;
const ticks = [...hist.querySelectorAll("g.tick")];
out.ticks = ticks.length;
out.tick_labels = ticks.map((t) => t.querySelector("text").textContent);
const tl = ticks.map((t) => box(t.querySelector("text")));
out.tick_overlaps = tl.filter((a, i) => tl.some((b, j) => j > i && overlap(a, b))).length;
out.tick_x_falls_back = ticks.every((t, i) => i == 0 || box(t).left < box(ticks[i - 1]).left);
document.getElementById("result").textContent = JSON.stringify(out);
"""
open(f"{work}/page.html", "w").write(
    "<!DOCTYPE html><html><body style='margin:0'>" + inline("seg.svg") + inline("hist.svg")
    + "<pre id='result'></pre><script>" + script + "</script></body></html>")
PY

run_browser() { # what... : Chromium headless at the size of a laptop screen
	timeout 120 "$browser" --headless --no-sandbox --disable-gpu --hide-scrollbars \
		--no-first-run --user-data-dir="$WORK/chromium" --window-size=1400,900 "$@" 2>>"$WORK/chromium.err"
}
run_browser --dump-dom "file://$WORK/page.html" >"$WORK/dom.html" ||
	fail "chromium could not render the page: $(tail -n 5 "$WORK/chromium.err")"
run_browser --screenshot="$WORK/seg.png" "file://$WORK/seg.svg" >/dev/null ||
	fail "chromium could not take a screenshot: $(tail -n 5 "$WORK/chromium.err")"

python3 - "$WORK" <<'PY' || fail "the pictures as Chromium shows them"
import json, re, struct, sys
work = sys.argv[1]
m = re.search(r"<pre id=\"result\">(.*?)</pre>", open(f"{work}/dom.html").read(), re.S)
if not m or not m.group(1):
    sys.exit("the page's script produced nothing")
r = json.loads(m.group(1).replace("&quot;", '"').replace("&amp;", "&"))
print("rendered:", json.dumps(r))
png = open(f"{work}/seg.png", "rb").read(32)
if png[:8] != b"\x89PNG\r\n\x1a\n" or struct.unpack(">II", png[16:24]) != (1400, 900):
    sys.exit("the screenshot is not a 1400x900 PNG")
checks = [
    (r["segments"] >= 20, f"the demo should hold many segments, not {r['segments']}"),
    (r["widest_bottom"] <= r["viewport"][1], f"the widest segment ends at {r['widest_bottom']} px, below the first screen"),
    (r["first_screen_share"] >= 0.9, f"only {r['first_screen_share']:.0%} of the reserved bytes are on the first screen"),
    (r["too_thin"] == 0, f"{r['too_thin']} segments are thinner than a pixel"),
    (r["outside_runs"] == 0, f"{r['outside_runs']} segments are in no labelled run"),
    (r["unlabelled"] == 0, f"{r['unlabelled']} runs of segments have no label"),
    (r["label_overlaps"] == 0, f"{r['label_overlaps']} pairs of labels overlap"),
    (r["labels_not_above"] == 0, f"{r['labels_not_above']} labels are not above their segments"),
    (r["scale_px"] > 0 and abs(r["scale_px"] - r["scale_expected_px"]) <= 1, f"the scale bar is {r['scale_px']} px for {r['scale_expected_px']} px of bytes"),
    (r["ticks"] >= 4, f"the time axis has {r['ticks']} ticks: {r['tick_labels']}"),
    (r["tick_labels"][:1] == ["now"], f"the time axis does not end at now: {r['tick_labels']}"),
    (r["tick_overlaps"] == 0 and r["tick_x_falls_back"], f"time ticks overlap or are out of order: {r['tick_labels']}"),
]
bad = [why for ok, why in checks if not ok]
if bad:
    sys.exit("\n".join(bad))
PY
echo PASS
