/*
 * Compiling a JSON Schema (draft-07 or 2020-12) into nodes: each keyword
 * is read once, its value checked (a schema that misuses a keyword is
 * refused, saying which and where), its regexes compiled, its local $ref
 * resolved to the node it names.  What cannot be applied faithfully (a
 * remote $ref, a regex construct the matcher lacks, unevaluated*) is left
 * out with a note, so it can never cause a false error.
 *
 * $ref targets are compiled from a work list, not by recursion, and every
 * node is remembered by the JSON value it came from: a $ref cycle becomes
 * a cycle of pointers, and no subschema is compiled twice.
 */

#include <stdlib.h>
#include <string.h>

#include "jsonschema_int.h"

/* The compiler's state. */
struct jscomp {
	struct jschema	 *s;
	const json_t	**mkeys;	/* the memo: schema object -> node */
	struct jsnode	**mvals;
	size_t		  mcap, mn;
	struct jsnode	**pending;	/* nodes whose $ref is unresolved */
	size_t		  npending, pendcap;
	char		 *err;
};

static struct jsnode	*jschema_node(struct jscomp *, const json_t *,
			    const char *, int);

static const char *
jschema_json_kind(const json_t *v)
{
	switch (json_typeof(v)) {
	case JSON_OBJECT: return "an object";
	case JSON_ARRAY: return "an array";
	case JSON_STRING: return "a string";
	case JSON_INTEGER: return "an integer";
	case JSON_REAL: return "a number";
	case JSON_TRUE: return "true";
	case JSON_FALSE: return "false";
	default: return "null";
	}
}

/* Fail the compile with a sentence (the first failure wins). */
static void PRINTFLIKE(2, 3)
jschema_fail(struct jscomp *c, const char *fmt, ...)
{
	va_list	ap;
	char	*msg;

	if (c->err != NULL)
		return;
	va_start(ap, fmt);
	if (vasprintf(&msg, fmt, ap) == -1)
		msg = xstrdup("the schema cannot be used (out of memory)");
	va_end(ap);
	c->err = msg;
}

/* Note something left out (bounded: the rest are counted). */
static void PRINTFLIKE(2, 3)
jschema_notef(struct jschema *s, const char *fmt, ...)
{
	va_list	ap;
	char	*msg;

	if (s->nnotes >= JSCHEMA_MAX_NOTES) {
		s->notes_dropped++;
		return;
	}
	va_start(ap, fmt);
	if (vasprintf(&msg, fmt, ap) == -1)
		msg = NULL;
	va_end(ap);
	if (msg == NULL)
		return;
	s->notes = xreallocarray(s->notes, s->nnotes + 2, sizeof *s->notes);
	s->notes[s->nnotes++] = msg;
}

/* parent + "/" + key, the key escaped as JSON Pointer wants (~0 ~1). */
static char *
jschema_path(const char *parent, const char *key)
{
	size_t	 plen = strlen(parent), i, o;
	char	*out;

	out = xmalloc(plen + 2 * strlen(key) + 2);
	memcpy(out, parent, plen);
	o = plen;
	out[o++] = '/';
	for (i = 0; key[i] != '\0'; i++) {
		if (key[i] == '~' || key[i] == '/') {
			out[o++] = '~';
			out[o++] = key[i] == '~' ? '0' : '1';
		} else
			out[o++] = key[i];
	}
	out[o] = '\0';
	return out;
}

static char *
jschema_path_index(const char *parent, const char *key, size_t i)
{
	char	*p, *q;

	p = jschema_path(parent, key);
	xasprintf(&q, "%s/%zu", p, i);
	free(p);
	return q;
}

/* The memo's slot for a schema object. */
static size_t
jschema_memo_slot(const struct jscomp *c, const json_t *k)
{
	size_t	h = (size_t)(uintptr_t)k;

	h ^= h >> 17;
	h *= 0x9e3779b97f4a7c15ULL;
	h &= c->mcap - 1;
	while (c->mkeys[h] != NULL && c->mkeys[h] != k)
		h = (h + 1) & (c->mcap - 1);
	return h;
}

static void
jschema_memo_put(struct jscomp *c, const json_t *k, struct jsnode *n)
{
	const json_t	**okeys = c->mkeys;
	struct jsnode	**ovals = c->mvals;
	size_t		  ocap = c->mcap, i, h;

	if (2 * (c->mn + 1) > c->mcap) {
		c->mcap = c->mcap ? c->mcap * 2 : 64;
		c->mkeys = xcalloc(c->mcap, sizeof *c->mkeys);
		c->mvals = xcalloc(c->mcap, sizeof *c->mvals);
		for (i = 0; i < ocap; i++) {
			if (okeys[i] == NULL)
				continue;
			h = jschema_memo_slot(c, okeys[i]);
			c->mkeys[h] = okeys[i];
			c->mvals[h] = ovals[i];
		}
		free(okeys);
		free(ovals);
	}
	h = jschema_memo_slot(c, k);
	c->mkeys[h] = k;
	c->mvals[h] = n;
	c->mn++;
}

static struct jsnode *
jschema_memo_get(struct jscomp *c, const json_t *k)
{
	size_t	h;

	if (c->mcap == 0)
		return NULL;
	h = jschema_memo_slot(c, k);
	return c->mkeys[h] == k ? c->mvals[h] : NULL;
}

static struct jsnode *
jschema_node_new(struct jscomp *c, const char *path, int boolean)
{
	struct jschema	*s = c->s;
	struct jsnode	*n;

	n = xcalloc(1, sizeof *n);
	n->path = xstrdup(path);
	n->boolean = boolean;
	n->min_props = n->max_props = -1;
	n->min_contains = n->max_contains = -1;
	n->min_items = n->max_items = -1;
	n->min_len = n->max_len = -1;
	if (s->nnodes == s->nodecap) {
		s->nodecap = s->nodecap ? s->nodecap * 2 : 16;
		s->nodes = xreallocarray(s->nodes, s->nodecap,
		    sizeof *s->nodes);
	}
	s->nodes[s->nnodes++] = n;
	return n;
}

/* A subschema under key (key/name with name set), or NULL if absent. */
static struct jsnode *
jschema_sub(struct jscomp *c, const json_t *obj, const char *path,
    const char *key, const char *name, int depth)
{
	const json_t	*v;
	struct jsnode	*n;
	char		*p, *p2;

	if ((v = json_object_get(obj, key)) == NULL)
		return NULL;
	if (name != NULL && (v = json_object_get(v, name)) == NULL)
		return NULL;
	p = jschema_path(path, key);
	if (name != NULL) {
		p2 = jschema_path(p, name);
		free(p);
		p = p2;
	}
	n = jschema_node(c, v, p, depth + 1);
	free(p);
	return n;
}

/* A count keyword: absent (-1), or a non-negative integer (2.0 is one). */
static int64_t
jschema_count(struct jscomp *c, const json_t *obj, const char *path,
    const char *key)
{
	const json_t	*v;
	double		 d;

	if ((v = json_object_get(obj, key)) == NULL)
		return -1;
	if (json_is_integer(v) && json_integer_value(v) >= 0)
		return json_integer_value(v);
	if (json_is_real(v)) {
		d = json_real_value(v);
		if (d >= 0 && d == (double)(int64_t)d && d < 9.2e18)
			return (int64_t)d;
	}
	jschema_fail(c, "%s/%s: \"%s\" must be a non-negative integer, not "
	    "%s", path, key, key, jschema_json_kind(v));
	return -1;
}

/* A number keyword (minimum, maximum, multipleOf...), or NULL if absent. */
static const json_t *
jschema_number(struct jscomp *c, const json_t *obj, const char *path,
    const char *key)
{
	const json_t	*v;

	if ((v = json_object_get(obj, key)) == NULL || json_is_number(v))
		return v;
	jschema_fail(c, "%s/%s: \"%s\" must be a number, not %s", path, key,
	    key, jschema_json_kind(v));
	return NULL;
}

/* An array of subschemas (allOf, anyOf, oneOf, prefixItems, items). */
static void
jschema_list(struct jscomp *c, const json_t *obj, const char *path,
    const char *key, struct jslist *l, int depth)
{
	const json_t	*v = json_object_get(obj, key);
	size_t		 i;
	char		*p;

	if (v == NULL)
		return;
	if (!json_is_array(v) || (json_array_size(v) == 0 &&
	    strcmp(key, "prefixItems") != 0 && strcmp(key, "items") != 0)) {
		jschema_fail(c, "%s/%s: \"%s\" must be a non-empty array of "
		    "schemas, not %s", path, key, key, json_is_array(v) ?
		    "an empty array" : jschema_json_kind(v));
		return;
	}
	l->n = json_array_size(v);
	l->v = xcalloc(l->n ? l->n : 1, sizeof *l->v);
	for (i = 0; i < l->n && c->err == NULL; i++) {
		p = jschema_path_index(path, key, i);
		l->v[i] = jschema_node(c, json_array_get(v, i), p, depth + 1);
		free(p);
	}
}

/* An array of strings (required, dependentRequired values). */
static const char **
jschema_strings(struct jscomp *c, const json_t *v, const char *where,
    size_t *np)
{
	const char	**out;
	size_t		  i, n;

	*np = 0;
	if (!json_is_array(v)) {
		jschema_fail(c, "%s: must be an array of strings, not %s", where,
		    jschema_json_kind(v));
		return NULL;
	}
	n = json_array_size(v);
	out = xcalloc(n ? n : 1, sizeof *out);
	for (i = 0; i < n; i++) {
		if (!json_is_string(json_array_get(v, i))) {
			jschema_fail(c, "%s/%zu: must be a string, not %s",
			    where, i, jschema_json_kind(json_array_get(v, i)));
			free(out);
			return NULL;
		}
		out[i] = json_string_value(json_array_get(v, i));
	}
	*np = n;
	return out;
}

/* "type": a name or an array of names. */
static void
jschema_type(struct jscomp *c, struct jsnode *n, const json_t *v)
{
	static const struct {
		const char	*name;
		unsigned int	 bit;
	} names[] = {
		{ "null", JST_NULL }, { "boolean", JST_BOOLEAN },
		{ "object", JST_OBJECT }, { "array", JST_ARRAY },
		{ "number", JST_NUMBER }, { "string", JST_STRING },
		{ "integer", JST_INTEGER },
	};
	const json_t	*e;
	size_t		 i, j, n_;

	n_ = json_is_array(v) ? json_array_size(v) : 1;
	for (i = 0; i < n_; i++) {
		e = json_is_array(v) ? json_array_get(v, i) : v;
		if (!json_is_string(e)) {
			jschema_fail(c, "%s/type: \"type\" must be a type name "
			    "or an array of them, not %s", n->path,
			    jschema_json_kind(e));
			return;
		}
		for (j = 0; j < sizeof names / sizeof names[0]; j++) {
			if (strcmp(json_string_value(e), names[j].name) == 0)
				break;
		}
		if (j == sizeof names / sizeof names[0]) {
			jschema_fail(c, "%s/type: \"%s\" is no JSON Schema type "
			    "(null, boolean, object, array, number, string, "
			    "integer)", n->path, json_string_value(e));
			return;
		}
		n->types |= names[j].bit;
	}
}

static int
jschema_named_cmp(const void *a, const void *b)
{
	return strcmp(((const struct jsnamed *)a)->name,
	    ((const struct jsnamed *)b)->name);
}

/* An object of subschemas (properties, dependentSchemas), sorted. */
static struct jsnamed *
jschema_named(struct jscomp *c, const json_t *obj, const char *path,
    const char *key, size_t *np, int depth)
{
	const json_t	*v = json_object_get(obj, key), *sub;
	struct jsnamed	*out;
	const char	*name;
	size_t		 i = 0;

	*np = 0;
	if (v == NULL)
		return NULL;
	if (!json_is_object(v)) {
		jschema_fail(c, "%s/%s: \"%s\" must be an object of schemas, "
		    "not %s", path, key, key, jschema_json_kind(v));
		return NULL;
	}
	out = xcalloc(json_object_size(v) + 1, sizeof *out);
	json_object_foreach((json_t *)v, name, sub) {
		out[i].name = name;
		out[i].node = jschema_sub(c, obj, path, key, name, depth);
		i++;
		if (c->err != NULL)
			break;
	}
	*np = i;
	qsort(out, i, sizeof *out, jschema_named_cmp);
	return out;
}

/* patternProperties: each regex compiled; an unsupported one is noted. */
static void
jschema_patterns(struct jscomp *c, struct jsnode *n, const json_t *obj,
    int depth)
{
	const json_t	*v = json_object_get(obj, "patternProperties"), *sub;
	const char	*name;
	char		*why = NULL;
	size_t		 i = 0;

	if (v == NULL)
		return;
	if (!json_is_object(v)) {
		jschema_fail(c, "%s/patternProperties: must be an object of "
		    "schemas, not %s", n->path, jschema_json_kind(v));
		return;
	}
	n->patterns = xcalloc(json_object_size(v) + 1, sizeof *n->patterns);
	json_object_foreach((json_t *)v, name, sub) {
		n->patterns[i].src = name;
		n->patterns[i].node = jschema_sub(c, obj, n->path,
		    "patternProperties", name, depth);
		n->patterns[i].re = jsre_compile(name, strlen(name), &why);
		if (n->patterns[i].re == NULL) {
			jschema_notef(c->s, "%s/patternProperties: the pattern "
			    "\"%s\" uses %s, which is not supported: its "
			    "properties are not checked, nor is "
			    "additionalProperties", n->path, name, why);
			free(why);
			why = NULL;
			n->no_additional = 1;
		}
		i++;
		if (c->err != NULL)
			break;
	}
	n->npatterns = i;
}

/* The dependencies family: names to required names, or to schemas. */
static void
jschema_deps(struct jscomp *c, struct jsnode *n, const json_t *obj,
    int depth)
{
	static const char *const keys[] = { "dependencies",
	    "dependentRequired", "dependentSchemas" };
	const json_t	*v, *sub;
	const char	*name;
	char		*where, *p;
	size_t		 k, nreq, nd = 0, ns = 0, cap;

	cap = 0;
	for (k = 0; k < 3; k++) {
		if ((v = json_object_get(obj, keys[k])) != NULL &&
		    json_is_object(v))
			cap += json_object_size(v);
	}
	n->depreq = xcalloc(cap + 1, sizeof *n->depreq);
	n->depschema = xcalloc(cap + 1, sizeof *n->depschema);
	for (k = 0; k < 3 && c->err == NULL; k++) {
		/* The 2019-09 split of dependencies is not in draft-07. */
		if (k > 0 && c->s->draft == JSCHEMA_D07)
			break;
		if ((v = json_object_get(obj, keys[k])) == NULL)
			continue;
		if (!json_is_object(v)) {
			jschema_fail(c, "%s/%s: \"%s\" must be an object, not "
			    "%s", n->path, keys[k], keys[k],
			    jschema_json_kind(v));
			return;
		}
		json_object_foreach((json_t *)v, name, sub) {
			if (k == 1 || (k == 0 && json_is_array(sub))) {
				p = jschema_path(n->path, keys[k]);
				where = jschema_path(p, name);
				free(p);
				n->depreq[nd].req = jschema_strings(c, sub,
				    where, &nreq);
				free(where);
				n->depreq[nd].name = name;
				n->depreq[nd++].nreq = nreq;
			} else {
				n->depschema[ns].name = name;
				n->depschema[ns++].node = jschema_sub(c, obj,
				    n->path, keys[k], name, depth);
			}
			if (c->err != NULL)
				break;
		}
	}
	n->ndepreq = nd;
	n->ndepschema = ns;
}

/* The array keywords, as the draft reads them. */
static void
jschema_arrays(struct jscomp *c, struct jsnode *n, const json_t *obj,
    int depth)
{
	const json_t	*items = json_object_get(obj, "items");

	if (items != NULL && json_is_array(items)) {
		/* The tuple form: draft-07's, accepted in 2020-12 too. */
		jschema_list(c, obj, n->path, "items", &n->prefix, depth);
		n->has_prefix = 1;
		n->items = jschema_sub(c, obj, n->path, "additionalItems",
		    NULL, depth);
	} else {
		if (c->s->draft == JSCHEMA_D2020) {
			jschema_list(c, obj, n->path, "prefixItems",
			    &n->prefix, depth);
			n->has_prefix = json_object_get(obj, "prefixItems") !=
			    NULL;
		}
		n->items = jschema_sub(c, obj, n->path, "items", NULL, depth);
	}
	n->contains = jschema_sub(c, obj, n->path, "contains", NULL, depth);
	if (c->s->draft == JSCHEMA_D2020) {
		n->min_contains = jschema_count(c, obj, n->path, "minContains");
		n->max_contains = jschema_count(c, obj, n->path, "maxContains");
	}
	n->min_items = jschema_count(c, obj, n->path, "minItems");
	n->max_items = jschema_count(c, obj, n->path, "maxItems");
	if (json_object_get(obj, "uniqueItems") != NULL) {
		if (!json_is_boolean(json_object_get(obj, "uniqueItems")))
			jschema_fail(c, "%s/uniqueItems: must be true or false",
			    n->path);
		n->unique = json_is_true(json_object_get(obj, "uniqueItems"));
	}
}

/* The number keywords; a boolean exclusive* is draft-04's form. */
static void
jschema_numbers(struct jscomp *c, struct jsnode *n, const json_t *obj)
{
	const json_t	*x;
	double		 d;

	n->minimum = jschema_number(c, obj, n->path, "minimum");
	n->maximum = jschema_number(c, obj, n->path, "maximum");
	if ((x = json_object_get(obj, "exclusiveMinimum")) != NULL &&
	    json_is_boolean(x)) {
		if (json_is_true(x)) {
			n->xminimum = n->minimum;
			n->minimum = NULL;
		}
	} else
		n->xminimum = jschema_number(c, obj, n->path,
		    "exclusiveMinimum");
	if ((x = json_object_get(obj, "exclusiveMaximum")) != NULL &&
	    json_is_boolean(x)) {
		if (json_is_true(x)) {
			n->xmaximum = n->maximum;
			n->maximum = NULL;
		}
	} else
		n->xmaximum = jschema_number(c, obj, n->path,
		    "exclusiveMaximum");
	if ((n->multiple = jschema_number(c, obj, n->path, "multipleOf")) !=
	    NULL) {
		d = json_number_value(n->multiple);
		if (!(d > 0)) {
			jschema_fail(c, "%s/multipleOf: must be greater than 0",
			    n->path);
			n->multiple = NULL;
		}
	}
}

/* The string keywords. */
static void
jschema_strings_kw(struct jscomp *c, struct jsnode *n, const json_t *obj)
{
	const json_t	*v;
	char		*why = NULL;

	n->min_len = jschema_count(c, obj, n->path, "minLength");
	n->max_len = jschema_count(c, obj, n->path, "maxLength");
	if ((v = json_object_get(obj, "pattern")) != NULL) {
		if (!json_is_string(v)) {
			jschema_fail(c, "%s/pattern: must be a string, not %s",
			    n->path, jschema_json_kind(v));
			return;
		}
		n->pattern_src = json_string_value(v);
		n->pattern = jsre_compile(json_string_value(v),
		    json_string_length(v), &why);
		if (n->pattern == NULL) {
			jschema_notef(c->s, "%s/pattern: \"%s\" uses %s, which "
			    "is not supported: the pattern is not checked",
			    n->path, json_string_value(v), why);
			free(why);
		}
	}
	if ((v = json_object_get(obj, "format")) != NULL) {
		if (!json_is_string(v))
			jschema_fail(c, "%s/format: must be a string, not %s",
			    n->path, jschema_json_kind(v));
		else if ((c->s->flags & JSCHEMA_FORMAT_ASSERT) &&
		    jsfmt_known(json_string_value(v)))
			n->format = json_string_value(v);
	}
}

/* Keywords noted as not supported: they are left out, never guessed. */
static void
jschema_unsupported(struct jscomp *c, struct jsnode *n, const json_t *obj)
{
	static const char *const keys[] = { "unevaluatedProperties",
	    "unevaluatedItems", "$dynamicRef", "$recursiveRef" };
	size_t	i;

	for (i = 0; i < sizeof keys / sizeof keys[0]; i++) {
		if (json_object_get(obj, keys[i]) != NULL)
			jschema_notef(c->s, "%s/%s: \"%s\" is not supported: it "
			    "is not checked", n->path, keys[i], keys[i]);
	}
}

/* Compile one schema (object or boolean) at path. */
static struct jsnode *
jschema_node(struct jscomp *c, const json_t *v, const char *path, int depth)
{
	struct jsnode	*n;
	const json_t	*x;

	if (c->err != NULL)
		return NULL;
	if (json_is_boolean(v))
		return jschema_node_new(c, path, json_is_true(v));
	if (!json_is_object(v)) {
		jschema_fail(c, "%s: a schema must be an object or a boolean, "
		    "not %s", path, jschema_json_kind(v));
		return NULL;
	}
	if ((n = jschema_memo_get(c, v)) != NULL)
		return n;
	if (depth > JSCHEMA_MAX_DEPTH) {
		jschema_fail(c, "%s: subschemas nest deeper than %d levels",
		    path, JSCHEMA_MAX_DEPTH);
		return NULL;
	}
	n = jschema_node_new(c, path, -1);
	jschema_memo_put(c, v, n);

	if ((x = json_object_get(v, "type")) != NULL)
		jschema_type(c, n, x);
	if ((x = json_object_get(v, "enum")) != NULL) {
		if (!json_is_array(x))
			jschema_fail(c, "%s/enum: \"enum\" must be an array, not "
			    "%s", path, jschema_json_kind(x));
		n->enumv = x;
	}
	if ((x = json_object_get(v, "const")) != NULL) {
		n->constv = x;
		n->has_const = 1;
	}
	if ((x = json_object_get(v, "$ref")) != NULL) {
		if (!json_is_string(x))
			jschema_fail(c, "%s/$ref: \"$ref\" must be a string, not "
			    "%s", path, jschema_json_kind(x));
		else {
			n->ref_src = json_string_value(x);
			if (c->npending == c->pendcap) {
				c->pendcap = c->pendcap ? c->pendcap * 2 : 16;
				c->pending = xreallocarray(c->pending,
				    c->pendcap, sizeof *c->pending);
			}
			c->pending[c->npending++] = n;
		}
	}
	n->props = jschema_named(c, v, path, "properties", &n->nprops, depth);
	if ((x = json_object_get(v, "required")) != NULL) {
		char	*where = jschema_path(path, "required");

		n->required = jschema_strings(c, x, where, &n->nrequired);
		free(where);
	}
	n->additional = jschema_sub(c, v, path, "additionalProperties", NULL,
	    depth);
	jschema_patterns(c, n, v, depth);
	n->propnames = jschema_sub(c, v, path, "propertyNames", NULL, depth);
	n->min_props = jschema_count(c, v, path, "minProperties");
	n->max_props = jschema_count(c, v, path, "maxProperties");
	jschema_deps(c, n, v, depth);
	jschema_arrays(c, n, v, depth);
	jschema_strings_kw(c, n, v);
	jschema_numbers(c, n, v);
	jschema_list(c, v, path, "allOf", &n->all, depth);
	jschema_list(c, v, path, "anyOf", &n->any, depth);
	jschema_list(c, v, path, "oneOf", &n->one, depth);
	n->not = jschema_sub(c, v, path, "not", NULL, depth);
	if ((n->if_ = jschema_sub(c, v, path, "if", NULL, depth)) != NULL) {
		n->then_ = jschema_sub(c, v, path, "then", NULL, depth);
		n->else_ = jschema_sub(c, v, path, "else", NULL, depth);
	}
	jschema_unsupported(c, n, v);
	return n;
}

/* Undo a fragment's percent-encoding; NULL if it is malformed. */
static char *
jschema_unpercent(const char *s)
{
	char	*out = xmalloc(strlen(s) + 1), *o = out;
	int	 hi, lo;

	for (; *s != '\0'; s++) {
		if (*s != '%') {
			*o++ = *s;
			continue;
		}
		hi = s[1] >= '0' && s[1] <= '9' ? s[1] - '0' :
		    (s[1] | 0x20) >= 'a' && (s[1] | 0x20) <= 'f' ?
		    (s[1] | 0x20) - 'a' + 10 : -1;
		lo = hi < 0 ? -1 : s[2] >= '0' && s[2] <= '9' ? s[2] - '0' :
		    (s[2] | 0x20) >= 'a' && (s[2] | 0x20) <= 'f' ?
		    (s[2] | 0x20) - 'a' + 10 : -1;
		if (hi < 0 || lo < 0 || (hi == 0 && lo == 0)) {
			free(out);
			return NULL;
		}
		*o++ = (char)(hi * 16 + lo);
		s += 2;
	}
	*o = '\0';
	return out;
}

/* The value a JSON Pointer (after the '#') names in doc, or NULL. */
static const json_t *
jschema_pointer(const json_t *doc, const char *ptr)
{
	const json_t	*cur = doc;
	char		*seg, *o;
	const char	*p = ptr, *e;
	size_t		 i;

	if (*p == '\0')
		return doc;
	if (*p != '/')
		return NULL;
	while (*p == '/' && cur != NULL) {
		p++;
		e = strchr(p, '/');
		if (e == NULL)
			e = p + strlen(p);
		seg = xmalloc((size_t)(e - p) + 1);
		for (o = seg, i = 0; p + i < e; i++) {
			if (p[i] == '~' && p + i + 1 < e && (p[i + 1] == '0' ||
			    p[i + 1] == '1')) {
				*o++ = p[i + 1] == '0' ? '~' : '/';
				i++;
			} else
				*o++ = p[i];
		}
		*o = '\0';
		if (json_is_object(cur))
			cur = json_object_get(cur, seg);
		else if (json_is_array(cur) && seg[0] != '\0' &&
		    strspn(seg, "0123456789") == strlen(seg) &&
		    strlen(seg) < 10)
			cur = json_array_get(cur, strtoul(seg, NULL, 10));
		else
			cur = NULL;
		free(seg);
		p = e;
	}
	return cur;
}

/* Resolve the pending $refs, compiling their targets (which may add more). */
static void
jschema_resolve(struct jscomp *c)
{
	struct jsnode	*n;
	const json_t	*t;
	const char	*ref;
	char		*frag, *path;

	while (c->npending > 0 && c->err == NULL) {
		n = c->pending[--c->npending];
		ref = n->ref_src;
		if (ref[0] != '#') {
			jschema_notef(c->s, "%s/$ref: \"%s\" is not in this "
			    "schema (only \"#...\" references are followed): "
			    "it is not checked", n->path, ref);
			continue;
		}
		if ((frag = jschema_unpercent(ref + 1)) == NULL) {
			jschema_fail(c, "%s/$ref: \"%s\" has a bad %%-escape",
			    n->path, ref);
			return;
		}
		if (frag[0] != '\0' && frag[0] != '/') {
			jschema_notef(c->s, "%s/$ref: \"%s\" names an anchor, "
			    "which is not supported: it is not checked",
			    n->path, ref);
			free(frag);
			continue;
		}
		if ((t = jschema_pointer(c->s->doc, frag)) == NULL) {
			jschema_fail(c, "%s/$ref: \"%s\" points at nothing in "
			    "the schema", n->path, ref);
			free(frag);
			return;
		}
		xasprintf(&path, "#%s", frag);
		free(frag);
		n->ref = jschema_node(c, t, path, 0);
		free(path);
	}
}

/* Which draft a "$schema" names; the default when it names none. */
static enum jschema_draft
jschema_which(struct jschema *s, const json_t *doc)
{
	const json_t	*v = json_is_object(doc) ?
			    json_object_get(doc, "$schema") : NULL;
	const char	*u;

	if (v == NULL || !json_is_string(v))
		return (s->flags & JSCHEMA_DRAFT07) ? JSCHEMA_D07 :
		    JSCHEMA_D2020;
	u = json_string_value(v);
	if (strstr(u, "draft-07") != NULL || strstr(u, "draft-06") != NULL ||
	    strstr(u, "draft-04") != NULL)
		return JSCHEMA_D07;
	if (strstr(u, "2020-12") != NULL || strstr(u, "2019-09") != NULL)
		return JSCHEMA_D2020;
	jschema_notef(s, "#/$schema: \"%s\" is no dialect known here; read as "
	    "%s", u, (s->flags & JSCHEMA_DRAFT07) ? "draft-07" : "2020-12");
	return (s->flags & JSCHEMA_DRAFT07) ? JSCHEMA_D07 : JSCHEMA_D2020;
}

/*
 * Compile a schema (flags: JSCHEMA_*).  NULL with *cause saying what is
 * wrong and where (a JSON Pointer) when it cannot be used.  The schema is
 * referenced, not copied: it must not change while the result lives.
 */
struct jschema *
jschema_compile(const json_t *doc, int flags, char **cause)
{
	struct jscomp	 c;
	struct jschema	*s;

	if (doc == NULL) {
		if (cause != NULL)
			*cause = xstrdup("#: there is no schema");
		return NULL;
	}
	s = xcalloc(1, sizeof *s);
	s->flags = flags;
	s->doc = json_incref((json_t *)doc);
	s->draft = jschema_which(s, doc);
	memset(&c, 0, sizeof c);
	c.s = s;
	s->root = jschema_node(&c, doc, "#", 0);
	jschema_resolve(&c);
	free(c.mkeys);
	free(c.mvals);
	free(c.pending);
	if (c.err != NULL) {
		if (cause != NULL)
			*cause = c.err;
		else
			free(c.err);
		jschema_free(s);
		return NULL;
	}
	if (s->notes_dropped > 0) {
		s->nnotes--;
		free(s->notes[s->nnotes]);
		s->notes[s->nnotes] = NULL;
		xasprintf(&s->notes[s->nnotes++], "and %zu more notes",
		    s->notes_dropped + 1);
	}
	return s;
}

static void
jschema_node_free(struct jsnode *n)
{
	size_t	i;

	free(n->path);
	free(n->props);
	free(n->required);
	for (i = 0; i < n->npatterns; i++)
		jsre_free(n->patterns[i].re);
	free(n->patterns);
	for (i = 0; i < n->ndepreq; i++)
		free(n->depreq[i].req);
	free(n->depreq);
	free(n->depschema);
	free(n->prefix.v);
	jsre_free(n->pattern);
	free(n->all.v);
	free(n->any.v);
	free(n->one.v);
	free(n);
}

void
jschema_free(struct jschema *s)
{
	size_t	i;

	if (s == NULL)
		return;
	for (i = 0; i < s->nnodes; i++)
		jschema_node_free(s->nodes[i]);
	free(s->nodes);
	for (i = 0; i < s->nnotes; i++)
		free(s->notes[i]);
	free(s->notes);
	json_decref(s->doc);
	free(s);
}

/*
 * Check a value against a compiled schema, calling cb (if not NULL) once
 * per error.  Returns the number of errors: 0 when the value is valid.
 * No value at all (NULL) is one error.
 */
int
jschema_validate(const struct jschema *s, const json_t *v,
    jschema_error_cb cb, void *arg)
{
	if (v == NULL) {
		if (cb != NULL)
			cb(arg, "$", "#", "there is no value to check");
		return 1;
	}
	return jsvalid_run(s, v, cb, arg);
}

enum jschema_draft
jschema_draft(const struct jschema *s)
{
	return s->draft;
}

/* What was left out of the schema, as sentences with their place. */
size_t
jschema_nnotes(const struct jschema *s)
{
	return s->nnotes;
}

const char *
jschema_note(const struct jschema *s, size_t i)
{
	return i < s->nnotes ? s->notes[i] : NULL;
}
