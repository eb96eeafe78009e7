#!/usr/bin/env bash
# plugin_isolation = process: a plug-in runs in a host process of its own,
# and whatever it does there - a fault on the daemon's sampling thread, a
# stack overflow, exit(), a thread of its own that crashes later, SIGSEGV
# blocked, fork(), a call that never returns - ends with the plug-in
# retired and logged, the caching allocator current, the mount answering
# throughout and every other tensor's bytes intact.
. "$(dirname "$0")/plugin_lib.sh"
cat >>"$INI" <<INI
plugin_isolation = process
plugin_timeout = 3s
INI
cat >"$WORK/bad.c" <<'C'
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <unistd.h>
#include <acl/acl_rt.h>
#include <npumemfs/plugin.h>

void *ok_alloc(ssize_t size, int device, aclrtStream stream)
{
	void *p = NULL;
	(void)device, (void)stream;
	return aclrtMallocAlign32(&p, (size_t)size, ACL_MEM_MALLOC_HUGE_FIRST) ? NULL : p;
}
void ok_free(void *p, ssize_t size, int device, aclrtStream stream)
{
	(void)size, (void)device, (void)stream;
	aclrtFree(p);
}
struct npumemfs_device_stats segv_gds(int8_t device)
{
	struct npumemfs_device_stats s;
	(void)device;
	memset(&s, 0, sizeof(s));
	*(volatile int *)0 = 1;
	return s;
}
void segv_fraction(double f, int device)
{
	(void)f, (void)device;
	*(volatile int *)0 = 1;
}
static int deep(int n)
{
	volatile char frame[4096];
	frame[0] = (char)n;
	return deep(n + 1) + frame[0];
}
void *overflow_alloc(ssize_t size, int device, aclrtStream stream)
{
	(void)size, (void)device, (void)stream;
	return (void *)(long)deep(0);
}
void *exit_alloc(ssize_t size, int device, aclrtStream stream)
{
	(void)size, (void)device, (void)stream;
	exit(3);
}
void *_exit_alloc(ssize_t size, int device, aclrtStream stream)
{
	(void)size, (void)device, (void)stream;
	_exit(4);
}
static void *crash_later(void *arg)
{
	(void)arg;
	sleep(1);
	*(volatile int *)0 = 1;
	return NULL;
}
void *thread_alloc(ssize_t size, int device, aclrtStream stream)
{
	pthread_t t;
	pthread_create(&t, NULL, crash_later, NULL);
	return ok_alloc(size, device, stream);
}
void *blocked_alloc(ssize_t size, int device, aclrtStream stream)
{
	sigset_t s;
	(void)size, (void)device, (void)stream;
	sigemptyset(&s);
	sigaddset(&s, SIGSEGV);
	pthread_sigmask(SIG_BLOCK, &s, NULL);
	*(volatile int *)0 = 1;
	return NULL;
}
void *fork_alloc(ssize_t size, int device, aclrtStream stream)
{
	fork();
	return ok_alloc(size, device, stream);
}
static void *spin(void *arg)
{
	(void)arg;
	for (;;)
		;
	return NULL;
}
void *spin_thread_alloc(ssize_t size, int device, aclrtStream stream)
{
	pthread_t t;
	pthread_create(&t, NULL, spin, NULL);
	return ok_alloc(size, device, stream);
}
void *fork_sleeper_alloc(ssize_t size, int device, aclrtStream stream)
{
	if (fork() == 0)
		for (;;)
			pause();
	return ok_alloc(size, device, stream);
}
void *loop_alloc(ssize_t size, int device, aclrtStream stream)
{
	(void)size, (void)device, (void)stream;
	for (;;)
		pause();
}
void loop_init(int n)
{
	(void)n;
	for (;;)
		pause();
}
C
"${CC:-cc}" -shared -fPIC -I"$SRC_DIR/include" "$WORK/bad.c" -o "$PRIVATE/bad.so" -lpthread ||
	fail "building the plug-in"
chmod 0755 "$PRIVATE/bad.so"
BAD=$PRIVATE/bad.so
mount_fs

# Another tensor's bytes, made by the caching allocator, checked after each case.
head -c 65536 /dev/urandom >"$WORK/keep"
cp "$WORK/keep" "$MNT/tensors/device1/keep"

alive() {
	timeout 3 cat "$MNT/stats/device0" >/dev/null || fail "$1: the mount does not answer"
	kill -0 "$PID" 2>/dev/null || fail "$1: the daemon died"
	cmp -s "$WORK/keep" "$MNT/tensors/device1/keep" || fail "$1: another tensor's bytes changed"
}

# The plug-in is retired: logged with what happened, caching current.
retired() {
	local what=$1 how=$2
	wait_current caching
	expect_eq "$(current)" caching "$what: current allocator"
	grep -q "faulted in .*$how" "$MNT/log" ||
		fail "$what: the log does not say '$how': $(tail -3 "$MNT/log")"
	alive "$what"
}

# 1. A hook that faults on the daemon's own sampling thread, nothing read.
use "$BAD ok_alloc ok_free get_device_stats=segv_gds"
sleep 2
retired "get_device_stats fault" "segv_gds: signal 11"

# 1b. A faulting memory_fraction hook fails the write and retires.
use "$BAD ok_alloc ok_free memory_fraction=segv_fraction"
expect_fail "echo 0.5 > '$MNT/devices/device0/memory_fraction'" "Bad address"
retired "memory_fraction fault" "segv_fraction: signal 11"

# 2. Stack overflow in alloc.
use "$BAD overflow_alloc ok_free"
expect_fail "truncate -s 4096 '$MNT/tensors/device0/a'" "Bad address"
retired "stack overflow" "overflow_alloc: signal 11"

# 3. exit() and _exit() in alloc.
use "$BAD exit_alloc ok_free"
expect_fail "truncate -s 4096 '$MNT/tensors/device0/a'" "Bad address"
retired "exit" "exit_alloc: its host exited with status 3"
use "$BAD _exit_alloc ok_free"
expect_fail "truncate -s 4096 '$MNT/tensors/device0/a'" "Bad address"
retired "_exit" "_exit_alloc: its host exited with status 4"

# 4. A thread of the plug-in's own that faults a second later.
use "$BAD thread_alloc ok_free"
truncate -s 4096 "$MNT/tensors/device0/t" || fail "thread_alloc's own allocation"
sleep 2
retired "a thread of its own" "a thread of its own (outside any call): signal 11"
rm -f "$MNT/tensors/device0/t"

# 5. SIGSEGV blocked before the fault.
use "$BAD blocked_alloc ok_free"
expect_fail "truncate -s 4096 '$MNT/tensors/device0/a'" "Bad address"
retired "SIGSEGV blocked" "blocked_alloc: signal 11"

# 6. fork in alloc, the child returning: the next swap does not hang.
use "$BAD fork_alloc ok_free"
truncate -s 4096 "$MNT/tensors/device0/f" || fail "fork_alloc's allocation"
timeout 5 bash -c "echo caching > '$CTL'" || fail "the swap after a fork hangs"
rm -f "$MNT/tensors/device0/f"
alive "fork"

# 4b. A thread still running the plug-in's code when it is unloaded.
use "$BAD spin_thread_alloc ok_free"
truncate -s 4096 "$MNT/tensors/device0/s" || fail "spin_thread_alloc's allocation"
rm "$MNT/tensors/device0/s"
echo caching >"$CTL"
sleep 0.3
alive "unload under a running thread"
[ -z "$(pgrep -P "$PID")" ] || fail "the host outlived its unload: $(pgrep -a -P "$PID")"

# 6b. A child the plug-in forked dies with its host.
use "$BAD fork_sleeper_alloc ok_free"
truncate -s 4096 "$MNT/tensors/device0/c" || fail "fork_sleeper_alloc's allocation"
host=$(pgrep -P "$PID")
[ -n "$host" ] && [ "$(pgrep -g "$host" | wc -l)" -ge 2 ] ||
	fail "no forked child in the host's group: $(pgrep -a -g "${host:-0}")"
rm "$MNT/tensors/device0/c"
echo caching >"$CTL"
sleep 0.3
[ -z "$(pgrep -r R,S,D,T -g "$host")" ] || fail "the plug-in's child outlived its host: $(pgrep -a -g "$host")"
alive "forked child"

# 7. A call that never returns: ENOMEM within the bound, and nothing else
# held by it: the listing and another tensor answer at once.
use "$BAD loop_alloc ok_free"
( truncate -s 4096 "$MNT/tensors/device0/l" 2>"$WORK/loop.err"; echo $? >"$WORK/loop.rc" ) &
LOOP=$!
sleep 0.3
start=$(date +%s%N)
timeout 3 ls "$MNT/tensors/device0" >/dev/null || fail "ls is held by the looping plug-in"
timeout 3 stat "$MNT/tensors/device1/keep" >/dev/null || fail "stat is held by the looping plug-in"
held=$(( ($(date +%s%N) - start) / 1000000 ))
[ "$held" -lt 300 ] || fail "other files waited ${held} ms for the looping plug-in"
echo "ls and stat during a looping alloc: ${held} ms (plugin_timeout 3000 ms)"
wait "$LOOP"
expect_eq "$(cat "$WORK/loop.rc")" 1 "truncate under a looping alloc"
expect_contains "$(cat "$WORK/loop.err")" "Cannot allocate memory" "truncate's error"
retired "loop" "loop_alloc: no return within 3000 ms"

# 7b. An init that never returns: the load fails within the bound.
start=$(date +%s)
expect_fail "echo '$BAD ok_alloc ok_free init=loop_init' > '$CTL'" "error"
[ $(( $(date +%s) - start )) -lt 8 ] || fail "the load waited past the bound"
grep last_error "$CTL" | grep -q "no return within 3000 ms" ||
	fail "last_error does not say why: $(grep last_error "$CTL")"
alive "init loop"

# Nothing the hosts started outlives them.
sleep 0.5
pgrep -P "$PID" >/dev/null && fail "a plug-in host is still running: $(pgrep -a -P "$PID")"
echo "ok: every case retired its plug-in, the mount answered and the bytes kept"
