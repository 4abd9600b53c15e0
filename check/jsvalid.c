/*
 * Applying a compiled schema to a value.  Every error becomes one sentence
 * with the value's place as JSONPath ($.a.b[2]) and the keyword's as a
 * JSON Pointer (#/properties/a/type).  Branches tried for anyOf, oneOf,
 * not, if and contains run quietly and stop at their first error.
 *
 * The work is counted (JSCHEMA_MAX_STEPS) and the nesting bounded
 * (JSCHEMA_MAX_DEPTH): past either, validation stops and says so, and
 * nothing found after the stop is reported, since it could be wrong.
 */

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "jsonschema_int.h"

/* The enum values a sentence lists before "...". */
#define JSVALID_ENUM_SHOWN	5
/*
 * |q - round(q)| below which q = value / multipleOf counts as whole:
 * decimal fractions are not exact in binary (0.3 / 0.1 is
 * 2.9999999999999996), and a false error is worse than a missed one.
 * The error of q grows with q (999999.99 / 0.01 is off by 1e-8 in long
 * double), so the bound is relative past the fixed one: a few units in
 * the last place of a double, which is all the value and multipleOf
 * carry.
 */
#define JSVALID_MULTIPLE_EPS	1e-9
#define JSVALID_MULTIPLE_ULPS	4


static int	jsvalid_node(struct jsctx *, const struct jsnode *,
		    const json_t *);

/* jsvalue_equal() on the validation's budget. */
static int
jsvalid_equal(struct jsctx *c, const json_t *a, const json_t *b)
{
	int	r;

	if (c->stopped)
		return 0;
	r = jsvalue_equal(&c->steps, a, b);
	if (c->steps > JSCHEMA_MAX_STEPS)
		c->stopped = 1;
	return r;
}

/* jsvalue_hash() on the validation's budget. */
static uint64_t
jsvalid_hash(struct jsctx *c, const json_t *v)
{
	uint64_t	h = jsvalue_hash(&c->steps, v);

	if (c->steps > JSCHEMA_MAX_STEPS)
		c->stopped = 1;
	return h;
}

/* type, enum, const. */
static int
jsvalid_any(struct jsctx *c, const struct jsnode *n, const json_t *v)
{
	char	 want[128], *got, *list, *q, *tmp;
	size_t	 i;
	int	 errs = 0;

	if (n->types && !jsvalue_type_ok(n->types, v)) {
		jsvalue_types(n->types, want, sizeof want);
		got = jsvalue_describe(v);
		jsreport_err(c, n, "type", "expected %s, got %s", want, got);
		free(got);
		if (c->quiet)
			return 1;
		errs++;
	}
	if (n->has_const && !jsvalid_equal(c, n->constv, v)) {
		q = jsvalue_quote(n->constv);
		got = jsvalue_describe(v);
		jsreport_err(c, n, "const", "expected %s, got %s", q, got);
		free(q);
		free(got);
		if (c->quiet)
			return 1;
		errs++;
	}
	if (n->enumv == NULL)
		return errs;
	for (i = 0; i < json_array_size(n->enumv); i++) {
		if (jsvalid_equal(c, json_array_get(n->enumv, i), v))
			return errs;
	}
	if (json_array_size(n->enumv) == 0)
		jsreport_err(c, n, "enum", "no value is allowed here (the enum "
		    "is empty)");
	else if (!c->quiet && !c->stopped) {
		list = xstrdup("");
		for (i = 0; i < json_array_size(n->enumv) &&
		    i < JSVALID_ENUM_SHOWN; i++) {
			q = jsvalue_quote(json_array_get(n->enumv, i));
			xasprintf(&tmp, "%s%s%s", list, i ? ", " : "", q);
			free(q);
			free(list);
			list = tmp;
		}
		got = jsvalue_describe(v);
		jsreport_err(c, n, "enum", "expected %s%s%s, got %s",
		    json_array_size(n->enumv) == 1 ? "" : "one of ", list,
		    json_array_size(n->enumv) > JSVALID_ENUM_SHOWN ? ", ..." :
		    "", got);
		free(got);
		free(list);
	}
	return errs + 1;
}

/* minLength, maxLength (in code points), pattern, format. */
static int
jsvalid_string(struct jsctx *c, const struct jsnode *n, const json_t *v)
{
	const char	*s = json_string_value(v);
	size_t		 len = json_string_length(v), cps = 0, i;
	char		*q, *pq;
	int		 errs = 0, rc;

	if (n->min_len >= 0 || n->max_len >= 0) {
		for (i = 0; i < len; i++)
			cps += ((unsigned char)s[i] & 0xc0) != 0x80;
		if (jsreport_step(c, len / 64))
			return 1;
	}
	if (n->min_len >= 0 && cps < (uint64_t)n->min_len) {
		jsreport_err(c, n, "minLength", "expected at least %lld "
		    "characters, got %zu", (long long)n->min_len, cps);
		if (c->quiet)
			return 1;
		errs++;
	}
	if (n->max_len >= 0 && cps > (uint64_t)n->max_len) {
		jsreport_err(c, n, "maxLength", "expected at most %lld "
		    "characters, got %zu", (long long)n->max_len, cps);
		if (c->quiet)
			return 1;
		errs++;
	}
	if (n->pattern != NULL && !c->stopped) {
		rc = jsre_match(n->pattern, s, len, &c->steps,
		    JSCHEMA_MAX_STEPS);
		if (rc < 0)
			c->stopped = 1;
		if (rc == 0) {
			q = jsvalue_quote(v);
			pq = jsreport_quote(c, n->pattern_src,
			    strlen(n->pattern_src));
			jsreport_err(c, n, "pattern", "the string %s does not "
			    "match the pattern %s", q, pq ? pq : "");
			free(pq);
			free(q);
		}
		if (rc <= 0) {
			if (c->quiet)
				return 1;
			errs++;
		}
	}
	if (n->format != NULL && !jsfmt_check(n->format, s, len)) {
		q = jsvalue_quote(v);
		jsreport_err(c, n, "format", "the string %s is no valid %s", q,
		    n->format);
		free(q);
		errs++;
	}
	return errs;
}

/* A number against one bound: 1 when it breaks it. */
static int
jsvalid_bound(struct jsctx *c, const struct jsnode *n, const json_t *v,
    const json_t *b, const char *kw, int sign, int exclusive)
{
	char	*got, *bq;
	int	 r = jsvalue_cmp(v, b) * sign;

	if (r > 0 || (r == 0 && !exclusive))
		return 0;
	got = jsvalue_describe(v);
	bq = jsvalue_quote(b);
	jsreport_err(c, n, kw, "expected a number %s %s, got %s", sign > 0 ?
	    (exclusive ? "greater than" : "at least") : (exclusive ?
	    "less than" : "at most"), bq, got);
	free(got);
	free(bq);
	return 1;
}

/* minimum, maximum, their exclusive forms, multipleOf. */
static int
jsvalid_number(struct jsctx *c, const struct jsnode *n, const json_t *v)
{
	const struct {
		const json_t	*b;
		const char	*kw;
		int		 sign, excl;
	} bounds[] = {
		{ n->minimum, "minimum", 1, 0 },
		{ n->xminimum, "exclusiveMinimum", 1, 1 },
		{ n->maximum, "maximum", -1, 0 },
		{ n->xmaximum, "exclusiveMaximum", -1, 1 },
	};
	long double	 q;
	char		*got, *mq;
	size_t		 i;
	int		 errs = 0, bad;

	for (i = 0; i < sizeof bounds / sizeof bounds[0]; i++) {
		if (bounds[i].b == NULL)
			continue;
		if (jsvalid_bound(c, n, v, bounds[i].b, bounds[i].kw,
		    bounds[i].sign, bounds[i].excl)) {
			if (c->quiet)
				return 1;
			errs++;
		}
	}
	if (n->multiple == NULL)
		return errs;
	if (json_is_integer(v) && json_is_integer(n->multiple))
		bad = json_integer_value(v) % json_integer_value(n->multiple)
		    != 0;
	else {
		q = jsvalue_ld(v) / jsvalue_ld(n->multiple);
		bad = isfinite(q) && fabsl(q - nearbyintl(q)) >
		    fmaxl(JSVALID_MULTIPLE_EPS, fabsl(q) *
		    JSVALID_MULTIPLE_ULPS * DBL_EPSILON);
	}
	if (bad) {
		got = jsvalue_describe(v);
		mq = jsvalue_quote(n->multiple);
		jsreport_err(c, n, "multipleOf", "expected a multiple of %s, "
		    "got %s", mq, got);
		free(got);
		free(mq);
		errs++;
	}
	return errs;
}

/* bsearch() of a name among the sorted properties. */
static int
jsvalid_named_cmp(const void *key, const void *e)
{
	return strcmp(key, ((const struct jsnamed *)e)->name);
}

/* A subschema applied to a member or item whose path is pushed. */
static int
jsvalid_child(struct jsctx *c, const struct jsnode *n, const json_t *v,
    size_t old)
{
	int	errs = jsvalid_node(c, n, v);

	jsreport_pop(c, old);
	return errs;
}

/* Each member against properties, patternProperties, additionalProperties
 * and propertyNames. */
static int
jsvalid_members(struct jsctx *c, const struct jsnode *n, const json_t *v)
{
	const char	*k;
	const json_t	*e;
	json_t		*name;
	char		*q;
	size_t		 i, klen;
	int		 errs = 0, matched, rc;

	json_object_foreach((json_t *)v, k, e) {
		if (jsreport_step(c, 1))
			return errs + 1;
		klen = strlen(k);
		matched = 0;
		if (n->nprops > 0 && bsearch(k, n->props, n->nprops,
		    sizeof *n->props, jsvalid_named_cmp) != NULL)
			matched = 1;
		for (i = 0; i < n->npatterns; i++) {
			if (n->patterns[i].re == NULL)
				continue;
			rc = jsre_match(n->patterns[i].re, k, klen, &c->steps,
			    JSCHEMA_MAX_STEPS);
			if (rc < 0) {
				c->stopped = 1;
				return errs + 1;
			}
			if (rc == 0)
				continue;
			matched = 1;
			errs += jsvalid_child(c, n->patterns[i].node, e,
			    jsreport_push_key(c, k, klen));
			if (errs && c->quiet)
				return errs;
		}
		if (!matched && n->additional != NULL && !n->no_additional) {
			if (n->additional->boolean == 0) {
				q = jsreport_quote(c, k, klen);
				jsreport_err(c, n, "additionalProperties",
				    "unexpected property %s (the schema "
				    "allows no others)", q ? q : "");
				free(q);
				errs++;
			} else
				errs += jsvalid_child(c, n->additional, e,
				    jsreport_push_key(c, k, klen));
			if (errs && c->quiet)
				return errs;
		}
		if (n->propnames != NULL) {
			name = json_stringn(k, klen);
			c->quiet++;
			rc = jsvalid_node(c, n->propnames, name);
			c->quiet--;
			if (rc != 0) {
				q = jsreport_quote(c, k, klen);
				jsreport_err(c, n, "propertyNames", "the "
				    "property name %s does not match "
				    "propertyNames", q ? q : "");
				free(q);
				errs++;
			}
			json_decref(name);
			if (errs && c->quiet)
				return errs;
		}
	}
	return errs;
}

/* The object keywords. */
static int
jsvalid_object(struct jsctx *c, const struct jsnode *n, const json_t *v)
{
	const json_t	*e;
	char		*q, *q2;
	size_t		 i, j, size = json_object_size(v);
	int		 errs = 0;

	/* Each name looked up is a step, as each member visited. */
	if (jsreport_step(c, n->nrequired + n->nprops + n->ndepreq +
	    n->ndepschema))
		return 1;
	for (i = 0; i < n->nrequired; i++) {
		if (json_object_get(v, n->required[i]) != NULL)
			continue;
		q = jsreport_quote(c, n->required[i], strlen(n->required[i]));
		jsreport_err(c, n, "required", "missing required property %s",
		    q ? q : "");
		free(q);
		if (c->quiet)
			return 1;
		errs++;
	}
	if (n->min_props >= 0 && size < (uint64_t)n->min_props) {
		jsreport_err(c, n, "minProperties", "expected at least %lld "
		    "properties, got %zu", (long long)n->min_props, size);
		errs++;
	}
	if (n->max_props >= 0 && size > (uint64_t)n->max_props) {
		jsreport_err(c, n, "maxProperties", "expected at most %lld "
		    "properties, got %zu", (long long)n->max_props, size);
		errs++;
	}
	if (errs && c->quiet)
		return errs;
	for (i = 0; i < n->nprops; i++) {
		if ((e = json_object_get(v, n->props[i].name)) == NULL)
			continue;
		errs += jsvalid_child(c, n->props[i].node, e,
		    jsreport_push_key(c, n->props[i].name,
		    strlen(n->props[i].name)));
		if (errs && c->quiet)
			return errs;
	}
	if (n->npatterns > 0 || n->additional != NULL || n->propnames != NULL)
		errs += jsvalid_members(c, n, v);
	if (errs && c->quiet)
		return errs;
	for (i = 0; i < n->ndepreq; i++) {
		if (json_object_get(v, n->depreq[i].name) == NULL)
			continue;
		if (jsreport_step(c, n->depreq[i].nreq))
			return errs + 1;
		for (j = 0; j < n->depreq[i].nreq; j++) {
			if (json_object_get(v, n->depreq[i].req[j]) != NULL)
				continue;
			q = jsreport_quote(c, n->depreq[i].name,
			    strlen(n->depreq[i].name));
			q2 = jsreport_quote(c, n->depreq[i].req[j],
			    strlen(n->depreq[i].req[j]));
			jsreport_err(c, n, c->s->draft == JSCHEMA_D07 ?
			    "dependencies" : "dependentRequired", "property "
			    "%s requires property %s, which is missing",
			    q ? q : "", q2 ? q2 : "");
			free(q);
			free(q2);
			if (c->quiet)
				return 1;
			errs++;
		}
	}
	for (i = 0; i < n->ndepschema; i++) {
		if (json_object_get(v, n->depschema[i].name) == NULL)
			continue;
		errs += jsvalid_node(c, n->depschema[i].node, v);
		if (errs && c->quiet)
			return errs;
	}
	return errs;
}

struct jsvalid_hashed {
	uint64_t	h;
	size_t		i;
};

/* qsort() order of hashed items: by hash, then by index. */
static int
jsvalid_hashed_cmp(const void *a, const void *b)
{
	const struct jsvalid_hashed	*x = a, *y = b;

	if (x->h != y->h)
		return x->h < y->h ? -1 : 1;
	return x->i < y->i ? -1 : x->i > y->i;
}

/* uniqueItems: hash, sort, compare only equal hashes; 1 on a repeat. */
static int
jsvalid_unique(struct jsctx *c, const struct jsnode *n, const json_t *v)
{
	struct jsvalid_hashed	*hs;
	size_t			 i, j, len = json_array_size(v);
	int			 dup = 0;

	if (len < 2)
		return 0;
	hs = xcalloc(len, sizeof *hs);
	for (i = 0; i < len && !c->stopped; i++) {
		hs[i].h = jsvalid_hash(c, json_array_get(v, i));
		hs[i].i = i;
	}
	if (!c->stopped)
		qsort(hs, len, sizeof *hs, jsvalid_hashed_cmp);
	for (i = 0; i + 1 < len && !dup && !c->stopped; i++) {
		for (j = i + 1; j < len && hs[j].h == hs[i].h && !dup; j++) {
			if (jsvalid_equal(c, json_array_get(v, hs[i].i),
			    json_array_get(v, hs[j].i))) {
				jsreport_err(c, n, "uniqueItems", "items %zu and "
				    "%zu are equal, and the items must be "
				    "unique", hs[i].i, hs[j].i);
				dup = 1;
			}
		}
	}
	free(hs);
	return dup || c->stopped;
}

/* contains, minContains, maxContains. */
static int
jsvalid_contains(struct jsctx *c, const struct jsnode *n, const json_t *v)
{
	size_t		 i, hits = 0, len = json_array_size(v);
	long long	 min = n->min_contains >= 0 ? n->min_contains : 1;

	c->quiet++;
	for (i = 0; i < len && !c->stopped; i++)
		hits += jsvalid_node(c, n->contains, json_array_get(v, i)) == 0;
	c->quiet--;
	if (c->stopped)
		return 1;
	if (hits < (size_t)min) {
		if (min == 1)
			jsreport_err(c, n, "contains", "no item matches the "
			    "schema of contains");
		else
			jsreport_err(c, n, n->min_contains >= 0 ?
			    "minContains" : "contains", "%zu items match the "
			    "schema of contains, at least %lld needed", hits,
			    min);
		return 1;
	}
	if (n->max_contains >= 0 && hits > (size_t)n->max_contains) {
		jsreport_err(c, n, "maxContains", "%zu items match the schema of "
		    "contains, at most %lld allowed", hits,
		    (long long)n->max_contains);
		return 1;
	}
	return 0;
}

/* The array keywords. */
static int
jsvalid_array(struct jsctx *c, const struct jsnode *n, const json_t *v)
{
	size_t	i, len = json_array_size(v), start = 0;
	int	errs = 0;

	if (n->min_items >= 0 && len < (uint64_t)n->min_items) {
		jsreport_err(c, n, "minItems", "expected at least %lld items, "
		    "got %zu", (long long)n->min_items, len);
		errs++;
	}
	if (n->max_items >= 0 && len > (uint64_t)n->max_items) {
		jsreport_err(c, n, "maxItems", "expected at most %lld items, "
		    "got %zu", (long long)n->max_items, len);
		errs++;
	}
	if (errs && c->quiet)
		return errs;
	if (n->has_prefix) {
		for (i = 0; i < len && i < n->prefix.n; i++) {
			errs += jsvalid_child(c, n->prefix.v[i],
			    json_array_get(v, i), jsreport_push_index(c, i));
			if ((errs && c->quiet) || c->stopped)
				return errs + c->stopped;
		}
		start = n->prefix.n;
	}
	if (n->items != NULL) {
		for (i = start; i < len; i++) {
			errs += jsvalid_child(c, n->items, json_array_get(v, i),
			    jsreport_push_index(c, i));
			if ((errs && c->quiet) || c->stopped)
				return errs + c->stopped;
		}
	}
	if (n->contains != NULL)
		errs += jsvalid_contains(c, n, v);
	if (n->unique && (!errs || !c->quiet))
		errs += jsvalid_unique(c, n, v);
	return errs;
}

/* allOf, anyOf, oneOf, not, if/then/else. */
static int
jsvalid_logic(struct jsctx *c, const struct jsnode *n, const json_t *v)
{
	size_t	i, first = 0, hits = 0;
	int	errs = 0, ok;

	for (i = 0; i < n->all.n; i++) {
		errs += jsvalid_node(c, n->all.v[i], v);
		if (errs && c->quiet)
			return errs;
	}
	if (n->any.n > 0) {
		c->quiet++;
		for (ok = 0, i = 0; i < n->any.n && !ok && !c->stopped; i++)
			ok = jsvalid_node(c, n->any.v[i], v) == 0;
		c->quiet--;
		if (!ok) {
			jsreport_err(c, n, "anyOf", "matches none of the %zu "
			    "schemas of anyOf", n->any.n);
			if (c->quiet)
				return 1;
			errs++;
		}
	}
	if (n->one.n > 0) {
		c->quiet++;
		for (i = 0; i < n->one.n && hits < 2 && !c->stopped; i++) {
			if (jsvalid_node(c, n->one.v[i], v) == 0) {
				if (hits++ == 0)
					first = i;
				else
					break;
			}
		}
		c->quiet--;
		if (hits != 1) {
			if (hits == 0)
				jsreport_err(c, n, "oneOf", "matches none of the "
				    "%zu schemas of oneOf", n->one.n);
			else
				jsreport_err(c, n, "oneOf", "matches schemas %zu "
				    "and %zu of oneOf, and must match exactly "
				    "one", first, i);
			if (c->quiet)
				return 1;
			errs++;
		}
	}
	if (n->not != NULL) {
		c->quiet++;
		ok = jsvalid_node(c, n->not, v) == 0;
		c->quiet--;
		if (ok) {
			jsreport_err(c, n, "not", "matches the schema of not, "
			    "and must not");
			if (c->quiet)
				return 1;
			errs++;
		}
	}
	if (n->if_ != NULL) {
		c->quiet++;
		ok = jsvalid_node(c, n->if_, v) == 0;
		c->quiet--;
		if (ok && n->then_ != NULL)
			errs += jsvalid_node(c, n->then_, v);
		else if (!ok && n->else_ != NULL)
			errs += jsvalid_node(c, n->else_, v);
	}
	return errs;
}

/* One schema applied to one value: the number of errors (quiet: 0 or 1). */
static int
jsvalid_node(struct jsctx *c, const struct jsnode *n, const json_t *v)
{
	int	errs = 0;

	if (jsreport_step(c, 1))
		return 1;
	if (n->boolean == 1)
		return 0;
	if (n->boolean == 0) {
		jsreport_err(c, n, NULL, "no value is allowed here (the schema "
		    "is false)");
		return 1;
	}
	if (c->depth >= JSCHEMA_MAX_DEPTH) {
		if (!c->stopped)
			c->stopped = 2;
		return 1;
	}
	c->depth++;
	if (n->ref != NULL)
		errs += jsvalid_node(c, n->ref, v);
	if (!(errs && c->quiet))
		errs += jsvalid_any(c, n, v);
	if (!(errs && c->quiet)) {
		if (json_is_string(v))
			errs += jsvalid_string(c, n, v);
		else if (json_is_number(v))
			errs += jsvalid_number(c, n, v);
		else if (json_is_object(v))
			errs += jsvalid_object(c, n, v);
		else if (json_is_array(v))
			errs += jsvalid_array(c, n, v);
	}
	if (!(errs && c->quiet))
		errs += jsvalid_logic(c, n, v);
	c->depth--;
	if (c->stopped)
		return errs ? errs : 1;
	return errs;
}

/* jschema_validate()'s body: errors reported, then why it stopped. */
int
jsvalid_run(const struct jschema *s, const json_t *v, jschema_error_cb cb,
    void *arg, struct jschema_run *run)
{
	struct jsctx	 c;
	char		*text;
	int		 errs;

	memset(&c, 0, sizeof c);
	c.s = s;
	c.cb = cb;
	c.arg = arg;
	jsreport_path_add(&c, "$", 1);
	errs = jsvalid_node(&c, s->root, v);
	if (c.reported > JSCHEMA_MAX_ERRORS && cb != NULL) {
		xasprintf(&text, "and %d more errors (only the first %d are "
		    "said)", c.reported - JSCHEMA_MAX_ERRORS,
		    JSCHEMA_MAX_ERRORS);
		cb(arg, "$", "#", text);
		free(text);
	}
	if (c.stopped) {
		if (c.stopped == 1)
			xasprintf(&text, "the schema is too costly to check "
			    "against this value: stopped after %d steps of "
			    "work", JSCHEMA_MAX_STEPS);
		else
			xasprintf(&text, "the schema nests deeper than %d "
			    "levels on this value (a $ref that loops without "
			    "going into the value?): not checked further",
			    JSCHEMA_MAX_DEPTH);
		/* With run, the stop is said there, as data, not as an
		   error of the value. */
		if (cb != NULL && run == NULL)
			cb(arg, "$", "#", text);
		free(text);
		c.reported++;
	}
	free(c.ipath);
	if (run != NULL) {
		run->steps = c.steps;
		run->stopped = c.stopped == 1 ? JSCHEMA_STOP_COSTLY :
		    c.stopped ? JSCHEMA_STOP_DEEP : 0;
	}
	/*
	 * The count is of the errors found (said or only counted) and the
	 * stop; an error found but not reported (quiet) is one.
	 */
	return c.reported > 0 ? c.reported : errs > 0;
}
