/*
 * plugin_call.c - running a plugin_call on resolved functions, and naming
 * what ran and how it ended.
 */
#include <stdio.h>
#include <string.h>

#include "plugin_call.h"
#include "plugin_loader.h"

static void run_init(const struct plugin *p, struct plugin_call *c)
{
	if (p->hook.init)
		p->hook.init(c->device);
	if (p->hook.init_checked)
		c->checked = p->hook.init_checked(c->device);
}

void plugin_call_run(const struct plugin *p, struct plugin_call *c)
{
	switch (c->fn) {
	case PLUGIN_FN_ALLOC:
		c->ret = p->alloc(c->size, c->device, c->stream);
		break;
	case PLUGIN_FN_FREE:
		p->free(c->ptr, c->size, c->device, c->stream);
		break;
	case PLUGIN_FN_RECORD_STREAM:
		p->hook.record_stream(c->ptr, c->stream);
		break;
	case PLUGIN_FN_ERASE_STREAM:
		p->hook.erase_stream(c->ptr, c->stream);
		break;
	case PLUGIN_FN_GET_DEVICE_STATS:
		c->stats = p->hook.get_device_stats((int8_t)c->device);
		break;
	case PLUGIN_FN_RESET_PEAK_STATUS:
		p->hook.reset_peak_status((int8_t)c->device);
		break;
	case PLUGIN_FN_BASE_ALLOC:
		c->ret = p->hook.base_alloc(c->ptr, &c->size_out);
		break;
	case PLUGIN_FN_RESET:
		p->hook.reset(true);
		break;
	case PLUGIN_FN_MEMORY_FRACTION:
		p->hook.memory_fraction(c->fraction, c->device);
		break;
	case PLUGIN_FN_BEGIN_POOL:
		p->hook.begin_allocate_to_pool(c->device, c->pool, c->filter, c->arg);
		break;
	case PLUGIN_FN_END_POOL:
		p->hook.end_allocate_to_pool(c->device, c->pool);
		break;
	case PLUGIN_FN_RELEASE_POOL:
		p->hook.release_pool(c->device, c->pool);
		break;
	case PLUGIN_FN_INIT:
		run_init(p, c);
		break;
	default:
		break;
	}
}

const char *plugin_call_symbol(const struct plugin *p, enum plugin_fn fn)
{
	static const enum plugin_hook hooks[PLUGIN_NFNS] = {
		[PLUGIN_FN_RECORD_STREAM] = PLUGIN_HOOK_record_stream,
		[PLUGIN_FN_ERASE_STREAM] = PLUGIN_HOOK_erase_stream,
		[PLUGIN_FN_GET_DEVICE_STATS] = PLUGIN_HOOK_get_device_stats,
		[PLUGIN_FN_RESET_PEAK_STATUS] = PLUGIN_HOOK_reset_peak_status,
		[PLUGIN_FN_BASE_ALLOC] = PLUGIN_HOOK_base_alloc,
		[PLUGIN_FN_RESET] = PLUGIN_HOOK_reset,
		[PLUGIN_FN_MEMORY_FRACTION] = PLUGIN_HOOK_memory_fraction,
		[PLUGIN_FN_BEGIN_POOL] = PLUGIN_HOOK_begin_allocate_to_pool,
		[PLUGIN_FN_END_POOL] = PLUGIN_HOOK_end_allocate_to_pool,
		[PLUGIN_FN_RELEASE_POOL] = PLUGIN_HOOK_release_pool,
	};

	if (fn == PLUGIN_FN_ALLOC)
		return p->alloc_name;
	if (fn == PLUGIN_FN_FREE)
		return p->free_name;
	if (fn == PLUGIN_FN_THREAD)
		return "a thread of its own (outside any call)";
	if (fn == PLUGIN_FN_DESC)
		return "an ACL allocator function it registered";
	if (fn == PLUGIN_FN_INIT)
		return p->hook_name[PLUGIN_HOOK_init][0] ? p->hook_name[PLUGIN_HOOK_init]
							 : p->hook_name[PLUGIN_HOOK_init_checked];
	return p->hook_name[hooks[fn]];
}

void plugin_fault_text(const struct plugin_fault *f, char *buf, size_t len)
{
	switch (f->end) {
	case PLUGIN_END_SIGNAL:
		if (f->addr_known)
			snprintf(buf, len, "signal %d (%s) at %p", f->sig, strsignal(f->sig),
				 f->addr);
		else
			snprintf(buf, len, "signal %d (%s)", f->sig, strsignal(f->sig));
		break;
	case PLUGIN_END_EXIT:
		snprintf(buf, len, "its host exited with status %d", f->status);
		break;
	case PLUGIN_END_TIMEOUT:
		snprintf(buf, len, "no return within %u ms (plugin_timeout); its host was killed",
			 f->timeout_ms);
		break;
	case PLUGIN_END_LOST:
		snprintf(buf, len, "%s", f->detail);
		break;
	}
}
