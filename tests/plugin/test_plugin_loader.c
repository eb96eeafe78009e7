/*
 * test_plugin_loader.c - which plug-ins load, and why the others do not.
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "alloc/plugin/plugin_loader.h"

#include "fixture_host.h"
#include "plugin_tmpdir.h"

static struct plugin_tmpdir tmp;
static char err[PLUGIN_ERRLEN];
static char line[2 * PATH_MAX];

static int setup(void **state)
{
	(void)state;
	err[0] = '\0';
	return plugin_tmpdir_make(&tmp, FIXTURE_SO, "fixture.so");
}

static int teardown(void **state)
{
	(void)state;
	plugin_tmpdir_remove(&tmp);
	return 0;
}

static int open_spec(const char *fmt, const char *path, struct plugin **p)
{
	snprintf(line, sizeof(line), fmt, path);
	return plugin_open(line, tmp.dir, getuid(), 4, NULL, p, err, sizeof(err));
}

static void assert_refused(int rc, int expected_errno, const char *words)
{
	assert_int_equal(rc, -expected_errno);
	if (!strstr(err, words))
		fail_msg("message '%s' does not say '%s'", err, words);
}

static void loads_and_resolves_alloc_free_and_hooks(void **state)
{
	struct plugin *p = NULL;
	(void)state;

	assert_int_equal(open_spec("%s fx_alloc fx_free init=fx_init reset=fx_reset\n",
				   tmp.so, &p), 0);
	assert_non_null(p->alloc);
	assert_non_null(p->free);
	assert_non_null(p->hook.init);
	assert_non_null(p->hook.reset);
	assert_null(p->hook.memory_fraction);
	assert_string_equal(p->path, tmp.so);
	assert_string_equal(p->alloc_name, "fx_alloc");
	assert_string_equal(p->hook_name[PLUGIN_HOOK_reset], "fx_reset");

	void *mem = p->alloc(1000, 0, NULL);
	assert_non_null(mem);
	p->free(mem, 1000, 0, NULL);
	plugin_close(p);
}

static void init_hook_gets_the_device_count(void **state)
{
	struct plugin *p = NULL;
	(void)state;

	assert_int_equal(open_spec("%s fx_alloc fx_free init=fx_init", tmp.so, &p), 0);
	struct fx_counts *(*counts)(void);
	*(void **)&counts = dlsym(p->handle, "fx_counts");
	assert_non_null(counts);
	assert_int_equal(counts()->init, 1);
	assert_int_equal(counts()->init_devices, 4);
	plugin_close(p);
}

static void init_checked_returning_nonzero_refuses_the_load(void **state)
{
	struct plugin *p = NULL;
	(void)state;

	int rc = open_spec("%s fx_alloc fx_free init_checked=fx_init_refuse", tmp.so, &p);
	assert_refused(rc, EINVAL, "refused the load (returned 7)");
	assert_null(p);
}

static void two_files_loaded_at_once_are_two_objects(void **state)
{
	struct plugin *first = NULL, *second = NULL;
	struct plugin_tmpdir other;
	(void)state;

	/* Both are opened, loaded and closed through the same fd number. */
	assert_int_equal(plugin_tmpdir_make(&other, FIXTURE_SO, "fixture.so"), 0);

	assert_int_equal(open_spec("%s fx_alloc fx_free init=fx_init", tmp.so, &first), 0);
	snprintf(line, sizeof(line), "%s fx_alloc fx_free init=fx_init", other.so);
	assert_int_equal(plugin_open(line, other.dir, getuid(), 4, NULL, &second, err,
				     sizeof(err)), 0);
	assert_ptr_not_equal(first->handle, second->handle);
	assert_ptr_not_equal(first->alloc, second->alloc);
	struct fx_counts *(*counts)(void);
	*(void **)&counts = dlsym(second->handle, "fx_counts");
	assert_int_equal(counts()->init, 1);
	plugin_close(second);
	plugin_close(first);
	plugin_tmpdir_remove(&other);
}

static void failed_reload_of_a_loaded_file_does_not_hide_another(void **state)
{
	struct plugin *first = NULL, *again = NULL, *second = NULL;
	struct plugin_tmpdir other;
	(void)state;

	/* The failed attempt opens the first file again under a new fd
	 * name; the second file, opened next, gets that same fd number. */
	assert_int_equal(plugin_tmpdir_make(&other, FIXTURE_SO, "fixture.so"), 0);
	assert_int_equal(open_spec("%s fx_alloc fx_free", tmp.so, &first), 0);
	assert_int_equal(open_spec("%s fx_alloc fx_none", tmp.so, &again), -EINVAL);
	snprintf(line, sizeof(line), "%s fx_alloc fx_free", other.so);
	assert_int_equal(plugin_open(line, other.dir, getuid(), 4, NULL, &second, err,
				     sizeof(err)), 0);
	assert_ptr_not_equal(first->handle, second->handle);
	assert_ptr_not_equal(first->alloc, second->alloc);
	plugin_close(second);
	plugin_close(first);
	plugin_tmpdir_remove(&other);
}

/*
 * The daemon loads plug-ins on the thread that writes ctl/allocator and
 * may unload one on any thread that frees its last block. Here a second
 * thread opens the file already loaded (the loader adds a name to the
 * loaded object) and closes it again; then this thread's close unloads
 * the object and frees that name. The threads hand over through relaxed
 * atomics only, so under TSan nothing but the loader's own locking orders
 * the two: the test fails there if that locking is invisible to it.
 */
struct reopen {
	atomic_int done;
	int rc;
	void *handle;
};

static void *reopen_and_close(void *arg)
{
	struct reopen *r = arg;
	struct plugin *p = NULL;
	char e[PLUGIN_ERRLEN], l[2 * PATH_MAX];

	snprintf(l, sizeof(l), "%s fx_alloc fx_free", tmp.so);
	r->rc = plugin_open(l, tmp.dir, getuid(), 4, NULL, &p, e, sizeof(e));
	if (!r->rc) {
		r->handle = p->handle;
		plugin_close(p);
	}
	atomic_store_explicit(&r->done, 1, memory_order_relaxed);
	return NULL;
}

static void loaded_on_one_thread_unloaded_on_another(void **state)
{
	struct plugin *first = NULL;
	struct reopen r = { .rc = -1 };
	pthread_t t;
	(void)state;

	assert_int_equal(open_spec("%s fx_alloc fx_free", tmp.so, &first), 0);
	void *handle = first->handle;
	assert_int_equal(pthread_create(&t, NULL, reopen_and_close, &r), 0);
	while (!atomic_load_explicit(&r.done, memory_order_relaxed))
		sched_yield();
	plugin_close(first);
	pthread_join(t, NULL);
	assert_int_equal(r.rc, 0);
	assert_ptr_equal(r.handle, handle);
}

static void relative_path_is_refused(void **state)
{
	struct plugin *p = NULL;
	(void)state;

	assert_refused(open_spec("%s fx_alloc fx_free", "lib/fixture.so", &p),
		       EINVAL, "must be absolute");
}

static void unknown_hook_is_refused(void **state)
{
	struct plugin *p = NULL;
	(void)state;

	assert_refused(open_spec("%s fx_alloc fx_free capture_begin=fx_init", tmp.so, &p),
		       EINVAL, "unknown hook 'capture_begin'");
}

static void hook_given_twice_is_refused(void **state)
{
	struct plugin *p = NULL;
	(void)state;

	assert_refused(open_spec("%s fx_alloc fx_free reset=fx_reset reset=fx_reset",
				 tmp.so, &p), EINVAL, "hook 'reset' given twice");
}

static void missing_free_function_is_refused(void **state)
{
	struct plugin *p = NULL;
	(void)state;

	assert_refused(open_spec("%s fx_alloc", tmp.so, &p), EINVAL,
		       "missing FREE_FN");
}

static void missing_file_is_enoent(void **state)
{
	struct plugin *p = NULL;
	char path[PATH_MAX];
	(void)state;

	plugin_tmpdir_path(&tmp, "absent.so", path);
	assert_refused(open_spec("%s fx_alloc fx_free", path, &p), ENOENT,
		       "No such file");
}

static void folder_outside_the_allowed_set_is_refused(void **state)
{
	struct plugin *p = NULL;
	(void)state;

	snprintf(line, sizeof(line), "%s fx_alloc fx_free", tmp.so);
	int rc = plugin_open(line, "/usr/lib, /opt/plugins", getuid(), 1, NULL, &p, err,
			     sizeof(err));
	assert_refused(rc, EACCES, "not in a folder allowed for plug-ins");
}

static void empty_allowed_set_refuses_everything(void **state)
{
	struct plugin *p = NULL;
	(void)state;

	snprintf(line, sizeof(line), "%s fx_alloc fx_free", tmp.so);
	int rc = plugin_open(line, "", getuid(), 1, NULL, &p, err, sizeof(err));
	assert_refused(rc, EACCES, "plugin_dirs = none");
}

static void dot_dot_out_of_the_allowed_folder_is_refused(void **state)
{
	struct plugin *p = NULL;
	char sub[PATH_MAX], path[PATH_MAX + 32];
	(void)state;

	plugin_tmpdir_path(&tmp, "allowed", sub);
	assert_int_equal(mkdir(sub, 0755), 0);
	snprintf(path, sizeof(path), "%s/../fixture.so", sub);
	snprintf(line, sizeof(line), "%s fx_alloc fx_free", path);
	int rc = plugin_open(line, sub, getuid(), 1, NULL, &p, err, sizeof(err));
	assert_refused(rc, EACCES, "not in a folder allowed");
}

static void symlink_is_refused(void **state)
{
	struct plugin *p = NULL;
	char link[PATH_MAX];
	(void)state;

	plugin_tmpdir_path(&tmp, "link.so", link);
	assert_int_equal(symlink(tmp.so, link), 0);
	assert_refused(open_spec("%s fx_alloc fx_free", link, &p), EACCES,
		       "is a symbolic link");
}

static void world_writable_file_is_refused(void **state)
{
	struct plugin *p = NULL;
	(void)state;

	assert_int_equal(chmod(tmp.so, 0757), 0);
	assert_refused(open_spec("%s fx_alloc fx_free", tmp.so, &p), EACCES,
		       "group- or world-writable (mode 0757)");
}

static void file_of_another_user_is_refused(void **state)
{
	struct plugin *p = NULL;
	(void)state;

	if (getuid() != 0)
		skip();
	assert_int_equal(chown(tmp.so, 4321, 4321), 0);
	assert_refused(open_spec("%s fx_alloc fx_free", tmp.so, &p), EACCES,
		       "owned by uid 4321");
}

static void group_writable_folder_is_refused(void **state)
{
	struct plugin *p = NULL;
	char sub[PATH_MAX], path[PATH_MAX + 32];
	(void)state;

	plugin_tmpdir_path(&tmp, "shared", sub);
	assert_int_equal(mkdir(sub, 0755), 0);
	snprintf(path, sizeof(path), "%s/fixture.so", sub);
	assert_int_equal(rename(tmp.so, path), 0);
	assert_int_equal(chmod(sub, 0775), 0);
	assert_refused(open_spec("%s fx_alloc fx_free", path, &p), EACCES,
		       "is group- or world-writable (mode 0775)");
	if (!strstr(err, "folder"))
		fail_msg("message '%s' does not name the folder", err);
}

static void sticky_world_writable_folder_is_accepted(void **state)
{
	struct plugin *p = NULL;
	(void)state;

	/* tmp.dir lives in /tmp, mode 1777. */
	assert_int_equal(open_spec("%s fx_alloc fx_free", tmp.so, &p), 0);
	plugin_close(p);
}

static void directory_is_refused_as_a_folder(void **state)
{
	struct plugin *p = NULL;
	char sub[PATH_MAX];
	(void)state;

	plugin_tmpdir_path(&tmp, "folder.so", sub);
	assert_int_equal(mkdir(sub, 0755), 0);
	assert_refused(open_spec("%s fx_alloc fx_free", sub, &p), EISDIR,
		       "is a folder, not a shared object");
}

/* Opened without blocking: no writer needed for the refusal. */
static void fifo_is_refused_at_once(void **state)
{
	struct plugin *p = NULL;
	char fifo[PATH_MAX];
	(void)state;

	plugin_tmpdir_path(&tmp, "fifo.so", fifo);
	assert_int_equal(mkfifo(fifo, 0644), 0);
	assert_refused(open_spec("%s fx_alloc fx_free", fifo, &p), ENOTSUP,
		       "not a regular file");
}

static void text_file_is_not_a_shared_object(void **state)
{
	struct plugin *p = NULL;
	char path[PATH_MAX];
	(void)state;

	plugin_tmpdir_path(&tmp, "notes.so", path);
	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0644);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, "not an ELF file\n", 16), 16);
	close(fd);
	assert_refused(open_spec("%s fx_alloc fx_free", path, &p), ENOEXEC,
		       "is not a loadable shared object");
}

static void missing_symbol_is_refused(void **state)
{
	struct plugin *p = NULL;
	(void)state;

	assert_refused(open_spec("%s fx_alloc fx_release", tmp.so, &p), EINVAL,
		       "has no function 'fx_release' (FREE_FN)");
}

static void missing_hook_symbol_is_refused(void **state)
{
	struct plugin *p = NULL;
	(void)state;

	assert_refused(open_spec("%s fx_alloc fx_free reset=fx_nothing", tmp.so, &p),
		       EINVAL, "has no function 'fx_nothing' (reset hook)");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
#define T(name) cmocka_unit_test_setup_teardown(name, setup, teardown)
		T(loads_and_resolves_alloc_free_and_hooks),
		T(init_hook_gets_the_device_count),
		T(init_checked_returning_nonzero_refuses_the_load),
		T(two_files_loaded_at_once_are_two_objects),
		T(failed_reload_of_a_loaded_file_does_not_hide_another),
		T(loaded_on_one_thread_unloaded_on_another),
		T(relative_path_is_refused),
		T(unknown_hook_is_refused),
		T(hook_given_twice_is_refused),
		T(missing_free_function_is_refused),
		T(missing_file_is_enoent),
		T(folder_outside_the_allowed_set_is_refused),
		T(empty_allowed_set_refuses_everything),
		T(dot_dot_out_of_the_allowed_folder_is_refused),
		T(symlink_is_refused),
		T(world_writable_file_is_refused),
		T(file_of_another_user_is_refused),
		T(group_writable_folder_is_refused),
		T(sticky_world_writable_folder_is_accepted),
		T(directory_is_refused_as_a_folder),
		T(fifo_is_refused_at_once),
		T(text_file_is_not_a_shared_object),
		T(missing_symbol_is_refused),
		T(missing_hook_symbol_is_refused),
#undef T
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
