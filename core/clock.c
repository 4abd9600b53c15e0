/* Clocks: wall time for people, monotonic time for latencies. */

#include <string.h>
#include <time.h>

#include "core.h"

static int64_t
clock_ns(clockid_t id)
{
	struct timespec	ts;

	clock_gettime(id, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* Nanoseconds since the epoch. */
int64_t
clock_wall_ns(void)
{
	return clock_ns(CLOCK_REALTIME);
}

/* Nanoseconds on a clock that never goes back. */
int64_t
clock_mono_ns(void)
{
	return clock_ns(CLOCK_MONOTONIC);
}

/*
 * a - b and a + b on nanosecond values, held at the ends of the int64_t
 * range instead of overflowing: a duration, gap or latency between times
 * read from a database or an imported trace (which may hold any int64_t)
 * is then at worst very long, never undefined or negative by wrap-around.
 */
int64_t
clock_sub(int64_t a, int64_t b)
{
	int64_t	r;

	if (__builtin_sub_overflow(a, b, &r))
		return b < 0 ? INT64_MAX : INT64_MIN;
	return r;
}

int64_t
clock_add(int64_t a, int64_t b)
{
	int64_t	r;

	if (__builtin_add_overflow(a, b, &r))
		return b > 0 ? INT64_MAX : INT64_MIN;
	return r;
}

/*
 * Seconds and nanoseconds since the epoch as one count of nanoseconds,
 * or CLOCK_ERANGE when that is outside int64_t (before 1677-09-21 or
 * after 2262-04-11).
 */
static int
clock_from_secs(int64_t secs, int64_t frac, int64_t *ns)
{
	int64_t	v;

	if (__builtin_mul_overflow(secs, (int64_t)1000000000, &v) ||
	    __builtin_add_overflow(v, frac, &v))
		return CLOCK_ERANGE;
	*ns = v;
	return 0;
}

/* The units a span may be given in. */
static const struct {
	const char	*name;
	int64_t		 ns;
} clock_units[] = {
	{ "ns", 1 },
	{ "us", 1000 },
	{ "ms", 1000000 },
	{ "s", 1000000000 },
	{ "m", 60LL * 1000000000 },
	{ "h", 3600LL * 1000000000 },
};

/* The largest span we take: a hundred years keeps every sum in range. */
#define CLOCK_SPAN_MAX	(100LL * 366 * 24 * 3600 * 1000000000)

/*
 * Parse a span of time as people write it: a decimal number and a unit
 * (ns, us, ms, s, m, h), as in "2.5s" or "150ms".  Returns 0 and the span
 * in *ns, or -1 when s is not one.
 */
int
clock_parse_span(const char *s, int64_t *ns)
{
	const char	*p = s;
	int64_t		 whole = 0, frac = 0, scale = 1, unit = 0;
	size_t		 i;
	int		 digits = 0;

	for (; *p >= '0' && *p <= '9'; p++, digits++) {
		if (whole > CLOCK_SPAN_MAX / 10)
			return -1;
		whole = whole * 10 + (*p - '0');
	}
	if (*p == '.') {
		for (p++; *p >= '0' && *p <= '9'; p++, digits++) {
			/* Digits past nanoseconds cannot change the result. */
			if (scale < 1000000000) {
				frac = frac * 10 + (*p - '0');
				scale *= 10;
			}
		}
	}
	if (digits == 0)
		return -1;
	for (i = 0; i < sizeof clock_units / sizeof clock_units[0]; i++) {
		if (strcmp(p, clock_units[i].name) == 0)
			unit = clock_units[i].ns;
	}
	if (unit == 0 || whole > CLOCK_SPAN_MAX / unit)
		return -1;
	*ns = whole * unit + (int64_t)((double)frac / (double)scale *
	    (double)unit + 0.5);
	if (*ns > CLOCK_SPAN_MAX)
		return -1;
	return 0;
}

/* Read exactly n digits at *p into *v and move past them. */
static int
clock_digits(const char **p, int n, int *v)
{
	*v = 0;
	for (; n > 0; n--, (*p)++) {
		if (**p < '0' || **p > '9')
			return -1;
		*v = *v * 10 + (**p - '0');
	}
	return 0;
}

/* Days from 1970-01-01 to y-m-d in the proleptic Gregorian calendar. */
static int64_t
clock_days(int y, int m, int d)
{
	int64_t	era, yoe, doy, doe;

	y -= m <= 2;
	era = (y >= 0 ? y : y - 399) / 400;
	yoe = y - era * 400;
	doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
	doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
	return era * 146097 + doe - 719468;
}

/*
 * Parse an ISO 8601 time: "2026-01-05", "2026-01-05T10:00", with seconds
 * and a fraction ("10:00:30.25"), a space for the T, and Z or an offset
 * (+01:00, -0500) at the end.  Without a zone it is local time.  Returns 0
 * and nanoseconds since the epoch in *ns, -1 when s is not such a time, or
 * CLOCK_ERANGE for a time that nanoseconds in an int64_t cannot hold
 * (CLOCK_RANGE_TEXT says which).
 */
int
clock_parse_iso(const char *s, int64_t *ns)
{
	const char	*p = s;
	struct tm	 tm;
	time_t		 t;
	int		 y, mo, d, h = 0, mi = 0, sec = 0, oh, om = 0, sign;
	int64_t		 frac = 0, scale = 1, secs;
	static const int mdays[] = { 31, 29, 31, 30, 31, 30, 31, 31, 30, 31,
			     30, 31 };

	if (clock_digits(&p, 4, &y) != 0 || *p++ != '-' ||
	    clock_digits(&p, 2, &mo) != 0 || *p++ != '-' ||
	    clock_digits(&p, 2, &d) != 0)
		return -1;
	if (mo < 1 || mo > 12 || d < 1 || d > mdays[mo - 1] || (mo == 2 &&
	    d == 29 && (y % 4 != 0 || (y % 100 == 0 && y % 400 != 0))))
		return -1;
	if (*p == 'T' || *p == 't' || *p == ' ') {
		p++;
		if (clock_digits(&p, 2, &h) != 0 || *p++ != ':' ||
		    clock_digits(&p, 2, &mi) != 0)
			return -1;
		if (*p == ':') {
			p++;
			if (clock_digits(&p, 2, &sec) != 0)
				return -1;
			if (*p == '.' || *p == ',') {
				if (p[1] < '0' || p[1] > '9')
					return -1;
				for (p++; *p >= '0' && *p <= '9'; p++) {
					if (scale < 1000000000) {
						frac = frac * 10 + (*p - '0');
						scale *= 10;
					}
				}
			}
		}
		if (h > 23 || mi > 59 || sec > 60)
			return -1;
	}
	frac = frac * (1000000000 / scale);
	if (*p == '\0') {
		memset(&tm, 0, sizeof tm);
		tm.tm_year = y - 1900;
		tm.tm_mon = mo - 1;
		tm.tm_mday = d;
		tm.tm_hour = h;
		tm.tm_min = mi;
		tm.tm_sec = sec;
		tm.tm_isdst = -1;
		/* (-1 is also 23:59:59 on 1969-12-31: not a time we need.) */
		if ((t = mktime(&tm)) == (time_t)-1)
			return CLOCK_ERANGE;
		return clock_from_secs((int64_t)t, frac, ns);
	}
	if (*p == 'Z' || *p == 'z') {
		oh = 0;
		sign = 1;
		p++;
	} else if (*p == '+' || *p == '-') {
		sign = (*p++ == '+') ? 1 : -1;
		if (clock_digits(&p, 2, &oh) != 0)
			return -1;
		if (*p == ':')
			p++;
		if (*p != '\0' && clock_digits(&p, 2, &om) != 0)
			return -1;
		if (oh > 23 || om > 59)
			return -1;
	} else
		return -1;
	if (*p != '\0')
		return -1;
	secs = clock_days(y, mo, d) * 86400 + h * 3600 + mi * 60 + sec -
	    sign * (oh * 3600 + om * 60);
	return clock_from_secs(secs, frac, ns);
}
