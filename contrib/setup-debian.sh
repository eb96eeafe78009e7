#!/bin/sh
# Install what npumemfs needs to build, run and test on Debian 12.
# Runs apt-get as root (through sudo when not root already).
set -eu

packages="build-essential cmake pkg-config git
libfuse3-dev fuse3 libinih-dev libjansson-dev libbsd-dev uthash-dev
libcmocka-dev python3 valgrind prometheus-node-exporter time
libfmt-dev xz-utils libjemalloc-dev libmimalloc-dev rsync"

if [ "$(id -u)" -eq 0 ]; then sudo=""; else sudo="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
# shellcheck disable=SC2086
$sudo apt-get install -y -qq --no-install-recommends $packages >/dev/null
echo "npumemfs: build dependencies installed"
