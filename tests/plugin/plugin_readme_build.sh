# plugin_readme_build.sh - contrib/plugins/README.md as a plug-in author
# follows it: the C of section 1 saved as my.c, section 2's build-tree
# commands run word for word from a folder whose build/ is this build,
# the result installed and loaded (sections 3 and 4) and used.
. "$(dirname "$0")/plugin_lib.sh"
README=${SRC_DIR:?SRC_DIR must name the source tree}/contrib/plugins/README.md
BUILD=${BUILD_DIR:?BUILD_DIR must name the build tree}
command -v cc >/dev/null || skip "no C compiler (cc)"

AUTHOR=$WORK/author
mkdir "$AUTHOR"
ln -s "$BUILD" "$AUTHOR/build"
python3 - "$README" "$AUTHOR" <<'PY' || fail "cannot take the examples out of the README"
import re, sys
text = open(sys.argv[1]).read()
author = sys.argv[2]
section1 = text.split("## 1. Write it", 1)[1].split("## 2.", 1)[0]
code = re.search(r"```c\n(.*?)```", section1, re.S).group(1)
open(f"{author}/my.c", "w").write(code)
section2 = text.split("## 2. Build it", 1)[1].split("## 3.", 1)[0]
tail = section2.split("Against a build tree", 1)[1]
block = re.search(r"\n\n((?:    .*\n)+)", tail).group(1)
open(f"{author}/build.sh", "w").write("".join(l[4:] + "\n" for l in block.splitlines()))
PY
grep -q "pkg-config" "$AUTHOR/build.sh" || fail "section 2 has no pkg-config command"
(cd "$AUTHOR" && unset PKG_CONFIG_PATH && bash -e build.sh) >"$WORK/build.log" 2>&1 ||
	fail "README section 2 fails as written: $(cat "$WORK/build.log")"
[ -f "$AUTHOR/my.so" ] || fail "README section 2 made no my.so"
install -m 0755 "$AUTHOR/my.so" "$PRIVATE/"

mount_fs
use "$PRIVATE/my.so my_alloc my_free"
truncate -s 1M "$MNT/tensors/device0/t"
expect_eq "$(value memory_allocated 0)" 1048576 "the README plug-in serves a tensor"
rm "$MNT/tensors/device0/t"
stop_fs
expect_eq "$STATUS" 0 "exit status"
echo PASS
