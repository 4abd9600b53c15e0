/*
 * The nearest word to a typo (core/nearest.c), as "did you mean" uses it
 * for options and commands.  Cases are data.
 */

#include <stddef.h>
#include <string.h>

#include <criterion/criterion.h>

#include "core.h"
#include "unit.h"

static const struct {
	const char	*a, *b;
	size_t		 d;
} distance_cases[] = {
	{ "", "", 0 },
	{ "listen", "listen", 0 },
	{ "lisen", "listen", 1 },		/* a letter left out */
	{ "listten", "listen", 1 },		/* one too many */
	{ "lsiten", "listen", 1 },		/* two swapped */
	{ "recrod", "record", 1 },
	{ "lixten", "listen", 1 },		/* one changed */
	{ "", "db", 2 },
	{ "abc", "ca", 3 },			/* no swap across an edit */
	{ "upstrem", "upstream", 1 },
	{ "nmae", "name", 1 },
	{ "xyzzy", "listen", 6 },
};

Test(nearest, distance, .timeout = UNIT_TIMEOUT)
{
	size_t	i;

	for (i = 0; i < sizeof distance_cases / sizeof distance_cases[0];
	    i++) {
		cr_expect_eq(nearest_distance(distance_cases[i].a,
		    distance_cases[i].b), distance_cases[i].d,
		    "%s / %s", distance_cases[i].a, distance_cases[i].b);
		cr_expect_eq(nearest_distance(distance_cases[i].b,
		    distance_cases[i].a), distance_cases[i].d,
		    "symmetric: %s / %s", distance_cases[i].b,
		    distance_cases[i].a);
	}
}

Test(nearest, too_long_is_far, .timeout = UNIT_TIMEOUT)
{
	char	big[200];

	memset(big, 'a', sizeof big - 1);
	big[sizeof big - 1] = '\0';
	cr_expect_eq(nearest_distance(big, "a"), NEAREST_FAR);
	cr_expect_eq(nearest_distance("a", big), NEAREST_FAR);
}

static const char *const names[] = {
	"db", "name", "listen", "upstream", "redact-key", "redact-regex",
	NULL, "json", "jsonl",
};

static const struct {
	const char	*typed;
	const char	*want[3];	/* NULL-ended; none: no suggestion */
} find_cases[] = {
	{ "lisen", { "listen" } },
	{ "upstrem", { "upstream" } },
	{ "dv", { "db" } },
	{ "d", { "db" } },
	{ "xyzzy", { NULL } },			/* nothing near */
	{ "lstenn", { "listen" } },		/* two edits, a longer word */
	{ "xb", { "db" } },			/* one edit, a short word */
	{ "xy", { NULL } },			/* two edits, a short word */
	{ "redact-kye", { "redact-key" } },
	{ "redact-rgex", { "redact-regex" } },
	{ "jsn", { "json" } },			/* the nearest only */
	{ "jsonn", { "json", "jsonl" } },	/* a tie: both */
};

Test(nearest, find, .timeout = UNIT_TIMEOUT)
{
	size_t	i, j, n, out[4], nnames = sizeof names / sizeof names[0];

	for (i = 0; i < sizeof find_cases / sizeof find_cases[0]; i++) {
		n = nearest_find(find_cases[i].typed, names, nnames, out, 4);
		for (j = 0; j < n && find_cases[i].want[j] != NULL; j++)
			cr_expect_str_eq(names[out[j]], find_cases[i].want[j],
			    "%s: suggestion %zu", find_cases[i].typed, j);
		cr_expect(j == n && (j == 3 || find_cases[i].want[j] == NULL),
		    "%s: %zu suggestions", find_cases[i].typed, n);
	}
}

Test(nearest, find_caps_ties, .timeout = UNIT_TIMEOUT)
{
	static const char *const tied[] = { "ab", "ac", "ad", "ae" };
	size_t	out[2];

	cr_expect_eq(nearest_find("aa", tied, 4, out, 2), 2);
	cr_expect_eq(out[0], 0);
	cr_expect_eq(out[1], 1);
}
