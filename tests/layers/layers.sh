#!/usr/bin/env bash
# The include graph between the folders of src/: every arrow
# "FROM -> TO" (a file in src/FROM includes "TO/..."), and the public
# headers each folder uses. Prints the graph; exits 1 when it differs from
# the layering the project promises:
#   fs -> report, fs -> alloc, fs -> workload, workload -> alloc,
#   report -> alloc, and every folder -> base; tools use anything;
#   npusim.h only in sim, tools and workload (simulated kernel work);
#   alloc, fs, report, workload reach the device through <acl/...> only.
#     usage: layers.sh [SRC_DIR]
set -u
src=${1:-$(dirname "$0")/../../src}
cd "$src" || exit 2

arrows=$(grep -HoE '^#include "[a-z_]+/[^"]+"' */*.[ch] |
	sed -E 's|^([a-z_]+)/[^:]*:#include "([a-z_]+)/.*|\1 -> \2|' | sort -u)
npusim=$(grep -lE '^#include <npumemfs/npusim.h>' */*.[ch] |
	cut -d/ -f1 | sort -u | sed 's/$/ -> npusim.h/')
echo "$arrows"
echo "$npusim"

allowed='^(fs -> (report|alloc|workload|base)|workload -> (alloc|base)|report -> (alloc|base)|alloc -> base|tools -> [a-z_]+|(sim|tools|workload) -> npusim\.h)$'
bad=$(printf '%s\n%s\n' "$arrows" "$npusim" | grep -v '^$' | grep -vE "$allowed")
if [ -n "$bad" ]; then
	echo "FAIL: arrows against the layering:" >&2
	echo "$bad" >&2
	exit 1
fi
# A header the layers share lives in its folder, not in include/.
extra=$(ls ../include/npumemfs | grep -vxE 'npusim\.h|plugin\.h|block_handle\.h|compat')
if [ -n "$extra" ]; then
	echo "FAIL: include/npumemfs holds more than the plug-in ABI and npusim.h: $extra" >&2
	exit 1
fi
# compat/ only gives torch_npu's include paths to the headers of include/acl:
# each file is a comment and one #include <acl/...>.
notfwd=$(for h in $(find ../include/npumemfs/compat -name '*.h'); do
	awk '/^\/\*/ { c = 1 } c { if (/\*\//) c = 0; next } NF { print }' "$h" |
		grep -qvxE '#include <acl/[a-z_]+\.h>' && echo "$h"
done)
if [ -n "$notfwd" ]; then
	echo "FAIL: include/npumemfs/compat holds more than forwarding headers: $notfwd" >&2
	exit 1
fi
echo "layering ok"
