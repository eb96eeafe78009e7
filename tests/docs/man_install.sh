#!/usr/bin/env bash
# man_install.sh BUILD - cmake --install puts each page where man finds it
# by name, and the example ini and the plug-in sources with the docs.
set -u
build=${1:?usage: man_install.sh BUILD}
prefix=$(mktemp -d /tmp/npumemfs-install.XXXXXX)
trap 'rm -rf "$prefix"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
cmake --install "$build" --prefix "$prefix" >"$prefix.log" 2>&1 ||
	fail "cmake --install: $(tail -n 5 "$prefix.log")"
rm -f "$prefix.log"
for page in npumemfs.8 npumemfs.ini.5 npumemfs-trace.5 npumemfs-plugin.7 npumemfs-flavors.7 \
	npumem-replay.1 npumem-gentrace.1 npumem-whatif.1; do
	section=${page##*.}
	found=$(man -M "$prefix/share/man" -w "$section" "${page%.*}" 2>/dev/null) ||
		fail "man -M PREFIX/share/man $section ${page%.*} finds no page"
	[ "$found" = "$prefix/share/man/man$section/$page" ] || fail "man found $found for $page"
done
for doc in examples/npumemfs.ini plugins/README.md plugins/passthrough.c; do
	[ -s "$prefix/share/doc/npumemfs/$doc" ] || fail "share/doc/npumemfs/$doc is not installed"
done
echo "PASS: the manual and the examples install where man and readers find them"
