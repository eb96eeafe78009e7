#!/bin/sh
# Install what npumemfs needs to build, run and test on Debian 12.
# Runs apt-get as root (through sudo when not root already).
set -eu

packages="build-essential cmake pkg-config git
libfuse3-dev fuse3 libinih-dev libjansson-dev libbsd-dev uthash-dev
libcmocka-dev python3 valgrind prometheus-node-exporter time
libfmt-dev xz-utils libjemalloc-dev libmimalloc-dev rsync prometheus parallel jq
scdoc mandoc man-db chromium"
# scdoc makes the manual pages from contrib/man/*.scd: a small C program
# whose source reads as the text it renders; man-db's groff and mandoc
# check what it makes. Chromium shows the mount's pictures to a test as a
# browser lays them out.

# The tests want only promtool from prometheus, but the package's postinst
# starts the server (port 9090) wherever systemd runs or no policy-rc.d
# forbids it, as in a bare container. Stop it and keep it from starting at
# boot, when this script is what installed it: a server set up before stays.
quiet_prometheus() {
	if [ -d /run/systemd/system ]; then
		$sudo systemctl disable --now prometheus >/dev/null 2>&1 || true
	else
		$sudo /etc/init.d/prometheus stop >/dev/null 2>&1 || true
		$sudo update-rc.d prometheus disable >/dev/null 2>&1 || true
	fi
}

if [ "$(id -u)" -eq 0 ]; then sudo=""; else sudo="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
had_prometheus=$(dpkg-query -W -f='${Status}' prometheus 2>/dev/null || true)
$sudo apt-get update -qq
# shellcheck disable=SC2086
$sudo apt-get install -y -qq --no-install-recommends $packages >/dev/null
case $had_prometheus in
*" installed") ;;
*) quiet_prometheus ;;
esac
echo "npumemfs: build dependencies installed"
