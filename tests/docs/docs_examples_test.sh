#!/usr/bin/env bash
# docs_examples_test.sh FILE - the examples of FILE (README.md, or a page
# of the manual under contrib/man) run as a user pastes them: from the top
# of a tree whose build/ is this build, after README's command 1 mounted
# conf/npumemfs.ini on mnt, each block in a shell of its own, in order,
# stopping at the first command that fails. Where a block shows a command
# as "$ CMD" followed by lines, those lines are what CMD must print.
. "$(dirname "$0")/../fs/lib.sh"
SRC=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=${BUILD_DIR:?BUILD_DIR must name the build tree}
rel=$1
file=$SRC/$rel

TOP=$WORK/top
MNT=$TOP/mnt
mkdir -p "$TOP/conf" "$MNT" "$WORK/home"
cp "$SRC/conf/npumemfs.ini" "$TOP/conf/"
ln -s "$SRC/contrib" "$TOP/contrib"
ln -s "$BUILD" "$TOP/build"
# npumemfs-plugin(7)'s examples build my.c from contrib/plugins/README.md.
python3 - "$SRC/contrib/plugins/README.md" "$TOP/my.c" <<'PY' || fail "no my.c in contrib/plugins/README.md"
import re, sys
section = open(sys.argv[1]).read().split("## 1. Write it", 1)[1].split("## 2.", 1)[0]
open(sys.argv[2], "w").write(re.search(r"```c\n(.*?)```", section, re.S).group(1))
PY
# The log goes where a user's would, under HOME.
export HOME=$WORK/home
unset XDG_STATE_HOME
python3 "$SRC/tests/docs/examples.py" "$file" >"$WORK/blocks.json" || fail "cannot read the examples of $rel"

# README's command 1, its last step: mount in the background and return.
(cd "$TOP" && build/bin/npumemfs --config conf/npumemfs.ini mnt) >"$WORK/mount.out" 2>&1 ||
	fail "command 1 did not mount: $(cat "$WORK/mount.out")"
mounted || fail "command 1 returned but nothing is mounted"

# One block: plain lines run as a script; "$ CMD" lines each run with
# their following lines as the expected output.
run_block() { # line text
	local line=$1 text=$2
	if ! grep -q '^\$ ' <<<"$text"; then
		(cd "$TOP" && bash -e -o pipefail -c "$text") >"$WORK/out" 2>&1 ||
			fail "$rel:$line: the example fails as written: $(tail -n 20 "$WORK/out")"
		return
	fi
	printf '%s\n' "$text" >"$WORK/block"
	python3 - "$TOP" "$rel:$line" "$WORK/block" <<'PY' || fail "$rel:$line: the example prints something else"
import subprocess, sys
top, where = sys.argv[1], sys.argv[2]
cmd, want = None, []
def check():
    if cmd is None:
        return
    out = subprocess.run(["bash", "-o", "pipefail", "-c", cmd], cwd=top, capture_output=True, text=True)
    if out.returncode != 0 or out.stdout.splitlines() != want:
        sys.exit(f"{where}: {cmd}\n  printed: {out.stdout!r} (exit {out.returncode})\n  the page says: {want!r}\n{out.stderr}")
for l in open(sys.argv[3]).read().splitlines():
    if l.startswith("$ "):
        check()
        cmd, want = l[2:], []
    else:
        want.append(l)
check()
PY
}

n=$(python3 -c 'import json, sys; print(len(json.load(open(sys.argv[1]))))' "$WORK/blocks.json")
for k in $(seq 0 $((n - 1))); do
	line=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))[int(sys.argv[2])]["line"])' "$WORK/blocks.json" "$k")
	text=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))[int(sys.argv[2])]["text"], end="")' "$WORK/blocks.json" "$k")
	run_block "$line" "$text"
done
echo "PASS: $n examples of $rel ran as written"
