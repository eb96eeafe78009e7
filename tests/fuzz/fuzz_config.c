/*
 * fuzz_config.c - nmfs_config_load over arbitrary ini files.
 *
 * The loader takes a path, so each input is written to a memfd and loaded
 * as /proc/self/fd/N. A refused file must leave the configuration byte for
 * byte as it was and say "FILE:LINE: reason"; an accepted one must hold
 * values in their documented ranges, and its own nmfs_config_format text
 * must load to the same configuration.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "alloc/conf/alloc_conf.h"
#include "tools/config.h"
#include <npumemfs/npusim.h>
#include "base/sbuf.h"

static int write_memfd(const void *data, size_t size, char *path, size_t pathlen)
{
	int fd = memfd_create("fuzz_config", 0);

	if (fd < 0)
		return -1;
	if (size && write(fd, data, size) != (ssize_t)size) {
		close(fd);
		return -1;
	}
	snprintf(path, pathlen, "/proc/self/fd/%d", fd);
	return fd;
}

static void check_ranges(const struct nmfs_config *cfg)
{
	struct npa_conf conf;
	char err[NPA_CONF_ERRLEN];

	if (cfg->device_count < 1 || cfg->device_count > NPUSIM_MAX_DEVICES)
		abort();
	if (cfg->capacity == 0 || cfg->page_size < 4096 ||
	    (cfg->page_size & (cfg->page_size - 1)))
		abort();
	if (cfg->malloc_latency_us > 10000000 || cfg->free_latency_us > 10000000)
		abort();
	npa_conf_default(&conf, cfg->flavor);
	if (npa_conf_parse(&conf, cfg->flavor, cfg->alloc_conf, NPA_ORIGIN_INI,
			   err, sizeof(err)) != 0)
		abort();
}

static void show_difference(const struct nmfs_config *a,
			    const struct nmfs_config *b)
{
	struct sbuf ta, tb;

	sbuf_init(&ta);
	sbuf_init(&tb);
	nmfs_config_format(a, &ta);
	nmfs_config_format(b, &tb);
	fprintf(stderr, "loaded:\n%s\nloaded back from its own text:\n%s\n",
		ta.data, tb.data);
	sbuf_release(&ta);
	sbuf_release(&tb);
}

/* Strings compare as strings: a key given twice leaves bytes past the NUL. */
static bool same_settings(const struct nmfs_config *a, const struct nmfs_config *b)
{
	return a->device_count == b->device_count && a->flavor == b->flavor &&
	       a->capacity == b->capacity && a->page_size == b->page_size &&
	       a->malloc_latency_us == b->malloc_latency_us &&
	       a->free_latency_us == b->free_latency_us &&
	       strcmp(a->alloc_conf, b->alloc_conf) == 0 &&
	       strcmp(a->plugin_dirs, b->plugin_dirs) == 0 &&
	       a->allow_other == b->allow_other &&
	       strcmp(a->replay, b->replay) == 0 && a->loop == b->loop;
}

/* Everything but the file's own path must come back. */
static void check_round_trip(const struct nmfs_config *cfg)
{
	struct nmfs_config again;
	struct sbuf text;
	char path[64], err[NMFS_CONFIG_ERRLEN];
	int fd;

	sbuf_init(&text);
	if (nmfs_config_format(cfg, &text) != 0)
		abort();
	fd = write_memfd(text.data, text.len, path, sizeof(path));
	sbuf_release(&text);
	if (fd < 0)
		return;
	nmfs_config_default(&again);
	if (nmfs_config_load(&again, path, err, sizeof(err)) != 0) {
		fprintf(stderr, "formatted configuration refused: %s\n", err);
		abort();
	}
	close(fd);
	if (!same_settings(cfg, &again)) {
		show_difference(cfg, &again);
		abort();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct nmfs_config cfg, before;
	char path[64], err[NMFS_CONFIG_ERRLEN] = "";
	int fd = write_memfd(data, size, path, sizeof(path));
	int rc;

	if (fd < 0)
		return 0;
	nmfs_config_default(&cfg);
	memcpy(&before, &cfg, sizeof(cfg));
	rc = nmfs_config_load(&cfg, path, err, sizeof(err));
	close(fd);
	if (rc == 0) {
		check_ranges(&cfg);
		check_round_trip(&cfg);
	} else if (memcmp(&cfg, &before, sizeof(cfg)) != 0 ||
		   strncmp(err, path, strlen(path)) != 0 ||
		   err[strlen(path)] != ':') {
		abort();
	}
	return 0;
}
