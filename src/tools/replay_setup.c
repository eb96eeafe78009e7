/*
 * replay_setup.c - the offline replay programs' common setup
 * (replay_setup.h).
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <npumemfs/npusim.h>

#include "alloc/acl/block_handle.h"
#include "alloc/plugin/plugin_host.h"
#include "base/size_parse.h"
#include "replay_setup.h"

/* Append DIR, made absolute (the loader compares canonical paths), to
 * the comma-separated `dirs`: 0, or -errno with the reason in err. */
static int add_plugin_dir(char *dirs, size_t size, const char *dir, char *err, size_t errlen)
{
	char abs[PATH_MAX];
	size_t len = strlen(dirs);

	if (realpath(dir, abs) == NULL) {
		snprintf(err, errlen, "--plugin-dir %s: %s", dir, strerror(errno));
		return -errno;
	}
	if (len + 1 + strlen(abs) + 1 > size) {
		snprintf(err, errlen, "--plugin-dir: too many folders");
		return -ENAMETOOLONG;
	}
	snprintf(dirs + len, size - len, "%s%s", len ? "," : "", abs);
	return 0;
}

static int parse_devices(const char *s, int *out)
{
	char *end;
	long v;

	if (*s < '0' || *s > '9')
		return -EINVAL;
	v = strtol(s, &end, 10);
	if (*end || v < 1 || v > NPUSIM_MAX_DEVICES)
		return -EINVAL;
	*out = (int)v;
	return 0;
}

int replay_setup_option(struct replay_setup *s, int c, const char *arg, char *err,
			size_t errlen)
{
	switch (c) {
	case 'c': s->config = arg; return 0;
	case 'f':
		if (npa_flavor_find(arg) == NULL) {
			snprintf(err, errlen, "unknown flavor '%s' (npu or cuda)", arg);
			return -EINVAL;
		}
		s->flavor = arg;
		return 0;
	case 'C':
		if (npa_parse_size(arg, &s->capacity) != 0 || s->capacity == 0) {
			snprintf(err, errlen, "bad device capacity '%s'", arg);
			return -EINVAL;
		}
		return 0;
	case 'd':
		if (parse_devices(arg, &s->devices) != 0) {
			snprintf(err, errlen, "bad device count '%s' (1..%d)", arg, NPUSIM_MAX_DEVICES);
			return -EINVAL;
		}
		return 0;
	case 'P': return add_plugin_dir(s->plugin_dirs, sizeof(s->plugin_dirs), arg, err, errlen);
	default: return 1;
	}
}

int replay_setup_config(const struct replay_setup *s, int trace_max_device,
			struct nmfs_config *cfg, char *err, size_t errlen)
{
	int rc;

	nmfs_config_default(cfg);
	if (s->config && (rc = nmfs_config_load(cfg, s->config, err, errlen)) != 0)
		return rc;
	nmfs_config_env(cfg);
	if (s->flavor)
		cfg->flavor = npa_flavor_find(s->flavor);
	if (s->capacity)
		cfg->capacity = s->capacity;
	if (s->devices)
		cfg->device_count = s->devices;
	else if (!s->config && trace_max_device + 1 > cfg->device_count)
		cfg->device_count = trace_max_device + 1;
	if (s->plugin_dirs[0])
		snprintf(cfg->plugin_dirs, sizeof(cfg->plugin_dirs), "%s", s->plugin_dirs);
	return 0;
}

int replay_setup_conf(const struct nmfs_config *cfg, const char *alloc_conf,
		      struct npa_conf *out, char *err, size_t errlen)
{
	int rc = 0;

	npa_conf_default(out, cfg->flavor);
	if (cfg->alloc_conf[0])
		rc = npa_conf_parse(out, cfg->flavor, cfg->alloc_conf, NPA_ORIGIN_INI, err,
				    errlen);
	if (rc == 0 && alloc_conf)
		rc = npa_conf_parse(out, cfg->flavor, alloc_conf, NPA_ORIGIN_CLI, err, errlen);
	return rc;
}

int replay_setup_switch(const struct nmfs_config *cfg, struct npa *caching,
			const char *spec, struct sw **out, char *err, size_t errlen)
{
	char host[PATH_MAX];
	struct sw_options opt = {
		.caching = caching,
		.device_count = cfg->device_count,
		.plugin_dirs = cfg->plugin_dirs,
		.plugin_host = cfg->plugin_in_process ? NULL : host,
		.plugin_timeout_ms = cfg->plugin_timeout_ms,
		.plugin_blocks = &npa_block_handle_api,
		.timeout_fails_replay = true,
		.owner = getuid(),
	};
	int rc;

	*out = NULL;
	if (!cfg->plugin_in_process && (rc = plugin_host_default_path(host, sizeof(host))) != 0) {
		snprintf(err, errlen, "cannot find the plug-in host program: %s", strerror(-rc));
		return rc;
	}
	if ((rc = sw_create(&opt, out)) != 0) {
		snprintf(err, errlen, "cannot create the allocator switch: %s", strerror(-rc));
		return rc;
	}
	/* Before the load: an init hook may already take block handles. */
	npa_block_handles_bind(*out);
	rc = sw_set_plugin(*out, spec, err, errlen);
	/* A fault is the plug-in's code failing, and a host that could not
	 * start (-EIO) or memory out, the machine's; anything else, the spec
	 * refused. */
	return rc == 0 || rc == -EFAULT || rc == -EIO || rc == -ENOMEM ? rc : -EINVAL;
}
