/*
 * sim_fixture.h - start and stop the simulator around each test.
 */
#ifndef SIM_FIXTURE_H
#define SIM_FIXTURE_H

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <npumemfs/npusim.h>

#define KiB (1024ull)
#define MiB (1024ull * KiB)
#define GiB (1024ull * MiB)

static inline void start_sim(int devices, uint64_t capacity)
{
	struct npusim_config cfg;

	npusim_config_default(&cfg, devices, capacity);
	assert_int_equal(npusim_init(&cfg), 0);
}

/* Setups for cmocka_unit_test_setup_teardown. */
static inline int one_8mib_device(void **state)
{
	(void)state;
	start_sim(1, 8 * MiB);
	return 0;
}

static inline int one_16mib_device(void **state)
{
	(void)state;
	start_sim(1, 16 * MiB);
	return 0;
}

static inline int one_512mib_device(void **state)
{
	(void)state;
	start_sim(1, 512 * MiB);
	return 0;
}

static inline int two_8mib_devices(void **state)
{
	(void)state;
	start_sim(2, 8 * MiB);
	return 0;
}

static inline int stop_sim(void **state)
{
	(void)state;
	npusim_shutdown();
	return 0;
}

static inline uint64_t used_bytes(int device)
{
	struct npusim_counters c;

	assert_int_equal(npusim_device_counters(device, &c), 0);
	return c.used;
}

#define SIM_TEST(f, setup) cmocka_unit_test_setup_teardown(f, setup, stop_sim)

#endif /* SIM_FIXTURE_H */
