#!/usr/bin/env bash
# The include graph between the folders of src/: every arrow
# "FROM -> TO" (a file in src/FROM includes "TO/..."), and the public
# headers each folder uses. Prints the graph; exits 1 when it differs from
# the layering the project promises:
#   fs -> report, fs -> alloc, fs -> workload, workload -> alloc,
#   report -> alloc, and every folder -> base; tools use anything;
#   npusim.h only in sim, tools and workload (simulated kernel work);
#   alloc, fs, report, workload reach the device through <acl/...> only.
# Then the same inside alloc/, a folder per concept in one order, lowest
# first (ALLOC_ORDER; "." is allocator.h, the contract at alloc's top):
# a folder includes only folders before it, no folder includes another's
# *_impl.h, and none holds more than a third of alloc's lines. Given the
# folder of npualloc's objects, calls are held to the same order: a symbol
# a folder's objects use is defined by that folder or one before it.
#     usage: layers.sh [SRC_DIR [NPUALLOC_OBJECT_DIR]]
set -u
export LC_ALL=C # sort and join must agree on the order
src=${1:-$(dirname "$0")/../../src}
objdir=${2:-}
cd "$src" || exit 2
status=0
fail() {
	echo "FAIL: $1" >&2
	status=1
}

sources=$(find . -mindepth 2 -name '*.[ch]' | sed 's|^\./||' | sort)
# A folder is named in quotes: <folder/...> and ../ would hide an arrow.
hidden=$(grep -nE '^#include (<(alloc|base|fs|report|sim|tools|workload)/|"[^"]*\.\./)' $sources)
[ -z "$hidden" ] || fail "includes that hide their folder:
$hidden"
arrows=$(for f in $sources; do
	grep -oE '^#include "[a-z_]+/[^"]+"' "$f" |
		sed -E "s|^#include \"([a-z_]+)/.*|${f%%/*} -> \1|"
done | awk '$1 != $3' | sort -u)
npusim=$(grep -lE '^#include <npumemfs/npusim.h>' $sources |
	cut -d/ -f1 | sort -u | sed 's/$/ -> npusim.h/')
echo "$arrows"
echo "$npusim"

allowed='^(fs -> (report|alloc|workload|base)|workload -> (alloc|base)|report -> (alloc|base)|alloc -> base|tools -> [a-z_]+|(sim|tools|workload) -> npusim\.h)$'
bad=$(printf '%s\n%s\n' "$arrows" "$npusim" | grep -v '^$' | grep -vE "$allowed")
[ -z "$bad" ] || fail "arrows against the layering:
$bad"

# ---- inside alloc/ ----
ALLOC_ORDER="core conf pools . blocks host device caching plugin switch acl graph"
rank() {
	local i=0
	for f in $ALLOC_ORDER; do
		[ "$f" = "$1" ] && { echo $i; return; }
		i=$((i + 1))
	done
	echo -1
}
# Of "FROM -> TO ..." lines, those whose TO does not come before FROM.
against_order() {
	while read -r from _ to _; do
		[ -n "$from" ] || continue
		[ "$(rank "$to")" -lt "$(rank "$from")" ] || echo "$from -> $to"
	done
}
folder_of() { # alloc/F/x.c -> F, alloc/x.h -> .
	local rest=${1#alloc/}
	case $rest in */*) echo "${rest%%/*}" ;; *) echo . ;; esac
}

for d in alloc/*/; do
	d=${d%/}
	[ "$(rank "${d#alloc/}")" -ge 0 ] || fail "alloc/${d#alloc/} is in no place of ALLOC_ORDER"
done
alloc_arrows=$(for f in $(find alloc -name '*.[ch]' | sort); do
	from=$(folder_of "$f")
	grep -oE '^#include "alloc/[^"]+"' "$f" | sed -E 's|^#include "(alloc/[^"]+)"|\1|' |
		while read -r h; do
			to=$(folder_of "$h")
			[ "$to" = "$from" ] || echo "$from -> $to"
		done
done | sort | uniq -c | awk '{ print $2, $3, $4, "(" $1 ")" }')
echo "alloc/:"
echo "$alloc_arrows" | sed 's/^/  /'
up=$(echo "$alloc_arrows" | against_order)
[ -z "$up" ] || fail "includes inside alloc/ that run back up ($ALLOC_ORDER):
$up"

impl=$(grep -rnoE '^#include "alloc/[a-z_]+/[a-z_]+_impl\.h"' --include='*.[ch]' . |
	while IFS=: read -r file _ inc; do
		h=${inc#*\"}
		[ "$(dirname "${file#./}")" = "$(dirname "${h%\"}")" ] || echo "$file: $inc"
	done)
[ -z "$impl" ] || fail "a folder's *_impl.h included from outside it:
$impl"

total=$(find alloc -name '*.[ch]' -exec cat {} + | wc -l)
for d in alloc/*/; do
	n=$(find "$d" -name '*.[ch]' -exec cat {} + | wc -l)
	echo "  ${d%/} $n of $total lines"
	[ $((n * 3)) -le "$total" ] || fail "${d%/} holds more than a third of alloc's lines"
done

# Calls: what each folder's objects take from the others.
if [ -n "$objdir" ]; then
	command -v nm >/dev/null || fail "no nm to read the objects with"
	# Objects of sources that are still there: a build dir keeps a moved file's.
	objs=$(cd "$objdir" && find . -mindepth 2 -name '*.c.o' | sed 's|^\./||' | sort |
		while read -r o; do [ -f "$OLDPWD/alloc/${o%.o}" ] && echo "$o"; done)
	[ -n "$objs" ] || fail "no objects of alloc/ under $objdir"
	defs=$(cd "$objdir" && for o in $objs; do
		nm -g --defined-only "$o" | awk -v f="${o%%/*}" 'NF == 3 { print $3, f }'
	done | sort -u)
	calls=$(cd "$objdir" && for o in $objs; do
		nm -u "$o" | awk -v f="${o%%/*}" '{ print $2, f }'
	done | sort -u | join - <(echo "$defs") | awk '$2 != $3 { print $2, "->", $3 }' |
		sort | uniq -c | awk '{ print $2, $3, $4, "(" $1 " names)" }')
	echo "alloc/ calls:"
	echo "$calls" | sed 's/^/  /'
	upcalls=$(echo "$calls" | against_order)
	[ -z "$upcalls" ] || fail "calls inside alloc/ that run back up:
$upcalls"
fi

# A header the layers share lives in its folder, not in include/.
extra=$(ls ../include/npumemfs | grep -vxE 'npusim\.h|plugin\.h|block_handle\.h|compat')
[ -z "$extra" ] || fail "include/npumemfs holds more than the plug-in ABI and npusim.h: $extra"
# compat/ only gives torch_npu's include paths to the headers of include/acl:
# each file is a comment and one #include <acl/...>.
notfwd=$(for h in $(find ../include/npumemfs/compat -name '*.h'); do
	awk '/^\/\*/ { c = 1 } c { if (/\*\//) c = 0; next } NF { print }' "$h" |
		grep -qvxE '#include <acl/[a-z_]+\.h>' && echo "$h"
done)
[ -z "$notfwd" ] || fail "include/npumemfs/compat holds more than forwarding headers: $notfwd"
[ $status -ne 0 ] || echo "layering ok"
exit $status
