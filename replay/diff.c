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

#include <errno.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "replay.h"

/*
 * How many strings-holding-JSON deep the diff steps in; deeper strings are
 * compared as strings.  Each level may nest as deep as jansson allows, so
 * this bounds the recursion.
 */
#define DIFF_MAX_JSON_NEST	4

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

/* The keys a rules file may hold, for the unknown-key message. */
#define DIFF_RULES_KEYS	"ignore, ignore_methods, normalize, defaults"

/* What one diff_messages call carries down the tree. */
struct diff_walk {
	const struct diff_rules	 *rules;
	struct jpath		 *defaults[DIFF_NDEFAULTS];
	size_t			  ndefaults;
	struct diff		 *out;
	struct jseg		 *path;
	size_t			  npath;
	size_t			  path_size;
	int			  nest;		/* {json} steps in */
};

/* Empty rules: nothing ignored but the defaults, nothing rewritten. */
void
diff_rules_init(struct diff_rules *rules)
{
	memset(rules, 0, sizeof *rules);
}

/* Free everything rules hold and leave them empty. */
void
diff_rules_clear(struct diff_rules *rules)
{
	size_t	i;

	for (i = 0; i < rules->nignore; i++)
		jpath_free(rules->ignore[i]);
	free(rules->ignore);
	for (i = 0; i < rules->nignore_methods; i++)
		free(rules->ignore_methods[i]);
	free(rules->ignore_methods);
	for (i = 0; i < rules->nsubst; i++) {
		free(rules->subst[i].regex);
		free(rules->subst[i].with);
		if (rules->subst[i].compiled != NULL)
			regfree(rules->subst[i].compiled);
		free(rules->subst[i].compiled);
	}
	free(rules->subst);
	diff_rules_init(rules);
}

/* Add a place never to compare; -1 with *cause if the pattern is bad. */
int
diff_rules_add_ignore(struct diff_rules *rules, const char *pattern,
    char **cause)
{
	struct jpath	*jp;

	if ((jp = jpath_compile(pattern, cause)) == NULL)
		return -1;
	rules->ignore = xreallocarray(rules->ignore, rules->nignore + 1,
	    sizeof *rules->ignore);
	rules->ignore[rules->nignore++] = jp;
	return 0;
}

/* Add a method whose answers are not compared. */
void
diff_rules_add_method(struct diff_rules *rules, const char *method)
{
	rules->ignore_methods = xreallocarray(rules->ignore_methods,
	    rules->nignore_methods + 1, sizeof *rules->ignore_methods);
	rules->ignore_methods[rules->nignore_methods++] = xstrdup(method);
}

/*
 * Check that a replacement's \N references name groups the regex has;
 * -1 with *cause if not.
 */
static int
diff_check_with(const char *regex, const char *with, size_t nsub,
    char **cause)
{
	const char	*p;

	for (p = with; *p != '\0'; p++) {
		if (*p != '\\')
			continue;
		p++;
		if (*p >= '0' && *p <= '9') {
			if ((size_t)(*p - '0') > nsub) {
				xasprintf(cause, "bad replacement '%s' for "
				    "regex '%s': \\%c but the regex has %zu "
				    "group%s", with, regex, *p, nsub,
				    nsub == 1 ? "" : "s");
				return -1;
			}
		} else if (*p != '\\') {
			xasprintf(cause, "bad replacement '%s' for regex "
			    "'%s': a \\ must be followed by a digit or \\ "
			    "(write \\\\ for a backslash)", with, regex);
			return -1;
		}
	}
	return 0;
}

/* Add a normalisation of strings; -1 with *cause if the regex is bad. */
int
diff_rules_add_subst(struct diff_rules *rules, const char *regex,
    const char *with, char **cause)
{
	struct diff_subst	*ds;
	regex_t			*re;
	char			 err[256];
	int			 r;

	re = xcalloc(1, sizeof *re);
	if ((r = regcomp(re, regex, REG_EXTENDED)) != 0) {
		regerror(r, re, err, sizeof err);
		xasprintf(cause, "bad regex '%s': %s", regex, err);
		free(re);
		return -1;
	}
	if (diff_check_with(regex, with, re->re_nsub, cause) != 0) {
		regfree(re);
		free(re);
		return -1;
	}
	rules->subst = xreallocarray(rules->subst, rules->nsubst + 1,
	    sizeof *rules->subst);
	ds = &rules->subst[rules->nsubst++];
	ds->regex = xstrdup(regex);
	ds->with = xstrdup(with);
	ds->compiled = re;
	return 0;
}

/* Move everything from src to the end of dst, leaving src empty. */
static void
diff_rules_move(struct diff_rules *dst, struct diff_rules *src)
{
	size_t	i;

	dst->ignore = xreallocarray(dst->ignore, dst->nignore + src->nignore,
	    sizeof *dst->ignore);
	for (i = 0; i < src->nignore; i++)
		dst->ignore[dst->nignore++] = src->ignore[i];
	dst->ignore_methods = xreallocarray(dst->ignore_methods,
	    dst->nignore_methods + src->nignore_methods,
	    sizeof *dst->ignore_methods);
	for (i = 0; i < src->nignore_methods; i++)
		dst->ignore_methods[dst->nignore_methods++] =
		    src->ignore_methods[i];
	dst->subst = xreallocarray(dst->subst, dst->nsubst + src->nsubst,
	    sizeof *dst->subst);
	for (i = 0; i < src->nsubst; i++)
		dst->subst[dst->nsubst++] = src->subst[i];
	free(src->ignore);
	free(src->ignore_methods);
	free(src->subst);
	diff_rules_init(src);
}

/* Check that v is an array of strings; -1 with *cause naming key if not. */
static int
diff_rules_strings(const char *file, const char *key, json_t *v,
    char **cause)
{
	json_t	*e;
	size_t	 i;

	if (!json_is_array(v))
		goto fail;
	json_array_foreach(v, i, e) {
		if (!json_is_string(e))
			goto fail;
	}
	return 0;

fail:
	xasprintf(cause, "rules file %s: \"%s\" must be an array of strings",
	    file, key);
	return -1;
}

/* Add one "normalize" entry ({"regex": ..., "replace": ...}) to rules. */
static int
diff_rules_load_subst(struct diff_rules *rules, const char *file, size_t i,
    json_t *o, char **cause)
{
	const char	*k, *regex = NULL, *with = "";
	json_t		*v;
	char		*why;

	if (!json_is_object(o)) {
		xasprintf(cause, "rules file %s: \"normalize\"[%zu] must be an "
		    "object with \"regex\" and \"replace\"", file, i);
		return -1;
	}
	json_object_foreach(o, k, v) {
		if (strcmp(k, "regex") != 0 && strcmp(k, "replace") != 0) {
			xasprintf(cause, "rules file %s: unknown key \"%s\" in "
			    "\"normalize\"[%zu] (expected regex, replace)",
			    file, k, i);
			return -1;
		}
		if (!json_is_string(v)) {
			xasprintf(cause, "rules file %s: \"normalize\"[%zu]."
			    "%s must be a string", file, i, k);
			return -1;
		}
		if (strcmp(k, "regex") == 0)
			regex = json_string_value(v);
		else
			with = json_string_value(v);
	}
	if (regex == NULL) {
		xasprintf(cause, "rules file %s: \"normalize\"[%zu] has no "
		    "\"regex\"", file, i);
		return -1;
	}
	if (diff_rules_add_subst(rules, regex, with, &why) != 0) {
		xasprintf(cause, "rules file %s: \"normalize\"[%zu]: %s", file,
		    i, why);
		free(why);
		return -1;
	}
	return 0;
}

/* Add what one rules file key holds to rules. */
static int
diff_rules_load_key(struct diff_rules *rules, const char *file,
    const char *key, json_t *v, char **cause)
{
	json_t	*e;
	size_t	 i;
	char	*why;

	if (strcmp(key, "ignore") == 0) {
		if (diff_rules_strings(file, key, v, cause) != 0)
			return -1;
		json_array_foreach(v, i, e) {
			if (diff_rules_add_ignore(rules, json_string_value(e),
			    &why) != 0) {
				xasprintf(cause, "rules file %s: \"ignore\""
				    "[%zu]: %s", file, i, why);
				free(why);
				return -1;
			}
		}
	} else if (strcmp(key, "ignore_methods") == 0) {
		if (diff_rules_strings(file, key, v, cause) != 0)
			return -1;
		json_array_foreach(v, i, e)
			diff_rules_add_method(rules, json_string_value(e));
	} else if (strcmp(key, "normalize") == 0) {
		if (!json_is_array(v)) {
			xasprintf(cause, "rules file %s: \"normalize\" must be "
			    "an array of {\"regex\", \"replace\"} objects",
			    file);
			return -1;
		}
		json_array_foreach(v, i, e) {
			if (diff_rules_load_subst(rules, file, i, e,
			    cause) != 0)
				return -1;
		}
	} else if (strcmp(key, "defaults") == 0) {
		if (!json_is_boolean(v)) {
			xasprintf(cause, "rules file %s: \"defaults\" must be "
			    "true or false", file);
			return -1;
		}
		rules->no_defaults = !json_is_true(v);
	} else {
		xasprintf(cause, "rules file %s: unknown key \"%s\" (expected "
		    DIFF_RULES_KEYS ")", file, key);
		return -1;
	}
	return 0;
}

/*
 * Add the rules in a JSON file to rules: {"ignore": [pattern],
 * "ignore_methods": [method], "normalize": [{"regex", "replace"}],
 * "defaults": bool}, every key optional.  All or nothing: on error rules
 * are unchanged and *cause names the file and what is wrong.
 */
int
diff_rules_load(struct diff_rules *rules, const char *file, char **cause)
{
	struct diff_rules	 tmp;
	json_error_t		 err;
	json_t			*root, *v;
	const char		*key;
	FILE			*f;
	int			 no_defaults;

	if ((f = fopen(file, "r")) == NULL) {
		xasprintf(cause, "cannot open rules file %s: %s", file,
		    strerror(errno));
		return -1;
	}
	root = json_loadf(f, 0, &err);
	fclose(f);
	if (root == NULL) {
		xasprintf(cause, "rules file %s is not valid JSON: %s (line "
		    "%d, column %d)", file, err.text, err.line, err.column);
		return -1;
	}
	if (!json_is_object(root)) {
		xasprintf(cause, "rules file %s: expected a JSON object with "
		    DIFF_RULES_KEYS, file);
		json_decref(root);
		return -1;
	}

	diff_rules_init(&tmp);
	tmp.no_defaults = rules->no_defaults;
	json_object_foreach(root, key, v) {
		if (diff_rules_load_key(&tmp, file, key, v, cause) != 0) {
			diff_rules_clear(&tmp);
			json_decref(root);
			return -1;
		}
	}
	json_decref(root);

	no_defaults = tmp.no_defaults;
	diff_rules_move(rules, &tmp);
	rules->no_defaults = no_defaults;
	return 0;
}

/* Whether answers to this method are not to be compared. */
int
diff_rules_ignores_method(const struct diff_rules *rules, const char *method)
{
	size_t	i;

	if (rules == NULL || method == NULL)
		return 0;
	for (i = 0; i < rules->nignore_methods; i++) {
		if (strcmp(rules->ignore_methods[i], method) == 0)
			return 1;
	}
	return 0;
}

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
		if (jpath_match(w->rules->ignore[i], w->path, w->npath))
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
	for (i = 0; i < w->rules->nsubst; i++)
		out = diff_subst_one(&w->rules->subst[i], out);
	return out;
}

/* The JSON object or array a string holds, or NULL if it holds none. */
static json_t *
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
 * were added.  Either message may be NULL (absent).
 */
size_t
diff_messages(const json_t *recorded, const json_t *replayed,
    const struct diff_rules *rules, struct diff *out)
{
	struct diff_walk	 w;
	size_t			 before = out->n, i;
	char			*cause;

	memset(&w, 0, sizeof w);
	w.rules = rules;
	w.out = out;
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
	free(w.path);
	return out->n - before;
}
