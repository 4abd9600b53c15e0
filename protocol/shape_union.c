/*
 * shape_union.c: which alternative of a union a value is, and what to
 * say when none fits: members holding one string ("type": "text") and
 * the union's key tell alternatives apart; any other member taking a
 * choice of strings is only ever its own fault.
 */
#include <stdio.h>
#include <string.h>

#include "shape_int.h"

static size_t	shape_present(const struct walk *, const struct stype *,
		    const json_t *);

/* Whether a member's type is one string or a choice of strings. */
static int
shape_const_member(const struct walk *w, const struct stype *t)
{
	size_t	i;

	if (t->kind == ST_CONST)
		return (1);
	if (t->kind != ST_UNION || t->nleaves[w->v] == 0)
		return (0);
	for (i = 0; i < t->nleaves[w->v]; i++) {
		if (t->leaves[w->v][i]->kind != ST_CONST)
			return (0);
	}
	return (1);
}

/* Whether a JSON string is one of a const-valued type's strings. */
static int
shape_const_has(const struct walk *w, const struct stype *t, const json_t *j)
{
	size_t	i;

	if (t->kind == ST_CONST)
		return (shape_str_eq(j, t->text));
	for (i = 0; i < t->nleaves[w->v]; i++) {
		if (shape_str_eq(j, t->leaves[w->v][i]->text))
			return (1);
	}
	return (0);
}

/*
 * How an object def fits an object by its const-valued members: -1 a
 * one-string member ("type": "text"), or the union's key (which may take
 * a choice: NumberSchema's "number" | "integer"), differs or is missing
 * though required; 1 one matched; 0 none present to tell.  Any other
 * member taking a choice of strings (cacheScope, action, format) tells
 * alternatives apart when its value is one of them, but its wrong or
 * missing value is a fault of that member, not a sign of another
 * alternative: it counts 0.
 */
static int
shape_discriminate(const struct walk *w, const struct sdef *d, const json_t *j,
    const char *key)
{
	const struct smember	*m;
	const json_t		*val;
	size_t			 i;
	int			 matched = 0;

	for (i = 0; i < d->nmembers; i++) {
		m = &d->members[i];
		if ((m->versions & PROTO_VBIT(w->v)) == 0 ||
		    !shape_const_member(w, m->type))
			continue;
		val = json_object_get(j, m->name);
		if (val != NULL && json_is_string(val) &&
		    shape_const_has(w, m->type, val))
			matched = 1;
		else if ((m->type->kind == ST_CONST || (key != NULL &&
		    strcmp(m->name, key) == 0)) && (val != NULL ||
		    !m->optional))
			return (-1);
	}
	return (matched);
}

/* A sentence listing a union's alternatives by what they take. */
static void
shape_union_names(const struct walk *w, const struct stype *u, char *buf,
    size_t size)
{
	char	one[128];
	size_t	i, o = 0;
	int	n;

	buf[0] = '\0';
	for (i = 0; i < u->nleaves[w->v] && o < size; i++) {
		n = snprintf(buf + o, size - o, "%s%s", i == 0 ? "" :
		    i + 1 == u->nleaves[w->v] ? " or " : ", ",
		    shape_type_name(w, u->leaves[w->v][i], one, sizeof one));
		if (n < 0)
			break;
		o += (size_t)n;
	}
}

/* Add a const's string to a list of them, once. */
static void
shape_list_add(char *list, size_t size, size_t *o, const char *s)
{
	char	quoted[128];
	int	n;

	snprintf(quoted, sizeof quoted, "\"%s\"", s);
	if (strstr(list, quoted) != NULL || *o >= size)
		return;
	n = snprintf(list + *o, size - *o, "%s%s", *o == 0 ? "" : ", ",
	    quoted);
	if (n > 0)
		*o += (size_t)n;
}

/* A def's member of a name in the walk's revision, or NULL. */
static const struct smember *
shape_member(const struct walk *w, const struct sdef *d, const char *name)
{
	size_t	k;

	for (k = 0; k < d->nmembers; k++) {
		if ((d->members[k].versions & PROTO_VBIT(w->v)) != 0 &&
		    strcmp(d->members[k].name, name) == 0)
			return (&d->members[k]);
	}
	return (NULL);
}

/*
 * The member that tells a union's object alternatives apart ("type"):
 * one every object alternative has as a string or a choice of strings,
 * and at least one as a single string.  NULL if there is none (a member
 * only some alternatives have, like "action", tells nothing).
 */
static const char *
shape_union_key(const struct walk *w, const struct stype *u)
{
	const struct sdef	*first = NULL, *d;
	const struct smember	*m, *o;
	size_t			 i, k;

	for (i = 0; i < u->nleaves[w->v] && first == NULL; i++) {
		if (u->leaves[w->v][i]->kind == ST_REF)
			first = &defs_get()->defs[
			    u->leaves[w->v][i]->ref[w->v]];
	}
	if (first == NULL)
		return (NULL);
	for (k = 0; k < first->nmembers; k++) {
		m = &first->members[k];
		if ((m->versions & PROTO_VBIT(w->v)) == 0 ||
		    !shape_const_member(w, m->type))
			continue;
		for (i = 0; i < u->nleaves[w->v]; i++) {
			if (u->leaves[w->v][i]->kind != ST_REF)
				continue;
			d = &defs_get()->defs[u->leaves[w->v][i]->ref[w->v]];
			o = shape_member(w, d, m->name);
			if (o == NULL || !shape_const_member(w, o->type))
				break;
		}
		if (i == u->nleaves[w->v])
			return (m->name);
	}
	return (NULL);
}

/*
 * The object alternative most of whose required members an object has,
 * and, given key, whose key member takes the object's value of it; NULL
 * if none.
 */
static const struct stype *
shape_union_nearest(const struct walk *w, const struct stype *u,
    const json_t *j, const char *key)
{
	const struct stype	*l, *best = NULL;
	const struct smember	*m;
	const json_t		*val = key != NULL ? json_object_get(j, key) :
				    NULL;
	size_t			 i;

	for (i = 0; i < u->nleaves[w->v]; i++) {
		l = u->leaves[w->v][i];
		if (l->kind != ST_REF || !shape_kind_fits(w, l, j))
			continue;
		if (key != NULL) {
			m = shape_member(w, &defs_get()->defs[l->ref[w->v]],
			    key);
			if (val == NULL || !json_is_string(val) || m == NULL ||
			    !shape_const_has(w, m->type, val))
				continue;
		}
		if (best == NULL || shape_present(w, l, j) >
		    shape_present(w, best, j))
			best = l;
	}
	return (best);
}

/*
 * Nothing in a union fits.  Objects told apart by one member ("type"):
 * the alternative its value names is walked for its faults, or the value
 * is named as unknown.  Other objects: the nearest alternative is walked,
 * so its own faults are reported.  Else what the alternatives take.
 */
static void
shape_union_none(struct walk *w, const struct stype *u, const json_t *j,
    int depth)
{
	const struct sdef	*d;
	const struct smember	*m;
	const struct stype	*mt, *near;
	const char		*key = NULL;
	const json_t		*val;
	char			 list[SHAPE_TEXT_MAX / 2];
	size_t			 i, c, o = 0, saved;

	list[0] = '\0';
	if (json_is_object(j))
		key = shape_union_key(w, u);
	if (key != NULL &&
	    (near = shape_union_nearest(w, u, j, key)) != NULL) {
		shape_type(w, near, j, depth + 1);
		return;
	}
	for (i = 0; key != NULL && i < u->nleaves[w->v]; i++) {
		const struct stype *l = u->leaves[w->v][i];

		if (l->kind != ST_REF)
			continue;
		d = &defs_get()->defs[l->ref[w->v]];
		if ((m = shape_member(w, d, key)) == NULL)
			continue;
		mt = m->type;
		if (mt->kind == ST_CONST)
			shape_list_add(list, sizeof list, &o, mt->text);
		else {
			for (c = 0; c < mt->nleaves[w->v]; c++)
				shape_list_add(list, sizeof list, &o,
				    mt->leaves[w->v][c]->text);
		}
	}
	if (key != NULL) {
		val = json_object_get(j, key);
		if (val == NULL) {
			shape_report(w, "shape.required", "\"%s\" is required "
			    "here: one of %s (%s)", key, list,
			    proto_version_name(w->v));
			return;
		}
		saved = shape_push_key(w, key);
		if (json_is_string(val))
			shape_report(w, "shape.enum", "\"%.*s\" is not a %s "
			    "%s knows here: one of %s", shape_quote_len(
			    json_string_value(val)), json_string_value(val),
			    key, proto_version_name(w->v), list);
		else
			shape_report(w, "shape.type", "expected a string (one "
			    "of %s), got %s", list, shape_json_type(val));
		shape_pop(w, saved);
		return;
	}
	if (json_is_object(j) &&
	    (near = shape_union_nearest(w, u, j, NULL)) != NULL) {
		shape_type(w, near, j, depth + 1);
		return;
	}
	if (json_is_string(j)) {
		for (i = 0; i < u->nleaves[w->v]; i++) {
			if (u->leaves[w->v][i]->kind != ST_CONST)
				break;
		}
		if (i == u->nleaves[w->v] && i > 0) {
			shape_union_names(w, u, list, sizeof list);
			shape_report(w, "shape.enum", "\"%.*s\" is not one of "
			    "%s", shape_quote_len(json_string_value(j)),
			    json_string_value(j), list);
			return;
		}
	}
	shape_union_names(w, u, list, sizeof list);
	shape_report(w, "shape.type", "expected %s, got %s", list,
	    shape_json_type(j));
}

/* How many of an object def's required members a value has. */
static size_t
shape_present(const struct walk *w, const struct stype *t, const json_t *j)
{
	const struct sdef	*d;
	size_t			 i, n = 0;

	if (t->kind != ST_REF || !json_is_object(j))
		return (0);
	d = &defs_get()->defs[t->ref[w->v]];
	for (i = 0; i < d->nmembers; i++) {
		if ((d->members[i].versions & PROTO_VBIT(w->v)) != 0 &&
		    !d->members[i].optional &&
		    json_object_get(j, d->members[i].name) != NULL)
			n++;
	}
	return (n);
}

/*
 * A union: the alternatives whose JSON kind and discriminating members
 * fit, most specific first; the first that fits whole wins, else the
 * faults of the most specific one are reported.
 */
void
shape_union(struct walk *w, const struct stype *u, const json_t *j, int depth)
{
	const struct stype	*cand[SHAPE_UNION_MAX], *l;
	const char		*key;
	int			 rank[SHAPE_UNION_MAX], r;
	size_t			 i, k, n = 0, found, best;
	int			 dry;

	key = json_is_object(j) ? shape_union_key(w, u) : NULL;
	for (i = 0; i < u->nleaves[w->v]; i++) {
		l = u->leaves[w->v][i];
		if (!shape_kind_fits(w, l, j))
			continue;
		r = 0;
		if (l->kind == ST_CONST)
			r = shape_str_eq(j, l->text) ? 1 : -1;
		else if (l->kind == ST_REF && json_is_object(j))
			r = shape_discriminate(w,
			    &defs_get()->defs[l->ref[w->v]], j, key);
		if (r < 0)
			continue;
		/* Keep the order as written within a rank. */
		for (k = n; k > 0 && rank[k - 1] < r; k--) {
			cand[k] = cand[k - 1];
			rank[k] = rank[k - 1];
		}
		cand[k] = l;
		rank[k] = r;
		n++;
	}
	if (n == 0) {
		shape_union_none(w, u, j, depth);
		return;
	}
	if (n > 1) {
		dry = w->dry;
		found = w->found;
		for (i = 0; i < n; i++) {
			w->dry = 1;
			w->found = 0;
			shape_type(w, cand[i], j, depth + 1);
			if (w->found == 0)
				break;
		}
		w->dry = dry;
		w->found = found;
		if (i < n) {
			/* It fits; walked again for real for its warnings
			   (formats), which a dry walk does not count. */
			if (!w->dry)
				shape_type(w, cand[i], j, depth + 1);
			return;
		}
		/* None fits: report the faults of the one most of whose
		   required members are there (a task answered where a
		   result could be is a task missing a member). */
		best = 0;
		for (i = 1; i < n && rank[i] == rank[0]; i++) {
			if (shape_present(w, cand[i], j) >
			    shape_present(w, cand[best], j))
				best = i;
		}
		shape_type(w, cand[best], j, depth + 1);
		return;
	}
	shape_type(w, cand[0], j, depth + 1);
}
