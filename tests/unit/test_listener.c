/*
 * The default of --max-connections: what RLIMIT_NOFILE leaves after the
 * reserve, per descriptors a client takes, between 1 and the ceiling.
 * Each test runs in a process of its own, so lowering the limit is safe.
 */

#include <sys/resource.h>

#include <criterion/criterion.h>

#include "transport.h"
#include "unit.h"

static void
listener_test_nofile(rlim_t soft)
{
	struct rlimit	rl;

	cr_assert_eq(getrlimit(RLIMIT_NOFILE, &rl), 0);
	if (rl.rlim_max != RLIM_INFINITY && soft > rl.rlim_max)
		soft = rl.rlim_max;
	rl.rlim_cur = soft;
	cr_assert_eq(setrlimit(RLIMIT_NOFILE, &rl), 0);
}

Test(listener, default_from_nofile)
{
	listener_test_nofile(64);
	cr_assert_eq(listener_default_max(2), (64 - LISTENER_FD_RESERVE) / 2);
	cr_assert_eq(listener_default_max(1), 64 - LISTENER_FD_RESERVE);
}

Test(listener, default_at_least_one)
{
	listener_test_nofile(LISTENER_FD_RESERVE);
	cr_assert_eq(listener_default_max(2), 1);
	listener_test_nofile(LISTENER_FD_RESERVE + 3);
	cr_assert_eq(listener_default_max(2), 1);
}

Test(listener, default_ceiling)
{
	struct rlimit	rl;

	cr_assert_eq(getrlimit(RLIMIT_NOFILE, &rl), 0);
	if (rl.rlim_max != RLIM_INFINITY && rl.rlim_max <
	    LISTENER_FD_RESERVE + 2 * LISTENER_MAX_DEFAULT + 2)
		cr_skip_test("the hard descriptor limit is too low");
	listener_test_nofile(LISTENER_FD_RESERVE + 2 * LISTENER_MAX_DEFAULT +
	    2);
	cr_assert_eq(listener_default_max(2), LISTENER_MAX_DEFAULT);
	cr_assert_eq(listener_default_max(1), LISTENER_MAX_DEFAULT);
}
