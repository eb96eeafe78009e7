#!/usr/bin/env bash
# man_lint.sh MANDIR - every page of the manual renders without a warning:
# man-db's check (groff -ww, as Debian's lintian runs it) and mandoc's
# errors. scdoc's paragraph macros are mandoc style warnings only, so
# mandoc is held to -W error.
set -u
dir=${1:?usage: man_lint.sh MANDIR}
pages=(npumemfs.8 npumemfs.ini.5 npumemfs-trace.5 npumemfs-plugin.7 npumemfs-flavors.7
	npumem-replay.1 npumem-gentrace.1 npumem-whatif.1)
bad=0
for page in "${pages[@]}"; do
	f=$dir/$page
	[ -s "$f" ] || { echo "FAIL: $f was not built" >&2; bad=1; continue; }
	out=$(LC_ALL=C.UTF-8 MANROFFSEQ='' MANWIDTH=80 \
		man --warnings -E UTF-8 -l -Tutf8 -Z "$f" 2>&1 >/dev/null)
	[ -z "$out" ] || { echo "FAIL: $page: $out" >&2; bad=1; }
	if command -v mandoc >/dev/null; then
		out=$(mandoc -T lint -W error "$f" 2>&1) || { echo "FAIL: $page: $out" >&2; bad=1; }
	fi
done
[ $bad -eq 0 ] && echo "PASS: ${#pages[@]} pages render without warnings"
exit $bad
