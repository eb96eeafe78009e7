/*
 * test_pool_registry.c - the private-pool registry on its own: uses,
 * scopes and routing, with a pool that holds nothing but a count of how
 * many were destroyed. The device's rules (refuse a freeable pool, newest
 * scope first) and the host's (take it back, oldest first) are both run.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>

#include "alloc/pools/pool_registry.h"

static int destroyed;
static bool out_of_memory;

static struct private_pool *make(void)
{
	return out_of_memory ? NULL : calloc(1, sizeof(struct private_pool));
}

static void destroy(struct private_pool *p)
{
	destroyed++;
	free(p);
}

static const struct pool_registry_ops device_rules = {
	.create = make,
	.destroy = destroy,
	.newest_first = true,
};

static const struct pool_registry_ops host_rules = {
	.create = make,
	.destroy = destroy,
	.revives_freeable = true,
};

#define ID(n) ((struct npa_pool_id){ 0, (n) })

/* Streams are handles; any distinct pointers do. */
static char handle[4];
#define S(n) ((aclrtStream)&handle[n])

static bool any_stream(aclrtStream stream, void *arg)
{
	(void)stream;
	(void)arg;
	return true;
}

static bool this_stream(aclrtStream stream, void *arg)
{
	return stream == arg;
}

static int setup_device(void **state)
{
	struct pool_registry *reg = malloc(sizeof(*reg));

	pool_registry_init(reg, &device_rules);
	destroyed = 0;
	out_of_memory = false;
	*state = reg;
	return 0;
}

static int setup_host(void **state)
{
	int rc = setup_device(state);

	pool_registry_init(*state, &host_rules);
	return rc;
}

static int teardown(void **state)
{
	pool_registry_fini(*state);
	free(*state);
	return 0;
}

static void a_new_pool_has_one_use(void **state)
{
	struct pool_registry *reg = *state;

	assert_int_equal(pool_registry_incref(reg, ID(1)), 0);
	assert_int_equal(pool_registry_find(reg, ID(1))->use_count, 1);
	assert_false(pool_registry_find(reg, ID(1))->freeable);
}

static void incref_of_a_known_pool_adds_a_use(void **state)
{
	struct pool_registry *reg = *state;

	pool_registry_incref(reg, ID(1));
	assert_int_equal(pool_registry_incref(reg, ID(1)), 0);
	assert_int_equal(pool_registry_find(reg, ID(1))->use_count, 2);
}

static void incref_without_memory_is_enomem(void **state)
{
	struct pool_registry *reg = *state;

	out_of_memory = true;
	assert_int_equal(pool_registry_incref(reg, ID(1)), -ENOMEM);
	assert_null(pool_registry_find(reg, ID(1)));
}

static void releasing_the_last_use_makes_the_pool_freeable(void **state)
{
	struct pool_registry *reg = *state;

	pool_registry_incref(reg, ID(1));
	assert_int_equal(pool_registry_release(reg, ID(1)), 0);
	assert_int_equal(pool_registry_find(reg, ID(1))->use_count, 0);
	assert_true(pool_registry_find(reg, ID(1))->freeable);
	assert_int_equal(destroyed, 0);
}

static void release_of_an_unknown_pool_is_enoent(void **state)
{
	assert_int_equal(pool_registry_release(*state, ID(1)), -ENOENT);
}

static void release_of_a_freeable_pool_is_enoent(void **state)
{
	struct pool_registry *reg = *state;

	pool_registry_incref(reg, ID(1));
	pool_registry_release(reg, ID(1));
	assert_int_equal(pool_registry_release(reg, ID(1)), -ENOENT);
}

static void device_rules_refuse_a_freeable_pool(void **state)
{
	struct pool_registry *reg = *state;

	pool_registry_incref(reg, ID(1));
	pool_registry_release(reg, ID(1));
	assert_int_equal(pool_registry_incref(reg, ID(1)), -EINVAL);
	assert_true(pool_registry_find(reg, ID(1))->freeable);
}

static void host_rules_take_a_freeable_pool_back(void **state)
{
	struct pool_registry *reg = *state;

	pool_registry_incref(reg, ID(1));
	pool_registry_release(reg, ID(1));
	assert_int_equal(pool_registry_incref(reg, ID(1)), 0);
	assert_int_equal(pool_registry_find(reg, ID(1))->use_count, 1);
	assert_false(pool_registry_find(reg, ID(1))->freeable);
}

static void begin_takes_a_use_and_routes_to_the_pool(void **state)
{
	struct pool_registry *reg = *state;

	assert_int_equal(pool_registry_begin(reg, ID(1), any_stream, NULL), 0);
	struct private_pool *p = pool_registry_find(reg, ID(1));
	assert_int_equal(p->use_count, 1);
	assert_true(pool_registry_routed(reg, p));
	assert_ptr_equal(pool_registry_route(reg, S(0)), p);
}

static void begin_on_a_routed_pool_is_ebusy_and_keeps_the_use(void **state)
{
	struct pool_registry *reg = *state;

	pool_registry_begin(reg, ID(1), any_stream, NULL);
	assert_int_equal(pool_registry_begin(reg, ID(1), any_stream, NULL), -EBUSY);
	assert_int_equal(pool_registry_find(reg, ID(1))->use_count, 2);
	assert_int_equal(reg->nscopes, 1);
}

static void end_drops_the_oldest_scope_of_the_pool(void **state)
{
	struct pool_registry *reg = *state;

	pool_registry_begin(reg, ID(1), this_stream, S(1));
	pool_registry_begin(reg, ID(2), this_stream, S(2));
	assert_int_equal(pool_registry_end(reg, ID(1)), 0);
	assert_int_equal(reg->nscopes, 1);
	assert_true(npa_pool_id_eq(reg->scopes[0].id, ID(2)));
	assert_int_equal(pool_registry_find(reg, ID(1))->use_count, 1);
}

static void end_without_a_scope_is_enoent(void **state)
{
	struct pool_registry *reg = *state;

	pool_registry_incref(reg, ID(1));
	assert_int_equal(pool_registry_end(reg, ID(1)), -ENOENT);
}

static void route_without_an_accepting_scope_is_null(void **state)
{
	struct pool_registry *reg = *state;

	assert_null(pool_registry_route(reg, S(0)));
	pool_registry_begin(reg, ID(1), this_stream, S(1));
	assert_null(pool_registry_route(reg, S(2)));
}

static void device_rules_route_to_the_newest_accepting_scope(void **state)
{
	struct pool_registry *reg = *state;

	pool_registry_begin(reg, ID(1), any_stream, NULL);
	pool_registry_begin(reg, ID(2), any_stream, NULL);
	pool_registry_begin(reg, ID(3), this_stream, S(3));
	assert_ptr_equal(pool_registry_route(reg, S(0)), pool_registry_find(reg, ID(2)));
}

static void host_rules_route_to_the_oldest_accepting_scope(void **state)
{
	struct pool_registry *reg = *state;

	pool_registry_begin(reg, ID(1), this_stream, S(1));
	pool_registry_begin(reg, ID(2), any_stream, NULL);
	pool_registry_begin(reg, ID(3), any_stream, NULL);
	assert_ptr_equal(pool_registry_route(reg, S(0)), pool_registry_find(reg, ID(2)));
}

static void pools_stay_in_creation_order(void **state)
{
	struct pool_registry *reg = *state;

	pool_registry_incref(reg, ID(2));
	pool_registry_incref(reg, ID(1));
	pool_registry_incref(reg, ID(3));
	assert_true(npa_pool_id_eq(reg->head->id, ID(2)));
	assert_true(npa_pool_id_eq(reg->head->next->id, ID(1)));
	assert_true(npa_pool_id_eq(reg->head->next->next->id, ID(3)));
	assert_null(reg->head->next->next->next);
}

static void delete_unlinks_and_destroys_the_pool(void **state)
{
	struct pool_registry *reg = *state;

	pool_registry_incref(reg, ID(1));
	pool_registry_incref(reg, ID(2));
	pool_registry_delete(reg, pool_registry_find(reg, ID(1)));
	assert_int_equal(destroyed, 1);
	assert_null(pool_registry_find(reg, ID(1)));
	assert_true(npa_pool_id_eq(reg->head->id, ID(2)));
}

static void fini_destroys_every_pool_and_scope(void **state)
{
	struct pool_registry *reg = *state;

	pool_registry_begin(reg, ID(1), any_stream, NULL);
	pool_registry_incref(reg, ID(2));
	pool_registry_fini(reg);
	assert_int_equal(destroyed, 2);
	assert_null(reg->head);
	assert_int_equal(reg->nscopes, 0);
}

#define DEVICE(t) cmocka_unit_test_setup_teardown(t, setup_device, teardown)
#define HOST(t) cmocka_unit_test_setup_teardown(t, setup_host, teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		DEVICE(a_new_pool_has_one_use),
		DEVICE(incref_of_a_known_pool_adds_a_use),
		DEVICE(incref_without_memory_is_enomem),
		DEVICE(releasing_the_last_use_makes_the_pool_freeable),
		DEVICE(release_of_an_unknown_pool_is_enoent),
		DEVICE(release_of_a_freeable_pool_is_enoent),
		DEVICE(device_rules_refuse_a_freeable_pool),
		HOST(host_rules_take_a_freeable_pool_back),
		DEVICE(begin_takes_a_use_and_routes_to_the_pool),
		DEVICE(begin_on_a_routed_pool_is_ebusy_and_keeps_the_use),
		DEVICE(end_drops_the_oldest_scope_of_the_pool),
		DEVICE(end_without_a_scope_is_enoent),
		DEVICE(route_without_an_accepting_scope_is_null),
		DEVICE(device_rules_route_to_the_newest_accepting_scope),
		HOST(host_rules_route_to_the_oldest_accepting_scope),
		DEVICE(pools_stay_in_creation_order),
		DEVICE(delete_unlinks_and_destroys_the_pool),
		DEVICE(fini_destroys_every_pool_and_scope),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
