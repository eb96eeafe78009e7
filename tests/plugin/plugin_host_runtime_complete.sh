#!/usr/bin/env bash
# Every ACL function libnpusim exports is one a plug-in in a host finds in
# the host: forwarded to the daemon (an op of plugin_wire.h's PW_ACL_OPS)
# or answered there on purpose (LOCAL below). One the host does not define
# would resolve to the host's own copy of libnpusim, whose simulator never
# started: wrong answers and no error. libnpusim's npusim_* functions are
# not part of this: they drive the simulator for its owner (npusim.h), not
# for a plug-in.
#
# LIBNPUSIM, HOST and WIRE name libnpusim.so, npumem-plugin-host and
# plugin_wire.h.
set -u
for v in LIBNPUSIM HOST WIRE; do
	[ -n "${!v:-}" ] || { echo "FAIL: $v is not set" >&2; exit 1; }
done
command -v nm >/dev/null || { echo "SKIP: no nm"; exit 77; }

# Answered in the host, and why.
LOCAL="
aclrtPeekAtLastError  the calling host thread's own record
aclrtGetLastError     the calling host thread's own record
aclmdlRICaptureBegin  refused: capturing is torch's, not a plug-in's
aclmdlRICaptureGetInfo refused, as above
aclmdlRICaptureEnd    refused, as above
aclmdlRIExecuteAsync  refused, as above
aclmdlRIDestroy       refused, as above
aclmdlRIGetId         refused, as above
"

exported() { nm -D --defined-only "$1" | awk '$2 == "T" { print $3 }' | sort -u; }

sim=$(exported "$LIBNPUSIM" | grep '^acl') || { echo "FAIL: no ACL function in $LIBNPUSIM" >&2; exit 1; }
host=$(exported "$HOST")
ops=$(sed -n '/^#define PW_ACL_OPS/,/^$/p' "$WIRE" | grep -o 'X([A-Za-z0-9]*)' | sed 's/X(\(.*\))/\1/')
local_names=$(awk 'NF { print $1 }' <<<"$LOCAL")
[ -n "$ops" ] || { echo "FAIL: no PW_ACL_OPS in $WIRE" >&2; exit 1; }

bad=0
for f in $sim; do
	op=$(sed -E 's/^(aclrt|aclmdlRI|acl)//' <<<"$f")
	if ! grep -qx "$f" <<<"$host"; then
		echo "FAIL: $f: libnpusim exports it and npumem-plugin-host does not define it" >&2
		bad=1
	elif ! grep -qx "$op" <<<"$ops" && ! grep -qx "$f" <<<"$local_names"; then
		echo "FAIL: $f: the host defines it, but no PW_ACL_OPS op forwards it and LOCAL does not list it" >&2
		bad=1
	fi
done
for f in $local_names; do
	grep -qx "$f" <<<"$sim" || { echo "FAIL: LOCAL lists $f, which libnpusim no longer exports" >&2; bad=1; }
done
[ "$bad" = 0 ] || exit 1
echo "PASS: $(wc -w <<<"$sim") ACL functions, each forwarded or answered in the host"
