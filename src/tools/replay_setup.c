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

#include "alloc/acl/block_handle.h"
#include "alloc/plugin/plugin_host.h"
#include "replay_setup.h"

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

int replay_setup_plugin_dir(char *dirs, size_t size, const char *dir, char *err,
			    size_t errlen)
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

int replay_setup_switch(const struct nmfs_config *cfg, struct npa *caching,
			const char *plugin_dirs, const char *spec, struct sw **out, char *err,
			size_t errlen)
{
	char host[PATH_MAX];
	struct sw_options opt = {
		.caching = caching,
		.device_count = cfg->device_count,
		.plugin_dirs = plugin_dirs,
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
	return sw_set_plugin(*out, spec, err, errlen) != 0 ? -EINVAL : 0;
}
