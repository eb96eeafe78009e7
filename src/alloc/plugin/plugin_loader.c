/*
 * plugin_loader.c - from a spec line to resolved plug-in functions.
 *
 * RTLD_NOW so that a missing symbol fails the load, not an allocation
 * later; RTLD_LOCAL so that a plug-in cannot interpose on the daemon's own
 * symbols. The object is loaded through /proc/self/fd from the descriptor
 * plugin_trust.c checked: there is no dlopenat(), and loading by path
 * again would reopen whatever the path names by then.
 */
#include <dlfcn.h>
#include <errno.h>
#include <link.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "plugin_loader.h"

#include "plugin_guard.h"
#include "plugin_host.h"
#include "plugin_trust.h"

/*
 * Every dlopen() and dlclose() of this file runs under this lock. glibc
 * already serialises them with a lock of its own, but that lock lives in
 * ld.so where thread sanitizers cannot see it: a retired plug-in unloaded
 * on an allocating thread frees loader memory that a load on the ctl
 * thread touched last, which TSan reports as a race. Holding a lock it can
 * see orders the two for the tools, and costs nothing a load notices. It
 * is process-wide because the dynamic loader is.
 */
static pthread_mutex_t loader_lock = PTHREAD_MUTEX_INITIALIZER;

/*
 * glibc hands back an already loaded object that answers to the name
 * asked for before it looks at the file, and an object answers to every
 * name it was ever opened under: "/proc/self/fd/7" may mean an earlier
 * plug-in, loaded or re-opened through descriptor 7. So find a descriptor
 * number no loaded object answers to, probing each candidate while it
 * holds /dev/null (which no object can be), then move the file onto it.
 * Returns that descriptor, or -errno.
 */
static int unique_fd(int fd, char *name, size_t len)
{
	int blockers[64], nblockers = 0, rc = -EMFILE;

	while (nblockers < 64) {
		int probe = open("/dev/null", O_RDONLY | O_CLOEXEC);
		if (probe < 0) {
			rc = -errno;
			break;
		}
		snprintf(name, len, "/proc/self/fd/%d", probe);
		void *h = dlopen(name, RTLD_LAZY | RTLD_NOLOAD);
		if (!h) {
			rc = dup3(fd, probe, O_CLOEXEC) < 0 ? -errno : probe;
			if (rc < 0)
				close(probe);
			break;
		}
		dlclose(h);
		blockers[nblockers++] = probe;
	}
	for (int i = 0; i < nblockers; i++)
		close(blockers[i]);
	dlerror();
	return rc;
}

static int load_object(struct plugin *p, int fd, char *err, size_t errlen)
{
	char fdpath[64];
	int named = unique_fd(fd, fdpath, sizeof(fdpath));

	if (named < 0) {
		snprintf(err, errlen, "cannot load %s: %s", p->path, strerror(-named));
		return named;
	}
	p->handle = dlopen(fdpath, RTLD_NOW | RTLD_LOCAL);
	close(named);
	if (!p->handle) {
		const char *why = dlerror();
		snprintf(err, errlen, "%s is not a loadable shared object: %s",
			 p->path, why ? why : "unknown reason");
		return -ENOEXEC;
	}
	return 0;
}

/*
 * `out` is the address of a function pointer, written through void ** as
 * POSIX's dlsym() documentation does.
 */
/*
 * Whether `sym` lies in the plug-in's own object: dlsym() searches its
 * dependencies too, and "malloc free" would otherwise load libc's as a
 * plug-in from any .so that links libc.
 */
static bool defined_in(const struct plugin *p, void *sym)
{
	struct link_map *own = NULL, *found = NULL;
	Dl_info info;

	if (dlinfo(p->handle, RTLD_DI_LINKMAP, &own) != 0)
		return false;
	if (!dladdr1(sym, &info, (void **)&found, RTLD_DL_LINKMAP))
		return false;
	return found == own;
}

static int resolve(struct plugin *p, const char *name, const char *role,
		   void **out, char *err, size_t errlen)
{
	dlerror();
	void *sym = dlsym(p->handle, name);
	if (!sym) {
		snprintf(err, errlen, "%s has no function '%s' (%s)", p->path,
			 name, role);
		return -EINVAL;
	}
	if (!defined_in(p, sym)) {
		snprintf(err, errlen, "%s does not define '%s' (%s): the symbol comes "
			 "from a library it links, not from the plug-in", p->path, name, role);
		return -EINVAL;
	}
	*out = sym;
	return 0;
}

/* The object's base address: what dladdr says of any code in it. */
static void *base_of(const void *code)
{
	Dl_info info;

	return code && dladdr(code, &info) ? info.dli_fbase : NULL;
}

bool plugin_has_code(const struct plugin *p, const void *obj, const void *code)
{
	if (p->host)
		return plugin_host_owns_function(p->host, obj, code);
	return p->base && base_of(code) == p->base;
}

struct guarded {
	const struct plugin *p;
	struct plugin_call *c;
};

static void run_guarded(void *arg)
{
	const struct guarded *g = arg;

	plugin_call_run(g->p, g->c);
}

static int resolve_all(struct plugin *p, char *err, size_t errlen)
{
	int rc = resolve(p, p->alloc_name, "ALLOC_FN", (void **)&p->alloc, err,
			 errlen);
	if (!rc)
		rc = resolve(p, p->free_name, "FREE_FN", (void **)&p->free, err,
			     errlen);
#define PLUGIN_X(name)                                                         \
	if (!rc && p->hook_name[PLUGIN_HOOK_##name][0])                        \
		rc = resolve(p, p->hook_name[PLUGIN_HOOK_##name],              \
			     #name " hook", (void **)&p->hook.name, err, errlen);
	NPUMEMFS_PLUGIN_HOOKS(PLUGIN_X)
#undef PLUGIN_X
	return rc;
}

bool plugin_has_hook(const struct plugin *p, enum plugin_hook hook)
{
	return p->hook_name[hook][0] != '\0';
}

int plugin_exec(const struct plugin *p, struct plugin_call *c, struct plugin_fault *f)
{
	if (p->host)
		return plugin_host_call(p->host, c, f);
	return plugin_guard_call(run_guarded, &(struct guarded){ p, c }, f);
}

/* upstream createCustomAllocator(): init(device_count) once, at creation,
 * like every call into the plug-in; what its device_count holds is the
 * caller's (flavor.h). */
static int run_init(struct plugin *p, int device_count, char *err,
		    size_t errlen)
{
	struct plugin_call c = { .fn = PLUGIN_FN_INIT, .device = device_count };
	struct plugin_fault f;
	char what[160];

	if (!plugin_has_hook(p, PLUGIN_HOOK_init) && !plugin_has_hook(p, PLUGIN_HOOK_init_checked))
		return 0;
	plugin_guard_install();
	if (plugin_exec(p, &c, &f) != 0) {
		plugin_fault_text(&f, what, sizeof(what));
		snprintf(err, errlen, "the init hook of %s faulted: %s; not loaded", p->path, what);
		return -EFAULT;
	}
	if (c.checked) {
		snprintf(err, errlen, "init_checked hook '%s' of %s refused the load (returned %d)",
			 p->hook_name[PLUGIN_HOOK_init_checked], p->path, c.checked);
		return -EINVAL;
	}
	return 0;
}

int plugin_load_spec(struct plugin *p, const struct plugin_spec *spec, int fd, char *err,
		     size_t errlen)
{
	int rc;

	if (!p->path[0])
		snprintf(p->path, sizeof(p->path), "%s", spec->path);
	memcpy(p->alloc_name, spec->alloc_name, sizeof(p->alloc_name));
	memcpy(p->free_name, spec->free_name, sizeof(p->free_name));
	memcpy(p->hook_name, spec->hook_name, sizeof(p->hook_name));
	pthread_mutex_lock(&loader_lock);
	rc = load_object(p, fd, err, errlen);
	pthread_mutex_unlock(&loader_lock);
	if (!rc)
		rc = resolve_all(p, err, errlen);
	if (!rc)
		p->base = base_of((const void *)p->alloc);
	return rc;
}

/* In a host: the host's loader does the loading; this process keeps the
 * names, which say which hooks there are. */
static int load_in_host(struct plugin *p, const struct plugin_spec *spec, const char *line,
			int fd, const struct plugin_isolation *iso, char *err, size_t errlen)
{
	memcpy(p->alloc_name, spec->alloc_name, sizeof(p->alloc_name));
	memcpy(p->free_name, spec->free_name, sizeof(p->free_name));
	memcpy(p->hook_name, spec->hook_name, sizeof(p->hook_name));
	return plugin_host_start(iso, fd, line, &p->host, err, errlen);
}

int plugin_open(const char *line, const char *allowed_dirs, uid_t owner,
		int init_arg, const struct plugin_isolation *iso, struct plugin **out,
		char *err, size_t errlen)
{
	struct plugin_spec spec;
	int rc = plugin_spec_parse(line, &spec, err, errlen);
	if (rc)
		return rc;

	struct plugin *p = calloc(1, sizeof(*p));
	if (!p) {
		snprintf(err, errlen, "out of memory loading a plug-in");
		return -ENOMEM;
	}
	int fd = plugin_trust_open(spec.path, allowed_dirs, owner, p->path, err,
				   errlen);
	if (fd < 0) {
		free(p);
		return fd;
	}
	if (iso && iso->host_path)
		rc = load_in_host(p, &spec, line, fd, iso, err, errlen);
	else
		rc = plugin_load_spec(p, &spec, fd, err, errlen);
	close(fd);
	if (!rc)
		rc = run_init(p, init_arg, err, errlen);
	/* Code that faulted may have left anything half done: it stays
	 * mapped and none of it, destructors included, runs again. */
	if (rc == -EFAULT)
		plugin_abandon(p);
	else if (rc)
		plugin_close(p);
	if (rc)
		return rc;
	p->loaded_at = time(NULL);
	*out = p;
	return 0;
}

void plugin_abandon(struct plugin *p)
{
	plugin_host_stop(p->host);
	free(p);
}

void plugin_close(struct plugin *p)
{
	if (!p)
		return;
	plugin_host_stop(p->host);
	if (p->handle) {
		pthread_mutex_lock(&loader_lock);
		dlclose(p->handle);
		pthread_mutex_unlock(&loader_lock);
	}
	free(p);
}
