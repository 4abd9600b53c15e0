/*
 * Values that were redacted when recorded.  `mcpreel record` stores a
 * secret as the string "[REDACTED]" (a member's whole value, of any type
 * once) or with [REDACTED] in place of part of a string; the real value
 * is not in the database.  Replay and mock find those places, say where
 * they are, and take them as wildcards:
 *
 *	"[REDACTED]"		matches any value
 *	"key [REDACTED] end"	matches a string with the same text around
 *				one or more characters in each gap
 *
 * They are found by their text, so a recording made elsewhere (import)
 * is treated the same; a real value that happens to say [REDACTED] is
 * taken as one too.  The recursion follows the values, which jansson's
 * parser bounds in depth.
 */

#include <stdlib.h>
#include <string.h>

#include "replay.h"

#define RL	(sizeof REDACTED - 1)

/* Whether len bytes at s hold [REDACTED]. */
static int
has_mark(const char *s, size_t len)
{
	return len >= RL && memmem(s, len, REDACTED, RL) != NULL;
}

/* Whether v is the string "[REDACTED]", a value redacted whole. */
int
redacted_whole(const json_t *v)
{
	return json_is_string(v) && json_string_length(v) == RL &&
	    memcmp(json_string_value(v), REDACTED, RL) == 0;
}

/* Whether v is a string with [REDACTED] in it. */
int
redacted_string(const json_t *v)
{
	return json_is_string(v) && has_mark(json_string_value(v),
	    json_string_length(v));
}

/* Whether v (NULL: absent) holds [REDACTED] anywhere: a string or a key. */
int
redacted_in(const json_t *v)
{
	const char	*k;
	json_t		*e;
	size_t		 i;

	if (v == NULL)
		return 0;
	switch (json_typeof(v)) {
	case JSON_STRING:
		return redacted_string(v);
	case JSON_OBJECT:
		json_object_foreach((json_t *)v, k, e) {
			if (has_mark(k, strlen(k)) || redacted_in(e))
				return 1;
		}
		return 0;
	case JSON_ARRAY:
		json_array_foreach(v, i, e) {
			if (redacted_in(e))
				return 1;
		}
		return 0;
	default:
		return 0;
	}
}

/*
 * Whether the live string s matches rec, a recorded string with
 * [REDACTED] in it: the text around each mark the same, each mark one or
 * more characters.  The leftmost place for each piece is the right one.
 */
static int
wildcard_match(const char *rec, size_t rlen, const char *s, size_t slen)
{
	const char	*p = rec, *rend = rec + rlen, *mark, *hit;
	size_t		 at, plen;
	int		 first = 1;

	at = 0;
	for (;;) {
		mark = memmem(p, (size_t)(rend - p), REDACTED, RL);
		plen = (size_t)((mark != NULL ? mark : rend) - p);
		if (first) {
			/* The text before the first mark starts s. */
			if (slen < plen || memcmp(s, p, plen) != 0)
				return 0;
			at = plen;
			first = 0;
		} else if (mark == NULL) {
			/* The text after the last mark ends s. */
			return slen >= at + 1 + plen &&
			    memcmp(s + slen - plen, p, plen) == 0;
		} else {
			/* A piece between marks, past one character more. */
			if (at + 1 > slen || (hit = plen == 0 ? s + at + 1 :
			    memmem(s + at + 1, slen - at - 1, p, plen)) ==
			    NULL)
				return 0;
			at = (size_t)(hit - s) + plen;
		}
		if (mark == NULL)
			return at == slen;
		p = mark + RL;
	}
}

/* Whether a live value matches a recorded one that holds [REDACTED]. */
int
redacted_matches(const json_t *rec, const json_t *live)
{
	if (live == NULL)
		return 0;
	if (redacted_whole(rec))
		return 1;
	if (!redacted_string(rec) || !json_is_string(live))
		return 0;
	return wildcard_match(json_string_value(rec), json_string_length(rec),
	    json_string_value(live), json_string_length(live));
}

/*
 * A copy of live in which every place where rec was redacted, and live
 * matches it, holds rec's value: a live message that differs from the
 * recorded one only where values were redacted comes out equal to it.
 */
json_t *
redacted_fill(const json_t *rec, const json_t *live)
{
	json_t		*out, *e;
	const char	*k;
	size_t		 i;

	if (live == NULL)
		return NULL;
	if (rec != NULL && redacted_string(rec))
		return json_deep_copy(redacted_matches(rec, live) ? rec : live);
	if (json_is_object(rec) && json_is_object(live)) {
		out = json_object();
		json_object_foreach((json_t *)live, k, e)
			json_object_set_new(out, k, redacted_fill(
			    json_object_get(rec, k), e));
		return out;
	}
	if (json_is_array(rec) && json_is_array(live)) {
		out = json_array();
		json_array_foreach(live, i, e)
			json_array_append_new(out, redacted_fill(
			    json_array_get(rec, i), e));
		return out;
	}
	return json_deep_copy(live);
}

/*
 * What of rec redacted_fill() reads: rec with every member and element
 * that holds no redacted string left out (an element as null, so the
 * others keep their places); NULL when rec holds none.  Two recordings
 * with equal shapes fill any live message alike.
 */
json_t *
redacted_shape(const json_t *rec)
{
	json_t		*out = NULL, *e, *sub;
	const char	*k;
	size_t		 i, last = 0;

	if (rec == NULL)
		return NULL;
	if (redacted_string(rec))
		return json_deep_copy(rec);
	if (json_is_object(rec)) {
		json_object_foreach((json_t *)rec, k, e) {
			if ((sub = redacted_shape(e)) == NULL)
				continue;
			if (out == NULL)
				out = json_object();
			json_object_set_new(out, k, sub);
		}
		return out;
	}
	if (!json_is_array(rec))
		return NULL;
	json_array_foreach(rec, i, e) {
		if ((sub = redacted_shape(e)) == NULL)
			continue;
		if (out == NULL)
			out = json_array();
		for (; last < i; last++)
			json_array_append_new(out, json_null());
		json_array_append_new(out, sub);
		last = i + 1;
	}
	return out;
}

/* Where the walk for redacted_where is. */
struct rwhere {
	struct jseg	*path;
	size_t		 npath;
	size_t		 size;
	char		*out;
	size_t		 found;
	size_t		 max;
};

static void
where_push(struct rwhere *w, const char *key, size_t index)
{
	if (w->npath == w->size) {
		w->size = w->size == 0 ? 16 : w->size * 2;
		w->path = xreallocarray(w->path, w->size, sizeof *w->path);
	}
	w->path[w->npath].key = key;
	w->path[w->npath].index = index;
	w->path[w->npath].json = 0;
	w->npath++;
}

static void
where_add(struct rwhere *w)
{
	char	*p, *n;

	if (w->found++ >= w->max)
		return;
	p = jpath_format(w->path, w->npath);
	if (w->out == NULL)
		w->out = p;
	else {
		xasprintf(&n, "%s, %s", w->out, p);
		free(w->out);
		free(p);
		w->out = n;
	}
}

static void
where_walk(struct rwhere *w, const json_t *v)
{
	const char	*k;
	json_t		*e;
	size_t		 i;

	switch (json_typeof(v)) {
	case JSON_STRING:
		if (redacted_string(v))
			where_add(w);
		break;
	case JSON_OBJECT:
		json_object_foreach((json_t *)v, k, e) {
			where_push(w, k, 0);
			if (has_mark(k, strlen(k)))
				where_add(w);
			else
				where_walk(w, e);
			w->npath--;
		}
		break;
	case JSON_ARRAY:
		json_array_foreach(v, i, e) {
			where_push(w, NULL, i);
			where_walk(w, e);
			w->npath--;
		}
		break;
	default:
		break;
	}
}

/*
 * The places in message v that hold [REDACTED], as JSONPaths joined by
 * ", " (at most max of them, then "and N more"), or NULL when none does.
 */
char *
redacted_where(const json_t *v, size_t max)
{
	struct rwhere	 w;
	char		*n;

	if (v == NULL)
		return NULL;
	memset(&w, 0, sizeof w);
	w.max = max;
	where_walk(&w, v);
	free(w.path);
	if (w.out != NULL && w.found > max) {
		xasprintf(&n, "%s and %zu more", w.out, w.found - max);
		free(w.out);
		w.out = n;
	}
	return w.out;
}
