# cli_lib.sh - shared by the command-line tests of this folder: sourced
# after setting case_name and program (the command run tests), it moves
# into a temporary folder removed at exit and defines the helpers below.

tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
cd "$tmp" || exit 1

fail() {
	echo "FAIL ($case_name): $*" >&2
	echo "--- stdout:" >&2; cat out >&2 2>/dev/null
	echo "--- stderr:" >&2; cat err >&2 2>/dev/null
	exit 1
}

# run ARGS...: the exit status in $status, output in out and err.
run() {
	status=0
	"$program" "$@" >out 2>err || status=$?
}

expect_status() {
	[ "$status" = "$1" ] || fail "exit status $status, expected $1"
}
