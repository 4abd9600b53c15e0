/*
 * What the unit test binary does before any test runs: give every test the
 * same timeout.
 *
 * BoxFort, the sandbox criterion runs tests in, keeps pending timeouts in a
 * list sorted by deadline, but inserting before an entry drops that entry
 * and all after it.  So when a test with a short timeout starts while one
 * with a longer timeout runs (--jobs 2 makes this common), the longer one
 * is never enforced and its request leaks, which LeakSanitizer reports in
 * the runner.  With one timeout for all, a test that starts later always
 * has the later deadline and goes to the tail, where nothing is dropped.
 * Each test keeps at least the time it asked for: all get the longest.
 */

#include <criterion/criterion.h>
#include <criterion/hooks.h>

#include "unit.h"

/* The timeout criterion would give a test: its own, else its suite's. */
static double
unit_timeout_of(const struct criterion_suite_set *ss,
    const struct criterion_test *t)
{
	double	timeout = 0;

	if (ss->suite.data != NULL && ss->suite.data->timeout > 0)
		timeout = ss->suite.data->timeout;
	if (t->data != NULL && t->data->timeout > 0)
		timeout = t->data->timeout;
	return timeout;
}

/* Call fn on every test of the set (what FOREACH_SET does, unshadowed). */
static void
unit_each_test(struct criterion_test_set *set,
    void (*fn)(struct criterion_suite_set *, struct criterion_test *, void *),
    void *arg)
{
	struct criterion_ordered_set_node	*sn, *tn;
	struct criterion_suite_set		*ss;

	for (sn = set->suites->first; sn != NULL; sn = sn->next) {
		ss = (struct criterion_suite_set *)(sn + 1);
		if (ss->tests == NULL)
			continue;
		for (tn = ss->tests->first; tn != NULL; tn = tn->next)
			fn(ss, (struct criterion_test *)(tn + 1), arg);
	}
}

/* Raise *arg to this test's timeout if that is longer. */
static void
unit_max_cb(struct criterion_suite_set *ss, struct criterion_test *t,
    void *arg)
{
	double	*max = arg, timeout = unit_timeout_of(ss, t);

	if (timeout > *max)
		*max = timeout;
}

/* Give this test the timeout in *arg. */
static void
unit_set_cb(struct criterion_suite_set *ss, struct criterion_test *t,
    void *arg)
{
	if (t->data != NULL)
		t->data->timeout = *(double *)arg;
}

ReportHook(PRE_ALL)(struct criterion_test_set *set)
{
	double	max = UNIT_TIMEOUT;

	unit_each_test(set, unit_max_cb, &max);
	unit_each_test(set, unit_set_cb, &max);
}
