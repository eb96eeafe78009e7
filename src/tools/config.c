/*
 * config.c - the daemon's ini file.
 *
 * One table of keys, one setter per kind of value. The file is parsed into
 * a copy of the configuration, which replaces the caller's only when every
 * line was good, so a bad file changes nothing.
 *
 * inih reports the line of its own syntax errors but not the line a
 * handler is called for, so lines are counted in our own reader.
 */
#include <errno.h>
#include <limits.h>
#include <stddef.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include <ini.h>

#include "alloc/conf/alloc_conf.h"
#include "config.h"
#include <npumemfs/npusim.h>
#include "base/size_parse.h"

#define MiB (UINT64_C(1) << 20)
#define GiB (UINT64_C(1) << 30)

struct load {
	struct nmfs_config cfg;
	const char *name;      /* the file as the user named it, for messages */
	char dir[PATH_MAX];    /* its folder, for relative paths */
	FILE *f;
	int line;
	int alloc_conf_line;   /* checked once the flavor is known */
	char *err;
	size_t errlen;
	int error;
};

typedef int (*setter)(struct load *ld, void *field, const char *value);

/*
 * The reader refuses lines of more than INI_MAX_LINE - 2 characters, and
 * nmfs_config_format writes each value back as one "key = value" line. A
 * folder or trace path that resolves to more than that would make mnt/config
 * show an ini this loader refuses, so it is refused here instead.
 */
static bool fits_one_line(const char *key, const char *value)
{
	return strlen(key) + 3 + strlen(value) <= INI_MAX_LINE - 2;
}

struct key {
	const char *section;
	const char *name;
	setter set;
	size_t offset;
};

static int fail(struct load *ld, int error, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int fail(struct load *ld, int error, const char *fmt, ...)
{
	char reason[NMFS_CONFIG_ERRLEN];
	va_list ap;

	if (ld->error)
		return 0;
	va_start(ap, fmt);
	vsnprintf(reason, sizeof(reason), fmt, ap);
	va_end(ap);
	snprintf(ld->err, ld->errlen, "%s:%d: %s", ld->name, ld->line, reason);
	ld->error = error;
	return 0;
}

static int parse_u64(const char *s, uint64_t *out)
{
	char *end;

	if (*s < '0' || *s > '9')
		return -EINVAL;
	errno = 0;
	unsigned long long v = strtoull(s, &end, 10);
	if (errno || *end)
		return -EINVAL;
	*out = v;
	return 0;
}

static int parse_bool(const char *s, bool *out)
{
	static const char *const yes[] = { "true", "yes", "on", "1" };
	static const char *const no[] = { "false", "no", "off", "0" };

	for (size_t i = 0; i < sizeof(yes) / sizeof(yes[0]); i++) {
		if (strcasecmp(s, yes[i]) == 0)
			return *out = true, 0;
		if (strcasecmp(s, no[i]) == 0)
			return *out = false, 0;
	}
	return -EINVAL;
}

static int set_count(struct load *ld, void *field, const char *v)
{
	uint64_t n;

	if (parse_u64(v, &n) || n < 1 || n > NPUSIM_MAX_DEVICES)
		return fail(ld, -EINVAL, "count: '%s' is not a number from 1 to %d",
			    v, NPUSIM_MAX_DEVICES);
	*(int *)field = (int)n;
	return 1;
}

static int set_flavor(struct load *ld, void *field, const char *v)
{
	const struct npa_flavor *fl = npa_flavor_find(v);

	if (!fl)
		return fail(ld, -EINVAL, "flavor: '%s' is neither npu nor cuda", v);
	*(const struct npa_flavor **)field = fl;
	return 1;
}

/* A size with a unit that some read in 1000s and others in 1024s is
 * refused naming the spelling to use; true when it was. */
static bool refuse_ambiguous(struct load *ld, const char *v)
{
	char why[160];

	if (!npa_size_ambiguous(v, why, sizeof(why)))
		return false;
	fail(ld, -EINVAL, "'%s': %s", v, why);
	return true;
}

static int set_size(struct load *ld, void *field, const char *v)
{
	uint64_t n;

	if (refuse_ambiguous(ld, v))
		return 0;
	if (npa_parse_size(v, &n) || n == 0)
		return fail(ld, -EINVAL,
			    "'%s' is not a size (bytes, or a number with KiB, MiB, GiB or TiB)", v);
	*(uint64_t *)field = n;
	return 1;
}

static int set_page_size(struct load *ld, void *field, const char *v)
{
	uint64_t n;

	if (refuse_ambiguous(ld, v))
		return 0;
	if (npa_parse_size(v, &n) || n < 4096 || (n & (n - 1)))
		return fail(ld, -EINVAL,
			    "page_size: '%s' is not a power of two of at least 4KiB", v);
	*(uint64_t *)field = n;
	return 1;
}

/* Host physical pages are 2 MiB: less could hold none. */
static int set_host_capacity(struct load *ld, void *field, const char *v)
{
	uint64_t n;

	if (refuse_ambiguous(ld, v))
		return 0;
	if (npa_parse_size(v, &n) || n < 2 * MiB)
		return fail(ld, -EINVAL, "capacity: '%s' is not a size of at least 2MiB", v);
	*(uint64_t *)field = n;
	return 1;
}

static int set_micros(struct load *ld, void *field, const char *v)
{
	uint64_t n;

	if (parse_u64(v, &n) || n > 10 * 1000 * 1000)
		return fail(ld, -EINVAL,
			    "'%s' is not a latency in microseconds (0 to 10000000)", v);
	*(uint64_t *)field = n;
	return 1;
}

/* "process" (each plug-in in a host process of its own) or "none". */
static int set_isolation(struct load *ld, void *field, const char *v)
{
	if (strcmp(v, "process") && strcmp(v, "none"))
		return fail(ld, -EINVAL, "plugin_isolation: '%s' is not process or none", v);
	*(bool *)field = strcmp(v, "none") == 0;
	return 1;
}

/* Milliseconds: "5s", "250ms", or a bare number of seconds. */
static int set_timeout(struct load *ld, void *field, const char *v)
{
	char *end = NULL;
	unsigned long long n;

	errno = 0;
	n = strtoull(v, &end, 10);
	if (errno || end == v || v[0] == '-' || (*end && strcmp(end, "s") && strcmp(end, "ms")))
		return fail(ld, -EINVAL, "plugin_timeout: '%s' is not a time (5s, 250ms)", v);
	if (strcmp(end, "ms"))
		n = n > UINT32_MAX / 1000 ? UINT32_MAX : n * 1000;
	if (n < 10 || n > 3600 * 1000)
		return fail(ld, -EINVAL, "plugin_timeout: '%s' is not between 10ms and 3600s", v);
	*(unsigned *)field = (unsigned)n;
	return 1;
}

static int set_bool(struct load *ld, void *field, const char *v)
{
	if (parse_bool(v, field))
		return fail(ld, -EINVAL, "'%s' is not true or false", v);
	return 1;
}

static int set_alloc_conf(struct load *ld, void *field, const char *v)
{
	if (strlen(v) >= sizeof(ld->cfg.alloc_conf))
		return fail(ld, -EINVAL, "alloc_conf: longer than %zu characters",
			    sizeof(ld->cfg.alloc_conf) - 1);
	strcpy(field, v);
	ld->alloc_conf_line = ld->line;
	return 1;
}

/*
 * A relative folder is taken from the ini file's folder, as `replay` is,
 * so the default ini can allow the build's plug-in folder wherever the
 * source tree is. The stored list is absolute: a plug-in is never looked
 * up relatively.
 */
static int set_plugin_dirs(struct load *ld, void *field, const char *v)
{
	char copy[PATH_MAX], out[PATH_MAX] = "", *save = NULL;
	size_t len = 0;

	if (strlen(v) >= sizeof(copy))
		return fail(ld, -EINVAL, "plugin_dirs: too long");
	if (v[0] == ',' || (*v && v[strlen(v) - 1] == ',') || strstr(v, ",,"))
		return fail(ld, -EINVAL, "plugin_dirs: empty folder name in '%s'", v);
	strcpy(copy, v);
	for (char *dir = strtok_r(copy, ",", &save); dir;
	     dir = strtok_r(NULL, ",", &save)) {
		dir += strspn(dir, " \t");
		int n = snprintf(out + len, sizeof(out) - len, "%s%s%s%s",
				 len ? "," : "", dir[0] == '/' ? "" : ld->dir,
				 dir[0] == '/' ? "" : "/", dir);
		if (n < 0 || (size_t)n >= sizeof(out) - len)
			return fail(ld, -EINVAL, "plugin_dirs: too long");
		len += (size_t)n;
	}
	if (!fits_one_line("plugin_dirs", out))
		return fail(ld, -EINVAL, "plugin_dirs: resolves to '%s', longer than "
			    "an ini line can hold (%d characters)", out,
			    INI_MAX_LINE - 2);
	strcpy(field, out);
	return 1;
}

static int set_replay(struct load *ld, void *field, const char *v)
{
	char path[PATH_MAX];
	int n;

	if (*v == '\0') {
		*(char *)field = '\0';
		return 1;
	}
	if (v[0] == '/')
		n = snprintf(path, sizeof(path), "%s", v);
	else
		n = snprintf(path, sizeof(path), "%s/%s", ld->dir, v);
	if (n < 0 || (size_t)n >= sizeof(path))
		return fail(ld, -EINVAL, "replay: path too long");
	if (access(path, R_OK) != 0)
		return fail(ld, -errno, "replay: cannot read %s: %s", path,
			    strerror(errno));
	if (!realpath(path, field))
		strcpy(field, path);
	if (!fits_one_line("replay", field))
		return fail(ld, -EINVAL, "replay: resolves to '%s', longer than an "
			    "ini line can hold (%d characters)", (char *)field,
			    INI_MAX_LINE - 2);
	return 1;
}

#define KEY(sec, name, field, set) \
	{ sec, name, set, offsetof(struct nmfs_config, field) }

static const struct key keys[] = {
	KEY("device", "count", device_count, set_count),
	KEY("device", "flavor", flavor, set_flavor),
	KEY("device", "capacity", capacity, set_size),
	KEY("device", "page_size", page_size, set_page_size),
	KEY("device", "malloc_latency_us", malloc_latency_us, set_micros),
	KEY("device", "free_latency_us", free_latency_us, set_micros),
	KEY("host", "capacity", host_capacity, set_host_capacity),
	KEY("host", "malloc_latency_us", host_malloc_latency_us, set_micros),
	KEY("host", "free_latency_us", host_free_latency_us, set_micros),
	KEY("allocator", "alloc_conf", alloc_conf, set_alloc_conf),
	KEY("allocator", "plugin_dirs", plugin_dirs, set_plugin_dirs),
	KEY("allocator", "no_memory_caching", no_memory_caching, set_bool),
	KEY("allocator", "plugin_isolation", plugin_in_process, set_isolation),
	KEY("allocator", "plugin_timeout", plugin_timeout_ms, set_timeout),
	KEY("fs", "allow_other", allow_other, set_bool),
	KEY("workload", "replay", replay, set_replay),
	KEY("workload", "loop", loop, set_bool),
};

#define NKEYS (sizeof(keys) / sizeof(keys[0]))

static const char *const sections[] = { "device", "host", "allocator", "fs", "workload" };

static int handler(void *user, const char *section, const char *name,
		   const char *value)
{
	struct load *ld = user;

	if (ld->error)
		return 0;
	for (size_t i = 0; i < NKEYS; i++) {
		if (strcmp(keys[i].section, section) == 0 &&
		    strcmp(keys[i].name, name) == 0)
			return keys[i].set(ld, (char *)&ld->cfg + keys[i].offset,
					   value);
	}
	return fail(ld, -EINVAL, "unknown key '%s' in section [%s]", name, section);
}

static bool known_section(const char *name, size_t len)
{
	for (size_t i = 0; i < sizeof(sections) / sizeof(sections[0]); i++) {
		if (strlen(sections[i]) == len && strncmp(sections[i], name, len) == 0)
			return true;
	}
	return false;
}

/* inih ignores an empty section, so section headers are checked here. */
static void check_section(struct load *ld, const char *line)
{
	while (*line == ' ' || *line == '\t')
		line++;
	if (*line != '[')
		return;
	const char *end = strchr(line, ']');
	if (!end)
		return; /* inih reports the syntax error */
	size_t len = (size_t)(end - line - 1);
	if (!known_section(line + 1, len))
		fail(ld, -EINVAL, "unknown section [%.*s]", (int)len, line + 1);
}

static char *reader(char *str, int num, void *stream)
{
	struct load *ld = stream;

	if (ld->error || !fgets(str, num, ld->f))
		return NULL;
	ld->line++;
	size_t len = strlen(str);
	if (len == (size_t)num - 1 && str[len - 1] != '\n' && !feof(ld->f)) {
		fail(ld, -EINVAL, "line longer than %d characters", num - 2);
		return NULL;
	}
	check_section(ld, str);
	return ld->error ? NULL : str;
}

void nmfs_config_default(struct nmfs_config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->device_count = 1;
	cfg->flavor = &npa_flavor_npu;
	cfg->capacity = 32 * GiB;
	cfg->page_size = 2 * MiB;
	cfg->host_capacity = 64 * GiB;
	cfg->plugin_timeout_ms = 5000;
}

static void set_dir(struct load *ld, const char *path)
{
	char *slash;

	if (!realpath(path, ld->cfg.path))
		snprintf(ld->cfg.path, sizeof(ld->cfg.path), "%s", path);
	snprintf(ld->dir, sizeof(ld->dir), "%s", ld->cfg.path);
	slash = strrchr(ld->dir, '/');
	if (slash == ld->dir)
		slash[1] = '\0';
	else if (slash)
		*slash = '\0';
	else
		strcpy(ld->dir, ".");
}

/* alloc_conf depends on the flavor, which may come later in the file. */
static void check_alloc_conf(struct load *ld)
{
	struct npa_conf conf;
	char why[NPA_CONF_ERRLEN];

	if (ld->error || ld->cfg.alloc_conf[0] == '\0')
		return;
	npa_conf_default(&conf, ld->cfg.flavor);
	if (npa_conf_parse(&conf, ld->cfg.flavor, ld->cfg.alloc_conf,
			   NPA_ORIGIN_INI, why, sizeof(why)) == 0)
		return;
	ld->line = ld->alloc_conf_line;
	fail(ld, -EINVAL, "alloc_conf: %s", why);
}

/* A folder's own ini, if it has one: the file a user naming the folder meant. */
static bool folder_ini(const char *dir, char *ini, size_t len)
{
	size_t n = strlen(dir);
	int w = snprintf(ini, len, "%s%snpumemfs.ini", dir, n && dir[n - 1] == '/' ? "" : "/");

	return w > 0 && (size_t)w < len && access(ini, R_OK) == 0;
}

/*
 * A folder or a device opens, and reads as an empty file: the built-in
 * defaults would run with mnt/config saying they were loaded from it.
 */
static int check_regular(FILE *f, const char *path, char *err, size_t errlen)
{
	struct stat st = { 0 };
	char ini[PATH_MAX];

	if (fstat(fileno(f), &st) == 0 && S_ISREG(st.st_mode))
		return 0;
	if (!S_ISDIR(st.st_mode))
		snprintf(err, errlen, "%s: not a regular file; --config takes an ini file, "
			 "such as the shipped conf/npumemfs.ini", path);
	else if (folder_ini(path, ini, sizeof(ini)))
		snprintf(err, errlen, "%s: a folder, not an ini file; did you mean "
			 "--config %s?", path, ini);
	else
		snprintf(err, errlen, "%s: a folder, not an ini file; --config takes an ini "
			 "file, such as the shipped conf/npumemfs.ini", path);
	return S_ISDIR(st.st_mode) ? -EISDIR : -EINVAL;
}

int nmfs_config_load(struct nmfs_config *cfg, const char *path, char *err,
		     size_t errlen)
{
	struct load ld = { .cfg = *cfg, .name = path, .err = err, .errlen = errlen };

	ld.f = fopen(path, "r");
	if (!ld.f) {
		int e = errno;
		snprintf(err, errlen, "%s: cannot open: %s", path, strerror(e));
		return -e;
	}
	int bad = check_regular(ld.f, path, err, errlen);
	if (bad) {
		fclose(ld.f);
		return bad;
	}
	set_dir(&ld, path);
	int rc = ini_parse_stream(reader, &ld, handler, &ld);
	fclose(ld.f);
	if (rc > 0 && !ld.error) {
		ld.line = rc;
		fail(&ld, -EINVAL, "syntax error (expected [section] or key = value)");
	}
	check_alloc_conf(&ld);
	if (ld.error)
		return ld.error == -ENOENT ? -ENOENT : -EINVAL;
	*cfg = ld.cfg;
	return 0;
}

/* The largest binary unit that divides the size exactly: 32GiB, 2MiB, 4097. */
static int format_size(struct sbuf *out, const char *key, uint64_t n)
{
	static const char *const units[] = { "", "KiB", "MiB", "GiB", "TiB" };
	unsigned u = 0;

	while (u < 4 && n && (n & 1023) == 0) {
		n >>= 10;
		u++;
	}
	return sbuf_printf(out, "%s = %llu%s\n", key, (unsigned long long)n,
			   units[u]);
}

void nmfs_config_env(struct nmfs_config *cfg)
{
	const char *v = getenv("PYTORCH_NO_NPU_MEMORY_CACHING");

	/* OptionsManager::GetBoolTypeOption: its "should be 0 or 1" check
	 * comes after the value is made a bool, so it never fires. */
	if (v != NULL)
		cfg->no_memory_caching = strtol(v, NULL, 10) != 0;
}

int nmfs_config_format(const struct nmfs_config *cfg, struct sbuf *out)
{
	if (cfg->path[0])
		sbuf_printf(out, "# loaded from %s\n", cfg->path);
	sbuf_printf(out, "[device]\ncount = %d\nflavor = %s\n", cfg->device_count,
		    cfg->flavor->name);
	format_size(out, "capacity", cfg->capacity);
	format_size(out, "page_size", cfg->page_size);
	sbuf_printf(out, "malloc_latency_us = %llu\nfree_latency_us = %llu\n",
		    (unsigned long long)cfg->malloc_latency_us,
		    (unsigned long long)cfg->free_latency_us);
	sbuf_puts(out, "\n[host]\n");
	format_size(out, "capacity", cfg->host_capacity);
	sbuf_printf(out, "malloc_latency_us = %llu\nfree_latency_us = %llu\n",
		    (unsigned long long)cfg->host_malloc_latency_us,
		    (unsigned long long)cfg->host_free_latency_us);
	sbuf_printf(out, "\n[allocator]\nalloc_conf = %s\nplugin_dirs = %s\n"
		    "no_memory_caching = %s\nplugin_isolation = %s\nplugin_timeout = %ums\n",
		    cfg->alloc_conf, cfg->plugin_dirs, cfg->no_memory_caching ? "true" : "false",
		    cfg->plugin_in_process ? "none" : "process", cfg->plugin_timeout_ms);
	sbuf_printf(out, "\n[fs]\nallow_other = %s\n",
		    cfg->allow_other ? "true" : "false");
	sbuf_printf(out, "\n[workload]\nreplay = %s\nloop = %s\n", cfg->replay,
		    cfg->loop ? "true" : "false");
	return out->error;
}
