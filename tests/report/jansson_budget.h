/*
 * jansson_budget.h - make jansson's allocations fail on demand, to show a
 * JSON view reports -ENOMEM and leaks nothing wherever it runs out.
 */
#ifndef NPUREPORT_TEST_JANSSON_BUDGET_H
#define NPUREPORT_TEST_JANSSON_BUDGET_H

/* From now on jansson allocations fail after `budget` successes. */
void jansson_budget_set(int budget);
/* cmocka teardown: jansson allocates with malloc/free again. */
int jansson_budget_restore(void **state);

#endif /* NPUREPORT_TEST_JANSSON_BUDGET_H */
