/*
 * The structural diff between a recorded message and its replayed twin.
 * Two messages are the same when they mean the same JSON: key order,
 * whitespace and number spelling never count (1, 1.0 and 1e0 are one
 * number).  Strings that both hold a JSON object or array, as MCP tool
 * results often do, are compared as the JSON they hold, and a difference
 * inside is named with a {json} step: "$.result.content[0].text{json}.x".
 *
 * Before strings are compared, the rules' substitutions rewrite both
 * sides (a clock time to "<time>", say); places matching an ignore
 * pattern are skipped with everything below them.  Each difference is
 * reported once, at the highest place where the two sides part: a key
 * present on one side only, an extra array element, a value of another
 * type, or two different scalars.  A recorded value that was redacted
 * ("[REDACTED]", see redacted.c) is compared as a wildcard: a place where
 * the replayed value fits it is listed apart, not as a difference.
 */

#include <sys/types.h>

#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "replay.h"

/*
 * The places ignored unless rules say no_defaults: values that differ
 * between any two runs of the same conversation and say nothing about
 * whether the server behaved the same.
 */
static const char *const diff_default_ignores[] = {
	"$.id",				/* replay sends its own ids */
	"$.._meta.progressToken",	/* chosen by the client per request */
	"$.._meta.traceparent",		/* W3C trace context: new per run */
	"$.._meta.tracestate",		/* the same */
	"$.._meta.baggage",		/* the same */
	"$.result.requestState",	/* 2026-07-28: opaque, per run; replay
					   sends the live one back */
	"$.result.nextCursor",		/* opaque pagination state */
	"$.._meta['io.modelcontextprotocol/subscriptionId']",
					/* 2026-07-28: the listen request's
					   id, which replay may remap */
};
#define DIFF_NDEFAULTS \
	(sizeof diff_default_ignores / sizeof diff_default_ignores[0])

/* What one diff_messages call carries down the tree. */
struct diff_walk {
	const struct diff_rules	 *rules;
	unsigned char		 *ign;		/* rules->ignore in scope */
	unsigned char		 *sub;		/* rules->subst in scope */
	struct jpath		 *defaults[DIFF_NDEFAULTS];
	size_t			  ndefaults;
	struct diff		 *out;
	struct jseg		 *path;
	size_t			  npath;
	size_t			  path_size;
	int			  nest;		/* {json} steps in */
};

/* Free every entry of a diff and leave it empty. */
void
diff_clear(struct diff *d)
{
	size_t	i;

	for (i = 0; i < d->n; i++) {
		free(d->v[i].path);
		json_decref(d->v[i].recorded);
		json_decref(d->v[i].replayed);
	}
	free(d->v);
	d->v = NULL;
	d->n = 0;
	for (i = 0; i < d->nredacted; i++)
		free(d->redacted[i]);
	free(d->redacted);
	d->redacted = NULL;
	d->nredacted = 0;
}

/* Step down into a key, an index or the JSON held by a string. */
static void
diff_push(struct diff_walk *w, const char *key, size_t index, int json)
{
	struct jseg	*seg;

	if (w->npath == w->path_size) {
		w->path_size = w->path_size == 0 ? 16 : w->path_size * 2;
		w->path = xreallocarray(w->path, w->path_size,
		    sizeof *w->path);
	}
	seg = &w->path[w->npath++];
	seg->key = key;
	seg->index = index;
	seg->json = json;
}

/* Whether the place the walk is at is ignored. */
static int
diff_ignored(const struct diff_walk *w)
{
	size_t	i;

	for (i = 0; i < w->ndefaults; i++) {
		if (jpath_match(w->defaults[i], w->path, w->npath))
			return 1;
	}
	if (w->rules == NULL)
		return 0;
	for (i = 0; i < w->rules->nignore; i++) {
		if (w->ign[i] && jpath_match(w->rules->ignore[i].path,
		    w->path, w->npath))
			return 1;
	}
	return 0;
}

/* Report a difference at the current place (a and b may be NULL). */
static void
diff_add(struct diff_walk *w, const json_t *a, const json_t *b)
{
	struct diff		*d = w->out;
	struct diff_entry	*e;

	d->v = xreallocarray(d->v, d->n + 1, sizeof *d->v);
	e = &d->v[d->n++];
	e->path = jpath_format(w->path, w->npath);
	/* A reference, not a copy: nothing here changes the values. */
	e->recorded = json_incref((json_t *)a);
	e->replayed = json_incref((json_t *)b);
	e->redacted = a != NULL && redacted_in(a);
}

/* Note a place not compared: its recorded value was redacted. */
static void
diff_add_redacted(struct diff_walk *w)
{
	struct diff	*d = w->out;

	d->redacted = xreallocarray(d->redacted, d->nredacted + 1,
	    sizeof *d->redacted);
	d->redacted[d->nredacted++] = jpath_format(w->path, w->npath);
}

/* Append n bytes at src to the growing buffer *buf of *len and *size. */
static void
diff_put(char **buf, size_t *len, size_t *size, const char *src, size_t n)
{
	while (*len + n + 1 > *size) {
		*size *= 2;
		*buf = xreallocarray(*buf, *size, 1);
	}
	memcpy(*buf + *len, src, n);
	*len += n;
}

/*
 * Apply one substitution to s (which it frees) and return the result:
 * every match replaced, left to right, as sed's s///g does (an empty
 * match keeps the next byte and looks on after it, and none is taken
 * right where a match ended).
 */
static char *
diff_subst_one(const struct diff_subst *ds, char *s)
{
	regmatch_t	 m[10];
	char		*out;
	const char	*p, *w;
	size_t		 len = 0, size, off = 0, slen = strlen(s), g;
	int		 eflags = 0, after_match = 0;

	size = slen + 1;
	out = xmalloc(size);
	while (off <= slen &&
	    regexec(ds->compiled, s + off, 10, m, eflags) == 0) {
		p = s + off;
		eflags = REG_NOTBOL;
		if (m[0].rm_eo == 0 && after_match) {
			/* Empty, where the last match ended: not a match. */
			after_match = 0;
			if (off == slen)
				break;
			diff_put(&out, &len, &size, p, 1);
			off++;
			continue;
		}
		diff_put(&out, &len, &size, p, (size_t)m[0].rm_so);
		for (w = ds->with; *w != '\0'; w++) {
			if (*w != '\\') {
				diff_put(&out, &len, &size, w, 1);
				continue;
			}
			if (*++w == '\\') {
				diff_put(&out, &len, &size, w, 1);
				continue;
			}
			g = (size_t)(*w - '0');
			if (m[g].rm_so != -1)
				diff_put(&out, &len, &size, p + m[g].rm_so,
				    (size_t)(m[g].rm_eo - m[g].rm_so));
		}
		if (m[0].rm_eo > m[0].rm_so) {
			off += (size_t)m[0].rm_eo;
			after_match = 1;
			continue;
		}
		/* An empty match: keep one byte and look on after it. */
		off += (size_t)m[0].rm_eo;
		if (off == slen)
			break;
		diff_put(&out, &len, &size, s + off, 1);
		off++;
		after_match = 0;
	}
	if (off < slen)
		diff_put(&out, &len, &size, s + off, slen - off);
	out[len] = '\0';
	free(s);
	return out;
}

/* The text of a string value (with no NUL) after every substitution. */
static char *
diff_normalise(const struct diff_walk *w, const json_t *v)
{
	char	*out = xstrdup(json_string_value(v));
	size_t	 i;

	if (w->rules == NULL)
		return out;
	for (i = 0; i < w->rules->nsubst; i++) {
		if (w->sub[i])
			out = diff_subst_one(&w->rules->subst[i], out);
	}
	return out;
}

/*
 * The JSON object or array a string holds (the caller's reference), or
 * NULL if it holds none.
 */
json_t *
diff_string_json(const json_t *v)
{
	const char	*s = json_string_value(v);
	size_t		 len = json_string_length(v), i;

	for (i = 0; i < len; i++) {
		if (s[i] != ' ' && s[i] != '\t' && s[i] != '\n' &&
		    s[i] != '\r')
			break;
	}
	if (i == len || (s[i] != '{' && s[i] != '['))
		return NULL;
	return json_loadb(s, len, 0, NULL);
}

static void	diff_walk(struct diff_walk *, const json_t *,
		    const json_t *);

/* Compare two strings: as the JSON they hold, or after normalising. */
static void
diff_strings(struct diff_walk *w, const json_t *a, const json_t *b)
{
	json_t	*ja = NULL, *jb = NULL;
	char	*sa, *sb;

	if (json_string_length(a) == json_string_length(b) &&
	    memcmp(json_string_value(a), json_string_value(b),
	    json_string_length(a)) == 0)
		return;

	if (w->nest < DIFF_MAX_JSON_NEST &&
	    (ja = diff_string_json(a)) != NULL &&
	    (jb = diff_string_json(b)) != NULL) {
		diff_push(w, NULL, 0, 1);
		w->nest++;
		diff_walk(w, ja, jb);
		w->nest--;
		w->npath--;
		json_decref(ja);
		json_decref(jb);
		return;
	}
	json_decref(ja);

	/* The regex functions stop at a NUL: such strings are compared raw. */
	if (strlen(json_string_value(a)) != json_string_length(a) ||
	    strlen(json_string_value(b)) != json_string_length(b)) {
		diff_add(w, a, b);
		return;
	}
	sa = diff_normalise(w, a);
	sb = diff_normalise(w, b);
	if (strcmp(sa, sb) != 0)
		diff_add(w, a, b);
	free(sa);
	free(sb);
}

/* Compare two objects key by key, in any order. */
static void
diff_objects(struct diff_walk *w, const json_t *a, const json_t *b)
{
	const char	*key;
	json_t		*va, *vb;

	json_object_foreach((json_t *)a, key, va) {
		diff_push(w, key, 0, 0);
		diff_walk(w, va, json_object_get(b, key));
		w->npath--;
	}
	json_object_foreach((json_t *)b, key, vb) {
		if (json_object_get(a, key) != NULL)
			continue;
		diff_push(w, key, 0, 0);
		diff_walk(w, NULL, vb);
		w->npath--;
	}
}

/* Compare two arrays element by element; extra elements differ alone. */
static void
diff_arrays(struct diff_walk *w, const json_t *a, const json_t *b)
{
	size_t	na = json_array_size(a), nb = json_array_size(b), i;

	for (i = 0; i < na || i < nb; i++) {
		diff_push(w, NULL, i, 0);
		diff_walk(w, json_array_get(a, i), json_array_get(b, i));
		w->npath--;
	}
}

/* Compare two values (either may be absent) at the current place. */
static void
diff_walk(struct diff_walk *w, const json_t *a, const json_t *b)
{
	if (diff_ignored(w))
		return;
	/*
	 * A value redacted when recorded is not known: whatever fits it
	 * (anything for "[REDACTED]", the same text around the marks for
	 * a string with some) is no difference, only noted.
	 */
	if (a != NULL && redacted_string(a) && redacted_matches(a, b)) {
		diff_add_redacted(w);
		return;
	}
	if (a == NULL || b == NULL) {
		if (a != b)
			diff_add(w, a, b);
		return;
	}
	if (json_is_number(a) && json_is_number(b)) {
		if (json_is_integer(a) && json_is_integer(b)) {
			if (json_integer_value(a) != json_integer_value(b))
				diff_add(w, a, b);
		} else if (json_number_value(a) != json_number_value(b))
			diff_add(w, a, b);
		return;
	}
	if (json_typeof(a) != json_typeof(b)) {
		diff_add(w, a, b);
		return;
	}
	switch (json_typeof(a)) {
	case JSON_OBJECT:
		diff_objects(w, a, b);
		break;
	case JSON_ARRAY:
		diff_arrays(w, a, b);
		break;
	case JSON_STRING:
		diff_strings(w, a, b);
		break;
	default:
		/* null, true and false: the same type is the same value. */
		break;
	}
}

/*
 * Compare a recorded message with its replayed twin by rules (NULL: the
 * defaults only), appending each difference to out; returns how many
 * were added.  Either message may be NULL (absent).  Only the rules with
 * no scope apply; diff_messages_for() knows the request.
 */
size_t
diff_messages(const json_t *recorded, const json_t *replayed,
    const struct diff_rules *rules, struct diff *out)
{
	return diff_messages_for(NULL, recorded, replayed, rules, out);
}

/*
 * As diff_messages(), for the answers to request req: the rules whose
 * scope holds req apply, and those with none (req NULL: only those).
 */
size_t
diff_messages_for(const json_t *req, const json_t *recorded,
    const json_t *replayed, const struct diff_rules *rules, struct diff *out)
{
	struct diff_walk	 w;
	size_t			 before = out->n, i;
	char			*cause;

	memset(&w, 0, sizeof w);
	w.rules = rules;
	w.out = out;
	if (rules != NULL) {
		w.ign = xcalloc(rules->nignore + 1, 1);
		w.sub = xcalloc(rules->nsubst + 1, 1);
		for (i = 0; i < rules->nignore; i++)
			w.ign[i] = rscope_match(&rules->ignore[i].r.scope,
			    req);
		for (i = 0; i < rules->nsubst; i++)
			w.sub[i] = rscope_match(&rules->subst[i].r.scope, req);
	}
	if (rules == NULL || !rules->no_defaults) {
		for (i = 0; i < DIFF_NDEFAULTS; i++) {
			w.defaults[i] = jpath_compile(diff_default_ignores[i],
			    &cause);
			if (w.defaults[i] == NULL)
				fatalx("default ignore: %s", cause);
		}
		w.ndefaults = DIFF_NDEFAULTS;
	}

	diff_walk(&w, recorded, replayed);

	for (i = 0; i < w.ndefaults; i++)
		jpath_free(w.defaults[i]);
	free(w.ign);
	free(w.sub);
	free(w.path);
	return out->n - before;
}
