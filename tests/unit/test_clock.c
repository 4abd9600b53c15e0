/*
 * Parsing times people type: spans ("2.5s") and ISO 8601 times, as
 * `mcpreel show --since/--until` takes them.  Cases are data: each input
 * with what it must give, or that it must be refused.
 */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <criterion/criterion.h>

#include "core.h"
#include "unit.h"

#define S	1000000000LL

static const struct {
	const char	*in;
	int64_t		 ns;	/* -1: refused */
} span_cases[] = {
	{ "2.5s", 2500000000LL },
	{ "0s", 0 },
	{ "150ms", 150000000LL },
	{ "1.5ms", 1500000LL },
	{ "7us", 7000 },
	{ "42ns", 42 },
	{ "3m", 180 * S },
	{ "1h", 3600 * S },
	{ "0.000000001s", 1 },
	{ ".5s", 500000000LL },
	{ "5.s", 5 * S },
	{ "1.0000000001s", S },		/* past ns: no effect */
	{ "", -1 },
	{ "s", -1 },
	{ ".s", -1 },
	{ "12", -1 },			/* a unit is needed */
	{ "-1s", -1 },
	{ "1 s", -1 },
	{ "1sec", -1 },
	{ "1d", -1 },
	{ "2.5s ", -1 },
	{ "99999999999999999999s", -1 },
	{ "1000000h", -1 },		/* over a hundred years */
};

/* Every span case gives its value or is refused. */
Test(clock, parse_span, .timeout = UNIT_TIMEOUT)
{
	size_t	i;
	int64_t	ns;
	int	rc;

	for (i = 0; i < sizeof span_cases / sizeof span_cases[0]; i++) {
		ns = -2;
		rc = clock_parse_span(span_cases[i].in, &ns);
		if (span_cases[i].ns < 0)
			cr_assert_eq(rc, -1, "'%s' accepted as %lld",
			    span_cases[i].in, (long long)ns);
		else {
			cr_assert_eq(rc, 0, "'%s' refused", span_cases[i].in);
			cr_assert_eq(ns, span_cases[i].ns, "'%s': %lld, want "
			    "%lld", span_cases[i].in, (long long)ns,
			    (long long)span_cases[i].ns);
		}
	}
}

/* Times with a zone (local times are checked below, against mktime). */
static const struct {
	const char	*in;
	int		 ok;
	int64_t		 ns;
} iso_cases[] = {
	{ "1970-01-01T00:00:00Z", 1, 0 },
	{ "2026-01-05T10:00:00Z", 1, 1767607200 * S },
	{ "2026-01-05t10:00:00z", 1, 1767607200 * S },
	{ "2026-01-05 10:00:00Z", 1, 1767607200 * S },
	{ "2026-01-05T10:00Z", 1, 1767607200 * S },
	{ "2026-01-05T10:00:00.25Z", 1, 1767607200 * S + 250000000 },
	{ "2026-01-05T10:00:00,5Z", 1, 1767607200 * S + 500000000 },
	{ "2026-01-05T10:00:00.123456789123Z", 1,
	    1767607200 * S + 123456789 },
	{ "2026-01-05T11:00:00+01:00", 1, 1767607200 * S },
	{ "2026-01-05T05:00:00-0500", 1, 1767607200 * S },
	{ "2026-01-05T12:00:00+02", 1, 1767607200 * S },
	{ "2000-02-29T00:00:00Z", 1, 951782400 * S },
	{ "1969-12-31T23:59:59Z", 1, -1 * S },
	{ "2025-02-29T00:00:00Z", 0, 0 },
	{ "1900-02-29T00:00:00Z", 0, 0 },
	{ "2026-13-01T00:00:00Z", 0, 0 },
	{ "2026-04-31T00:00:00Z", 0, 0 },
	{ "2026-01-05T24:00:00Z", 0, 0 },
	{ "2026-01-05T10:60Z", 0, 0 },
	{ "2026-01-05T10:00:00.Z", 0, 0 },
	{ "2026-01-05T10Z", 0, 0 },
	{ "2026-1-05", 0, 0 },
	{ "2026-01-05T10:00:00+25:00", 0, 0 },
	{ "2026-01-05T10:00:00Zjunk", 0, 0 },
	{ "2026-01-05T10:00:00 ", 0, 0 },
	{ "#12", 0, 0 },
	{ "2.5s", 0, 0 },
	{ "", 0, 0 },
};

/* Every ISO case gives its value or is refused. */
Test(clock, parse_iso, .timeout = UNIT_TIMEOUT)
{
	size_t	i;
	int64_t	ns;
	int	rc;

	for (i = 0; i < sizeof iso_cases / sizeof iso_cases[0]; i++) {
		ns = -2;
		rc = clock_parse_iso(iso_cases[i].in, &ns);
		if (!iso_cases[i].ok) {
			cr_assert_eq(rc, -1, "'%s' accepted as %lld",
			    iso_cases[i].in, (long long)ns);
			continue;
		}
		cr_assert_eq(rc, 0, "'%s' refused", iso_cases[i].in);
		cr_assert_eq(ns, iso_cases[i].ns, "'%s': %lld, want %lld",
		    iso_cases[i].in, (long long)ns,
		    (long long)iso_cases[i].ns);
	}
}

/* Without a zone, a time is local: as mktime(3) reads it, in two zones. */
Test(clock, parse_iso_local, .timeout = UNIT_TIMEOUT)
{
	static const char	*zones[] = { "UTC0", "XST-5:30" };
	struct tm		 tm;
	int64_t			 ns;
	size_t			 i;

	for (i = 0; i < 2; i++) {
		setenv("TZ", zones[i], 1);
		tzset();
		memset(&tm, 0, sizeof tm);
		tm.tm_year = 126;
		tm.tm_mon = 0;
		tm.tm_mday = 5;
		tm.tm_hour = 10;
		tm.tm_min = 30;
		tm.tm_sec = 15;
		tm.tm_isdst = -1;
		cr_assert_eq(clock_parse_iso("2026-01-05T10:30:15.5", &ns), 0);
		cr_assert_eq(ns, (int64_t)mktime(&tm) * S + 500000000,
		    "TZ=%s", zones[i]);
		tm.tm_hour = tm.tm_min = tm.tm_sec = 0;
		tm.tm_isdst = -1;
		cr_assert_eq(clock_parse_iso("2026-01-05", &ns), 0);
		cr_assert_eq(ns, (int64_t)mktime(&tm) * S, "TZ=%s", zones[i]);
	}
	cr_assert_eq(clock_parse_iso("2026-01-05T10:30:15", &ns), 0);
	cr_assert_eq(ns, (1767609015LL - 5 * 3600 - 30 * 60) * S,
	    "XST-5:30 is 5:30 ahead of UTC");
	unsetenv("TZ");
	tzset();
}

/* Times that int64_t nanoseconds cannot hold: refused as out of range. */
static const struct {
	const char	*in;
	int		 rc;
	int64_t		 ns;
} range_cases[] = {
	{ "2262-04-11T23:47:16Z", 0, 9223372036 * S },
	{ "2262-04-11T23:47:16.854775807Z", 0, INT64_MAX },
	{ "2262-04-11T23:47:16.854775808Z", CLOCK_ERANGE, 0 },
	{ "2262-04-12T00:00:00Z", CLOCK_ERANGE, 0 },
	{ "2300-01-01T00:00:00Z", CLOCK_ERANGE, 0 },
	{ "9999-12-31T23:59:59.999Z", CLOCK_ERANGE, 0 },
	{ "9999-12-31", CLOCK_ERANGE, 0 },
	{ "1677-09-21T00:12:44Z", 0, -9223372036 * S },
	{ "1677-09-21T00:12:43Z", CLOCK_ERANGE, 0 },
	{ "1000-01-01T00:00:00Z", CLOCK_ERANGE, 0 },
	{ "0000-01-01T00:00:00+23:59", CLOCK_ERANGE, 0 },
};

Test(clock, parse_iso_range, .timeout = UNIT_TIMEOUT)
{
	size_t	i;
	int64_t	ns;
	int	rc;

	for (i = 0; i < sizeof range_cases / sizeof range_cases[0]; i++) {
		ns = 0;
		rc = clock_parse_iso(range_cases[i].in, &ns);
		cr_assert_eq(rc, range_cases[i].rc, "'%s': rc %d",
		    range_cases[i].in, rc);
		if (rc == 0)
			cr_assert_eq(ns, range_cases[i].ns, "'%s': %lld",
			    range_cases[i].in, (long long)ns);
	}
}

/* Sums and differences of ns values stay at the ends of the range. */
Test(clock, saturating, .timeout = UNIT_TIMEOUT)
{
	cr_assert_eq(clock_sub(INT64_MAX, INT64_MIN), INT64_MAX);
	cr_assert_eq(clock_sub(INT64_MIN, INT64_MAX), INT64_MIN);
	cr_assert_eq(clock_sub(INT64_MIN, 1), INT64_MIN);
	cr_assert_eq(clock_sub(5, 7), -2);
	cr_assert_eq(clock_add(INT64_MAX, 1), INT64_MAX);
	cr_assert_eq(clock_add(INT64_MIN, -1), INT64_MIN);
	cr_assert_eq(clock_add(INT64_MAX, INT64_MIN), -1);
	cr_assert_eq(clock_add(3, 4), 7);
}
