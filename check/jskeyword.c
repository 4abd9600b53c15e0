/*
 * The keywords of a schema object, each read once into its node and its
 * value checked: a misused keyword fails the compile with the place and
 * the fault, what cannot be applied faithfully is left out with a note.
 * Which keywords exist depends on the draft (draft-07 or 2020-12).
 */

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "jsonschema_int.h"

/* A count keyword: absent (-1), or a non-negative integer (2.0 is one). */
int64_t
jskeyword_count(struct jscomp *c, const json_t *obj, const char *path,
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
		/* Whole; one past int64 (1e30) is as good as no bound. */
		if (d >= 0 && d == floor(d))
			return d < 0x1p63 ? (int64_t)d : INT64_MAX;
	}
	jschema_fail(c, "%s/%s: \"%s\" must be a non-negative integer, not "
	    "%s", path, key, key, jschema_json_kind(v));
	return -1;
}

/* A number keyword (minimum, maximum, multipleOf...), or NULL if absent. */
static const json_t *
jskeyword_number(struct jscomp *c, const json_t *obj, const char *path,
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
void
jskeyword_list(struct jscomp *c, const json_t *obj, const char *path,
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
const char **
jskeyword_strings(struct jscomp *c, const json_t *v, const char *where,
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
void
jskeyword_type(struct jscomp *c, struct jsnode *n, const json_t *v)
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
	if (n_ == 0) {
		jschema_fail(c, "%s/type: \"type\" must name at least one "
		    "type, not be an empty array", n->path);
		return;
	}
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

/* qsort() order of named subschemas: by name. */
static int
jskeyword_named_cmp(const void *a, const void *b)
{
	return strcmp(((const struct jsnamed *)a)->name,
	    ((const struct jsnamed *)b)->name);
}

/* An object of subschemas (properties, dependentSchemas), sorted. */
struct jsnamed *
jskeyword_named(struct jscomp *c, const json_t *obj, const char *path,
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
	qsort(out, i, sizeof *out, jskeyword_named_cmp);
	return out;
}

/*
 * A pattern compiled within the schema's budget (JSCHEMA_MAX_RE_SIZE for
 * all its patterns), or NULL with *why saying what it uses that is not
 * supported.
 */
static struct jsre *
jskeyword_re(struct jscomp *c, const char *src, size_t len, char **why)
{
	struct jsre	*re;

	*why = NULL;
	if (c->re_size < JSCHEMA_MAX_RE_SIZE) {
		if ((re = jsre_compile(src, len, why)) == NULL)
			return NULL;
		/* Counted even when refused: the budget is spent, so the
		   patterns after it are not compiled at all. */
		c->re_size += jsre_size(re);
		if (c->re_size <= JSCHEMA_MAX_RE_SIZE)
			return re;
		jsre_free(re);
	}
	xasprintf(why, "more matcher space than is left of the %d "
	    "instructions all of a schema's patterns may take",
	    JSCHEMA_MAX_RE_SIZE);
	return NULL;
}

/* patternProperties: each regex compiled; an unsupported one is noted. */
void
jskeyword_patterns(struct jscomp *c, struct jsnode *n, const json_t *obj,
    int depth)
{
	const json_t	*v = json_object_get(obj, "patternProperties"), *sub;
	const char	*name;
	char		*why = NULL, *q;
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
		n->patterns[i].re = jskeyword_re(c, name, strlen(name), &why);
		if (n->patterns[i].re == NULL) {
			q = jsvalue_quote_str(name, strlen(name));
			jschema_notef(c->s, "%s/patternProperties: the pattern "
			    "%s uses %s, which is not supported: its "
			    "properties are not checked, nor is "
			    "additionalProperties", n->path, q, why);
			free(q);
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
void
jskeyword_deps(struct jscomp *c, struct jsnode *n, const json_t *obj,
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
				n->depreq[nd].req = jskeyword_strings(c, sub,
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
void
jskeyword_arrays(struct jscomp *c, struct jsnode *n, const json_t *obj,
    int depth)
{
	const json_t	*items = json_object_get(obj, "items");

	if (items != NULL && json_is_array(items)) {
		/* The tuple form: draft-07's, accepted in 2020-12 too. */
		jskeyword_list(c, obj, n->path, "items", &n->prefix, depth);
		n->has_prefix = 1;
		n->items = jschema_sub(c, obj, n->path, "additionalItems",
		    NULL, depth);
	} else {
		if (c->s->draft == JSCHEMA_D2020) {
			jskeyword_list(c, obj, n->path, "prefixItems",
			    &n->prefix, depth);
			n->has_prefix = json_object_get(obj, "prefixItems") !=
			    NULL;
		}
		n->items = jschema_sub(c, obj, n->path, "items", NULL, depth);
	}
	n->contains = jschema_sub(c, obj, n->path, "contains", NULL, depth);
	if (c->s->draft == JSCHEMA_D2020) {
		n->min_contains = jskeyword_count(c, obj, n->path, "minContains");
		n->max_contains = jskeyword_count(c, obj, n->path, "maxContains");
	}
	n->min_items = jskeyword_count(c, obj, n->path, "minItems");
	n->max_items = jskeyword_count(c, obj, n->path, "maxItems");
	if (json_object_get(obj, "uniqueItems") != NULL) {
		if (!json_is_boolean(json_object_get(obj, "uniqueItems")))
			jschema_fail(c, "%s/uniqueItems: must be true or false",
			    n->path);
		n->unique = json_is_true(json_object_get(obj, "uniqueItems"));
	}
}

/* The number keywords; a boolean exclusive* is draft-04's form. */
void
jskeyword_numbers(struct jscomp *c, struct jsnode *n, const json_t *obj)
{
	const json_t	*x;
	double		 d;

	n->minimum = jskeyword_number(c, obj, n->path, "minimum");
	n->maximum = jskeyword_number(c, obj, n->path, "maximum");
	if ((x = json_object_get(obj, "exclusiveMinimum")) != NULL &&
	    json_is_boolean(x)) {
		if (json_is_true(x)) {
			n->xminimum = n->minimum;
			n->minimum = NULL;
		}
	} else
		n->xminimum = jskeyword_number(c, obj, n->path,
		    "exclusiveMinimum");
	if ((x = json_object_get(obj, "exclusiveMaximum")) != NULL &&
	    json_is_boolean(x)) {
		if (json_is_true(x)) {
			n->xmaximum = n->maximum;
			n->maximum = NULL;
		}
	} else
		n->xmaximum = jskeyword_number(c, obj, n->path,
		    "exclusiveMaximum");
	if ((n->multiple = jskeyword_number(c, obj, n->path, "multipleOf")) !=
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
void
jskeyword_strings_kw(struct jscomp *c, struct jsnode *n, const json_t *obj)
{
	const json_t	*v;
	char		*why = NULL, *q;

	n->min_len = jskeyword_count(c, obj, n->path, "minLength");
	n->max_len = jskeyword_count(c, obj, n->path, "maxLength");
	if ((v = json_object_get(obj, "pattern")) != NULL) {
		if (!json_is_string(v)) {
			jschema_fail(c, "%s/pattern: must be a string, not %s",
			    n->path, jschema_json_kind(v));
			return;
		}
		n->pattern_src = json_string_value(v);
		n->pattern = jskeyword_re(c, json_string_value(v),
		    json_string_length(v), &why);
		if (n->pattern == NULL) {
			q = jsvalue_quote(v);
			jschema_notef(c->s, "%s/pattern: %s uses %s, which "
			    "is not supported: the pattern is not checked",
			    n->path, q, why);
			free(q);
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
void
jskeyword_unsupported(struct jscomp *c, struct jsnode *n, const json_t *obj)
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
