/*
 * jansson_budget.c - jansson allocations that fail after a budget.
 */
#include <stdlib.h>

#include <jansson.h>

#include "jansson_budget.h"

static int alloc_budget;

static void *tight_malloc(size_t n)
{
	return alloc_budget-- > 0 ? malloc(n) : NULL;
}

void jansson_budget_set(int budget)
{
	alloc_budget = budget;
	json_set_alloc_funcs(tight_malloc, free);
}

int jansson_budget_restore(void **state)
{
	(void)state;
	json_set_alloc_funcs(malloc, free);
	return 0;
}
