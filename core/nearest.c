/*
 * The word nearest to a mistyped one, for "did you mean ...?": the
 * optimal string alignment form of Damerau-Levenshtein distance (an
 * insertion, a deletion, a substitution or a swap of two neighbours each
 * costs one), over bytes.
 */

#include <stdlib.h>
#include <string.h>

#include "core.h"

/*
 * The longest word compared: option and command names are short, and
 * anything longer is not a typo of one (it also bounds the table below).
 */
#define NEAREST_LEN_MAX	64

/* The distance between a and b, or NEAREST_FAR if either is too long. */
size_t
nearest_distance(const char *a, const char *b)
{
	size_t	d[NEAREST_LEN_MAX + 1][NEAREST_LEN_MAX + 1];
	size_t	la = strlen(a), lb = strlen(b), i, j, c, best;

	if (la > NEAREST_LEN_MAX || lb > NEAREST_LEN_MAX)
		return NEAREST_FAR;
	for (i = 0; i <= la; i++)
		d[i][0] = i;
	for (j = 0; j <= lb; j++)
		d[0][j] = j;
	for (i = 1; i <= la; i++) {
		for (j = 1; j <= lb; j++) {
			c = (a[i - 1] == b[j - 1]) ? 0 : 1;
			best = d[i - 1][j - 1] + c;
			if (d[i - 1][j] + 1 < best)
				best = d[i - 1][j] + 1;
			if (d[i][j - 1] + 1 < best)
				best = d[i][j - 1] + 1;
			if (i > 1 && j > 1 && a[i - 1] == b[j - 2] &&
			    a[i - 2] == b[j - 1] && d[i - 2][j - 2] + 1 < best)
				best = d[i - 2][j - 2] + 1;
			d[i][j] = best;
		}
	}
	return d[la][lb];
}

/*
 * How far a typo of a word of len bytes may be from it and still be
 * suggested: one edit in a short word, two in a longer one (beyond that
 * a suggestion is more often wrong than right).
 */
static size_t
nearest_allowed(size_t len)
{
	return (len <= 3) ? 1 : 2;
}

/*
 * Pick the words of cands (n of them; NULL entries are skipped) nearest
 * to typed, close enough to be a typo of it: their indexes go into out
 * (at most max, in the order of cands).  Returns how many.
 */
size_t
nearest_find(const char *typed, const char *const *cands, size_t n,
    size_t *out, size_t max)
{
	size_t	i, d, best = NEAREST_FAR, found = 0;

	for (i = 0; i < n; i++) {
		if (cands[i] == NULL)
			continue;
		d = nearest_distance(typed, cands[i]);
		if (d > nearest_allowed(strlen(typed)) || d > best)
			continue;
		if (d < best) {
			best = d;
			found = 0;
		}
		if (found < max)
			out[found++] = i;
	}
	return found;
}
