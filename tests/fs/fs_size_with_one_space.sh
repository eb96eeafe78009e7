#!/usr/bin/env bash
# Sizes written as the README writes them, "64 GiB" with one space, load,
# and mnt/config shows them in the usual spelling.
INI_TEXT='[device]
count = 1
capacity = 4 GiB
page_size = 2 MiB

[host]
capacity = 64 GiB'
. "$(dirname "$0")/lib.sh"

mount_fs
expect_eq "$(grep -c '^capacity = 4GiB$' "$MNT/config")" 1 "device capacity in config"
grep -qx 'page_size = 2MiB' "$MNT/config" || fail "page_size: $(grep page_size "$MNT/config")"
grep -qx 'capacity = 64GiB' "$MNT/config" || fail "host capacity: $(cat "$MNT/config")"
stop_fs
expect_eq "$STATUS" 0 "exit status after SIGTERM"
exit 0
