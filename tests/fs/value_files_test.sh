#!/usr/bin/env bash
# value_files_test.sh CASE - a file holding one value,
# devices/deviceN/memory_fraction: what is written is read back on the
# first line, a refusal is shown below it as last_error, as every writable
# text file shows its own. One behaviour per CASE, each on its own mount.
case_name=$1
. "$(dirname "$0")/lib.sh"
mount_fs

F=$MNT/devices/device0/memory_fraction

case $case_name in
fraction_zero_is_accepted_and_read_back_as_0)
	echo 0.0 >"$F" || fail "0.0 refused"
	expect_eq "$(head -n 1 "$F")" 0 "fraction after writing 0.0"
	;;
fraction_reads_back_as_written)
	echo 0.123456789 >"$F" || fail "0.123456789 refused"
	expect_eq "$(head -n 1 "$F")" 0.123456789 "fraction after writing 0.123456789"
	;;
fraction_above_one_is_refused_and_shown_as_last_error)
	expect_fail "echo 1.5 > '$F'" "Invalid argument"
	expect_eq "$(last_error "$F")" "'1.5' is not a number f with 0 <= f <= 1" "last_error"
	expect_eq "$(head -n 1 "$F")" 1 "fraction after the refusal"
	;;
fraction_first_line_stays_the_value_after_a_refusal)
	echo 0.25 >"$F" || fail "0.25 refused"
	expect_fail "echo 50% > '$F'" "Invalid argument"
	read -r v <"$F"
	expect_eq "$v" 0.25 "first line read with read"
	expect_eq "$(sed -n 2p "$F")" "last_error: '50%' is not a number f with 0 <= f <= 1" \
		"second line"
	;;
read_in_the_writing_shell_sees_the_write)
	echo 0.5 >"$F" || fail "0.5 refused"
	read -r v <"$F"
	expect_eq "$v" 0.5 "read by the shell that wrote"
	;;
fraction_success_clears_last_error)
	expect_fail "echo -1 > '$F'" "Invalid argument"
	echo 1 >"$F" || fail "1 refused"
	expect_eq "$(last_error "$F")" none "last_error after a success"
	;;
every_writable_text_file_shows_last_error)
	# tensors/ and pinned/ hold data, not text: they are left out.
	while read -r f; do
		grep -q '^last_error: ' "$f" || fail "${f#"$MNT"/} shows no last_error"
	done < <(find "$MNT" -type f -perm -u+w -not -path "$MNT/tensors/*" \
		-not -path "$MNT/pinned/*")
	;;
*)
	fail "no case $case_name"
	;;
esac
stop_fs
expect_eq "$STATUS" 0 "exit status after SIGTERM"
