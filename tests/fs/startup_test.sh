#!/usr/bin/env bash
# startup_test.sh CASE - npumemfs refusing a bad command line or ini before
# anything starts: one message on stderr naming the argument and the fix,
# exit status 1, nothing mounted, no daemon left. One behaviour per CASE.
# Refusals need no FUSE; what these options accept is mounted by
# fs_size_with_one_space.sh and fs_help_fuse_options.sh.
set -u

case_name=$1
NPUMEMFS=${NPUMEMFS:?NPUMEMFS must name the npumemfs binary}
tmp=$(mktemp -d /tmp/npumemfs-startup.XXXXXX) || exit 1
cd "$tmp" || exit 1
mkdir mnt
# A log file of a background daemon lands here, not in the user's home.
export XDG_STATE_HOME=$tmp/state

mounted_here() { grep -q " $tmp/" /proc/self/mountinfo; }

cleanup() {
	local m
	for m in $(awk -v t="$tmp/" 'index($5, t) == 1 { print $5 }' /proc/self/mountinfo); do
		fusermount3 -u -z "$m" 2>/dev/null
	done
	cd / && rm -rf "$tmp"
}
trap cleanup EXIT

fail() {
	echo "FAIL ($case_name): $*" >&2
	echo "--- stderr:" >&2
	cat err >&2 2>/dev/null
	exit 1
}

# run ARGS...: npumemfs in the foreground, stopped after 10 s if it mounted;
# the exit status in $status, stdout in out, stderr in err.
run() {
	status=0
	timeout 10 "$NPUMEMFS" "$@" >out 2>err || status=$?
}

# The refusal every case expects: status 1, exactly this one line on stderr,
# nothing mounted under the test's folder.
expect_refused() { # message
	[ "$status" = 1 ] || fail "exit status $status, expected 1"
	[ "$(cat err)" = "$1" ] || fail "stderr is not: $1"
	! mounted_here || fail "something was mounted"
}

case $case_name in
mount_point_that_is_a_file_is_refused)
	touch afile
	run -f ./afile
	expect_refused "npumemfs: ./afile is not a folder: mount on a folder (mkdir DIR; npumemfs DIR)"
	;;
mount_point_that_does_not_exist_is_refused)
	run -f ./absent
	expect_refused "npumemfs: ./absent does not exist: create the folder first (mkdir -p ./absent)"
	;;
config_that_is_a_folder_is_refused)
	mkdir conf
	printf '[device]\ncount = 2\n' >conf/npumemfs.ini
	run --config conf -f mnt
	expect_refused "npumemfs: conf: a folder, not an ini file; did you mean --config conf/npumemfs.ini?"
	;;
config_that_is_not_a_regular_file_is_refused)
	run --config /dev/null -f mnt
	expect_refused "npumemfs: /dev/null: not a regular file; --config takes an ini file, such as the shipped conf/npumemfs.ini"
	;;
ambiguous_size_unit_is_refused)
	for spelling in 32GB:32GiB:GB:3 32G:32GiB:G:3 32gb:32GiB:gb:3 32TB:32TiB:TB:4 \
		'512 k:512KiB:k:1'; do
		IFS=: read -r written iec unit power <<<"$spelling"
		printf '[device]\ncapacity = %s\n' "$written" >a.ini
		run --config a.ini -f mnt
		expect_refused "npumemfs: a.ini:2: '$written': use $iec (binary) or bytes; npumemfs does not guess whether $unit means 1000^$power or 1024^$power"
	done
	;;
misspelt_long_option_is_refused_with_suggestion)
	# As typed, in the background: refused before a log file or a fork.
	run --confg conf/npumemfs.ini mnt
	expect_refused "npumemfs: unknown option --confg; did you mean --config?"
	[ ! -e state ] || fail "a log folder was made"
	;;
unknown_option_is_refused_before_start)
	run --bogus -f mnt
	expect_refused "npumemfs: unknown option --bogus (see npumemfs --help)"
	;;
unknown_short_option_is_refused_before_start)
	run -x -f mnt
	expect_refused "npumemfs: unknown option -x (see npumemfs --help)"
	;;
bad_fuse_option_is_refused_before_start)
	run -o bogus -f mnt
	[ "$status" = 1 ] || fail "exit status $status, expected 1"
	[ "$(wc -l <err)" = 1 ] || fail "more than one line on stderr"
	grep -q "bogus" err || fail "the message does not name -o bogus"
	! mounted_here || fail "something was mounted"
	;;
fuse_modules_option_is_refused)
	run -o modules=subdir,subdir=/ctl -f mnt
	expect_refused "npumemfs: -o modules=subdir: libfuse's stacked modules change the paths npumemfs serves; drop the option (see npumemfs --help)"
	;;
help_lists_every_option)
	run --help
	[ "$status" = 0 ] || fail "exit status $status"
	for opt in --config --log -f -d -s '-o allow_other' '-o auto_unmount' \
		'-o max_threads' '-o max_idle_threads' '-o clone_fd' --debug --help --version; do
		grep -qE -- "^ +(-[a-zA-Z], )?$opt( |,|=|\$)" out || fail "--help does not list $opt"
	done
	;;
help_lists_only_working_fuse_options)
	# fs_help_fuse_options mounts with each -o option --help lists.
	run --help
	[ "$status" = 0 ] || fail "exit status $status"
	for opt in modules subdir iconv kernel_cache attr_timeout entry_timeout; do
		! grep -qE -- "^ +-o $opt" out || fail "--help offers -o $opt"
	done
	;;
*)
	fail "no such case"
	;;
esac
exit 0
