/*
 * fuzz_plugin_serve.c - the daemon's side of a plug-in host's ACL calls,
 * given arbitrary messages by a host that breaks every rule.
 *
 * A host process is the plug-in's, so whatever it writes into its lane
 * reaches ph_serve (its length bounded, as the lane's take() bounds it).
 * Host a, the victim, holds a device block and a pinned host block, both
 * filled with a pattern through its own copies. Host b then sends the
 * input's messages: each is a byte's worth of op, eight arguments
 * (each raw, or an address of a's, of b's last answer, or small) and
 * data. Whatever b sends, a's bytes must read back unchanged and a's
 * blocks must stay a's: a frees them itself at the end. (A host's memory
 * outlives it, so b's is not given back.)
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <acl/acl_rt.h>
#include <npumemfs/npusim.h>

#include "alloc/plugin/plugin_host_impl.h"

#define MiB ((uint64_t)1 << 20)
#define BLOCK (2 * MiB)
#define PINNED 4096

struct input {
	const uint8_t *p;
	size_t left;
};

static uint64_t take_bytes(struct input *in, size_t n)
{
	uint64_t v = 0;

	for (size_t i = 0; i < n && in->left > 0; i++, in->p++, in->left--)
		v |= (uint64_t)*in->p << (8 * i);
	return v;
}

/* op from host h with arguments v (the message's v[0..7]) and data. */
static aclError serve(struct plugin_host *h, struct pw_msg *m, enum pw_acl_op op,
		      const void *data, uint32_t len, const uint64_t v[8])
{
	memset(m, 0, PW_MSG_MAX);
	m->kind = PW_ACL;
	m->op = op;
	memcpy(m->v, v, sizeof(m->v));
	if (len > 0)
		memcpy(m->data, data, len);
	m->len = len;
	ph_serve(h, m);
	return m->rc;
}

/* What a's blocks hold, and where. */
struct victim {
	uint64_t dev, host;
	unsigned char pattern[PINNED];
};

static void victim_up(struct plugin_host *a, struct pw_msg *m, struct victim *v)
{
	for (size_t i = 0; i < sizeof(v->pattern); i++)
		v->pattern[i] = (unsigned char)(i * 131 + 7);
	if (serve(a, m, PW_ACL_Malloc, NULL, 0, (uint64_t[8]){ BLOCK }) != ACL_SUCCESS ||
	    (v->dev = m->v[0]) == 0 ||
	    serve(a, m, PW_ACL_MallocHost, NULL, 0, (uint64_t[8]){ PINNED }) != ACL_SUCCESS ||
	    (v->host = m->v[0]) == 0) {
		fprintf(stderr, "fuzz_plugin_serve: the victim's blocks could not be made\n");
		abort();
	}
	/* Its own copies, host to device at both ends of its block: dst,
	 * its room, src, count, kind, stream, the whole copy's size. */
	for (int end = 0; end < 2; end++) {
		uint64_t dst = v->dev + (end ? BLOCK - PINNED : 0);

		if (serve(a, m, PW_ACL_Memcpy, v->pattern, PINNED,
			  (uint64_t[8]){ dst, PINNED, 0, PINNED, ACL_MEMCPY_HOST_TO_DEVICE, 0,
					 PINNED }) != ACL_SUCCESS) {
			fprintf(stderr, "fuzz_plugin_serve: the victim's copy failed\n");
			abort();
		}
	}
	memcpy((void *)(uintptr_t)v->host, v->pattern, PINNED);
}

static void victim_intact(const struct victim *v)
{
	const char *dev = (const char *)(uintptr_t)v->dev;

	if (memcmp(dev, v->pattern, PINNED) != 0 ||
	    memcmp(dev + BLOCK - PINNED, v->pattern, PINNED) != 0 ||
	    memcmp((const void *)(uintptr_t)v->host, v->pattern, PINNED) != 0) {
		fprintf(stderr, "fuzz_plugin_serve: host b changed host a's bytes\n");
		abort();
	}
}

/* An argument: raw, an address in a's blocks, b's last answer, or small. */
static uint64_t argument(struct input *in, const struct victim *v, uint64_t last)
{
	uint8_t how = (uint8_t)take_bytes(in, 1);
	uint64_t x = take_bytes(in, how & 0x80 ? 8 : 2);

	switch (how & 3) {
	case 0:
		return x;
	case 1:
		return (how & 4 ? v->host : v->dev) + (x % (2 * BLOCK)) - BLOCK / 2;
	case 2:
		return last + (x & 0xfff);
	default:
		return x & 0xffff;
	}
}

/* One message of b's, as its lane would deliver it. */
static void attack(struct plugin_host *b, struct pw_msg *m, struct input *in,
		   const struct victim *v, uint64_t *last)
{
	uint8_t op = (uint8_t)take_bytes(in, 1);
	uint32_t len = (uint32_t)take_bytes(in, 2);

	memset(m, 0, PW_MSG_MAX);
	m->kind = op & 0x80 ? PW_FILTER : PW_ACL;
	m->op = op % (PW_NACL_OPS + 2);
	for (int i = 0; i < 8; i++)
		m->v[i] = argument(in, v, *last);
	/* The lane's take() bounds the length; the data is what follows. */
	if (len > PW_MAX_DATA)
		len = PW_MAX_DATA;
	m->len = len;
	for (uint32_t i = 0; i < len && in->left > 0; i++)
		m->data[i] = (char)take_bytes(in, 1);
	ph_serve(b, m);
	if (m->rc == ACL_SUCCESS && m->v[0] != 0)
		*last = m->v[0];
}

/* a's blocks are still a's to free: b neither freed nor took them. */
static void victim_frees_its_own(struct plugin_host *a, struct pw_msg *m, const struct victim *v)
{
	if (serve(a, m, PW_ACL_Free, NULL, 0, (uint64_t[8]){ v->dev }) != ACL_SUCCESS ||
	    serve(a, m, PW_ACL_FreeHost, NULL, 0, (uint64_t[8]){ v->host }) != ACL_SUCCESS) {
		fprintf(stderr, "fuzz_plugin_serve: host a could not free its own blocks\n");
		abort();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct input in = { data, size };
	struct plugin_host a = { 0 }, b = { 0 };
	struct npusim_config cfg;
	struct pw_msg *m = calloc(1, PW_MSG_MAX);
	struct victim v;
	uint64_t last = 0;

	npusim_config_default(&cfg, 2, 64 * MiB);
	cfg.host.capacity = 64 * MiB;
	if (!m || npusim_init(&cfg) != 0)
		abort();
	aclrtSetDevice(0);
	pthread_mutex_init(&a.lock, NULL);
	pthread_mutex_init(&b.lock, NULL);
	victim_up(&a, m, &v);
	for (int n = 0; in.left > 0 && n < 64; n++) {
		attack(&b, m, &in, &v, &last);
		victim_intact(&v);
	}
	ph_release_all(&b);
	victim_intact(&v);
	victim_frees_its_own(&a, m, &v);
	ph_release_all(&a);
	pthread_mutex_destroy(&a.lock);
	pthread_mutex_destroy(&b.lock);
	npusim_shutdown();
	free(m);
	return 0;
}
