/*
 * shape.c: walk a JSON value against a type of mcp.def in one revision,
 * reporting each place it does not fit.  Allocation happens only when a
 * finding is reported; the path is built in place as the walk goes.
 */
#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "shape_int.h"

/*
 * A path longer than this is cut (with "..." at the end): JSONPaths of
 * real messages are well under 100 bytes, and a hostile message's key
 * names must not make each finding cost their length.
 */
#define SHAPE_PATH_MAX		512
/*
 * Nesting of shapes followed at most.  Each member, array item, union and
 * named type is a level; the deepest MCP shape (a tool result's content
 * inside a sampling message inside an input request inside a request's
 * inputResponses, 2026-07-28) is about 23 levels.  48 leaves room for a
 * revision to wrap that once or twice more before anything deeper goes
 * unchecked, and costs only stack (a few hundred bytes a level).  The
 * walk follows the shapes, not the JSON, so JSON nested deeper than its
 * shape is never walked at all.
 */
#define SHAPE_DEPTH_MAX		48
/* A finding's sentence is cut at this length. */
#define SHAPE_TEXT_MAX		400
/* A value quoted in a finding is cut at this many bytes. */
#define SHAPE_QUOTE_MAX		60

struct walk {
	enum proto_version	 v;
	proto_finding_cb	*cb;
	void			*arg;
	size_t			*budget;	/* findings still to report */
	int			 dry;		/* only find out if it fits */
	size_t			 found;		/* faults found by this walk */
	const char		*spec;		/* the def being walked */
	size_t			 plen;
	int			 cut;		/* the path ends in "..." */
	char			 path[SHAPE_PATH_MAX];
};

static void	shape_type(struct walk *, const struct stype *, const json_t *,
		    int);
static size_t	shape_present(const struct walk *, const struct stype *,
		    const json_t *);

/* Report a fault at the current path (or only count it when dry). */
static void PRINTFLIKE(3, 4)
shape_report(struct walk *w, const char *rule, const char *fmt, ...)
{
	char	text[SHAPE_TEXT_MAX];
	va_list	ap;

	/* A format is a warning: it never decides which alternative of a
	   union a value is. */
	if (w->dry && strcmp(rule, "shape.format") == 0)
		return;
	w->found++;
	if (w->dry)
		return;
	if (*w->budget == 0)
		return;
	(*w->budget)--;
	va_start(ap, fmt);
	if (vsnprintf(text, sizeof text, fmt, ap) >= (int)sizeof text)
		text[scan_utf8_trim(text, strlen(text))] = '\0';
	va_end(ap);
	proto_report(w->cb, w->arg, rule, strcmp(rule, "shape.format") == 0 ?
	    PROTO_WARNING : PROTO_ERROR, w->path, w->spec, "%s", text);
}

/*
 * Whether the walk can stop: a dry walk needs only its first fault, a
 * real one stops when nothing more may be reported.
 */
static int
shape_done(const struct walk *w)
{
	if (w->dry)
		return (w->found != 0);
	return (*w->budget == 0);
}

/*
 * Append bytes to the path; returns the length to go back to.  A path
 * that would pass SHAPE_PATH_MAX ends in "..." instead.  Plain copies, no
 * printf: this runs for every member walked.
 */
static size_t
shape_append(struct walk *w, const char *s, size_t len)
{
	size_t	saved = w->plen;

	if (w->cut)
		return (saved);		/* already cut */
	if (len >= sizeof w->path - w->plen - 4) {
		/* What fits (whole characters), then "...". */
		len = scan_utf8_trim(s, sizeof w->path - 4 - w->plen);
		memcpy(w->path + w->plen, s, len);
		w->plen += len;
		memcpy(w->path + w->plen, "...", 4);
		w->plen += 3;
		w->cut = 1;
		return (saved);
	}
	memcpy(w->path + w->plen, s, len);
	w->plen += len;
	w->path[w->plen] = '\0';
	return (saved);
}

/* Append an array index: [i]. */
static size_t
shape_push_index(struct walk *w, size_t i)
{
	char	buf[24], *p = buf + sizeof buf;

	*--p = ']';
	do {
		*--p = (char)('0' + i % 10);
		i /= 10;
	} while (i != 0);
	*--p = '[';
	return (shape_append(w, p, (size_t)(buf + sizeof buf - p)));
}

/* How many bytes of a string to quote: at most SHAPE_QUOTE_MAX, ending on
   a character boundary ("%.*s" with this never cuts a character). */
static int
shape_quote_len(const char *s)
{
	return ((int)scan_utf8_trim(s, strnlen(s, SHAPE_QUOTE_MAX)));
}

/* Go back to a length shape_append() returned. */
static void
shape_pop(struct walk *w, size_t saved)
{
	if (saved < w->plen)
		w->cut = 0;	/* back to before the cut, if any */
	w->plen = saved;
	w->path[saved] = '\0';
}

/* Append a member name: .name, or ['na me'] when it is no identifier. */
static size_t
shape_push_key(struct walk *w, const char *key)
{
	char		 buf[SHAPE_PATH_MAX];
	const char	*p;
	size_t		 o = 0;
	int		 plain = *key != '\0' && !isdigit((unsigned char)*key);

	for (p = key; *p != '\0' && plain; p++) {
		if (!isalnum((unsigned char)*p) && *p != '_' && *p != '$')
			plain = 0;
	}
	if (plain) {
		buf[0] = '.';
		o = 1;
	} else {
		buf[0] = '[';
		buf[1] = '\'';
		o = 2;
	}
	for (p = key; *p != '\0' && o + 4 < sizeof buf; p++) {
		if (!plain && (*p == '\'' || *p == '\\'))
			buf[o++] = '\\';
		buf[o++] = *p;
	}
	if (!plain) {
		buf[o++] = '\'';
		buf[o++] = ']';
	}
	return (shape_append(w, buf, o));
}

/* "a string", "an object": what a JSON value is, for sentences. */
static const char *
shape_json_type(const json_t *j)
{
	switch (json_typeof(j)) {
	case JSON_OBJECT:
		return ("an object");
	case JSON_ARRAY:
		return ("an array");
	case JSON_STRING:
		return ("a string");
	case JSON_INTEGER:
		return ("an integer");
	case JSON_REAL:
		return ("a number");
	case JSON_TRUE:
	case JSON_FALSE:
		return ("a boolean");
	case JSON_NULL:
		return ("null");
	}
	return ("a value");
}

/* What a type expects, for sentences: "a string", "TextContent". */
static const char *
shape_type_name(const struct walk *w, const struct stype *t, char *buf,
    size_t size)
{
	switch (t->kind) {
	case ST_ANY:
		return ("anything");
	case ST_STRING:
		return ("a string");
	case ST_NUMBER:
		return ("a number");
	case ST_INTEGER:
		return ("an integer");
	case ST_BOOLEAN:
		return ("a boolean");
	case ST_NULL:
		return ("null");
	case ST_OBJECT:
	case ST_MAP:
		return ("an object");
	case ST_ARRAY:
	case ST_ARRAYOF:
		return ("an array");
	case ST_CONST:
		snprintf(buf, size, "\"%s\"", t->text);
		return (buf);
	case ST_REF:
		if (defs_get()->defs[t->ref[w->v]].alias != NULL)
			return (shape_type_name(w,
			    defs_get()->defs[t->ref[w->v]].alias, buf, size));
		snprintf(buf, size, "an object (%s)",
		    defs_get()->defs[t->ref[w->v]].spec_name);
		return (buf);
	default:
		return ("one of several shapes");
	}
}

/* Whether a JSON value is of the kind a (non-union) type takes. */
static int
shape_kind_fits(const struct walk *w, const struct stype *t, const json_t *j)
{
	const struct sdef	*d;

	switch (t->kind) {
	case ST_ANY:
		return (1);
	case ST_STRING:
	case ST_CONST:
		return (json_is_string(j));
	case ST_NUMBER:
	case ST_INTEGER:
		return (json_is_number(j));
	case ST_BOOLEAN:
		return (json_is_boolean(j));
	case ST_NULL:
		return (json_is_null(j));
	case ST_OBJECT:
	case ST_MAP:
		return (json_is_object(j));
	case ST_ARRAY:
	case ST_ARRAYOF:
		return (json_is_array(j));
	case ST_REF:
		d = &defs_get()->defs[t->ref[w->v]];
		if (d->alias != NULL)
			return (shape_kind_fits(w, d->alias, j));
		return (json_is_object(j));
	default:
		return (1);
	}
}

/* Whether a string is an absolute URI: a scheme, ':', no blanks. */
static int
shape_uri(const char *s)
{
	const char	*p = s;

	if (!isalpha((unsigned char)*p))
		return (0);
	while (isalnum((unsigned char)*p) || *p == '+' || *p == '-' ||
	    *p == '.')
		p++;
	if (*p != ':')
		return (0);
	for (; *p != '\0'; p++) {
		if ((unsigned char)*p <= ' ' || *p == 0x7f)
			return (0);
	}
	return (1);
}

/* Whether a string is base64 (RFC 4648 section 4), padded. */
static int
shape_base64(const char *s, size_t len)
{
	size_t	i, pad = 0;

	if (len % 4 != 0)
		return (0);
	for (i = 0; i < len; i++) {
		unsigned char c = (unsigned char)s[i];

		if (c == '=') {
			if (++pad > 2)
				return (0);
			continue;
		}
		if (pad != 0 || !(isalnum(c) || c == '+' || c == '/'))
			return (0);
	}
	return (1);
}

/*
 * Whether a JSON string is exactly s: by length too, since a JSON string
 * may hold a NUL ("text\u0000" is not "text").
 */
static int
shape_str_eq(const json_t *j, const char *s)
{
	size_t	len = strlen(s);

	return (json_string_length(j) == len &&
	    memcmp(json_string_value(j), s, len) == 0);
}

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

/* An object against a def: required members, then each member's type. */
static void
shape_def(struct walk *w, const struct sdef *d, const json_t *j, int depth)
{
	const struct smember	*m;
	const json_t		*val;
	const char		*spec = w->spec;
	size_t			 i, saved;

	if (d->alias != NULL) {
		shape_type(w, d->alias, j, depth + 1);
		return;
	}
	w->spec = d->spec[w->v];
	if (!json_is_object(j)) {
		shape_report(w, "shape.type", "expected an object (%s), got %s",
		    d->spec_name, shape_json_type(j));
		w->spec = spec;
		return;
	}
	for (i = 0; i < d->nmembers && !shape_done(w); i++) {
		m = &d->members[i];
		if ((m->versions & PROTO_VBIT(w->v)) == 0)
			continue;
		val = json_object_get(j, m->name);
		if (val == NULL) {
			if (!m->optional)
				shape_report(w, "shape.required", "\"%s\" is "
				    "required in %s (%s)", m->name,
				    d->spec_name, proto_version_name(w->v));
			continue;
		}
		saved = shape_push_key(w, m->name);
		shape_type(w, m->type, val, depth + 1);
		shape_pop(w, saved);
	}
	w->spec = spec;
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
			first = &defs_get()->defs[u->leaves[w->v][i]->ref[w->v]];
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
static void
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

/* A value against a type. */
static void
shape_type(struct walk *w, const struct stype *t, const json_t *j, int depth)
{
	const char	*key;
	json_t		*val;
	size_t		 i, saved;
	double		 d;
	char		 buf[128];

	if (depth > SHAPE_DEPTH_MAX || shape_done(w))
		return;
	if (t->kind != ST_UNION && !shape_kind_fits(w, t, j)) {
		shape_report(w, "shape.type", "expected %s, got %s",
		    shape_type_name(w, t, buf, sizeof buf), shape_json_type(j));
		return;
	}
	switch (t->kind) {
	case ST_STRING:
		if (t->format == FMT_URI && (!shape_uri(json_string_value(j)) ||
		    strlen(json_string_value(j)) != json_string_length(j)))
			shape_report(w, "shape.format", "\"%.*s\" is not an "
			    "absolute URI (the schema gives this member format "
			    "uri)", shape_quote_len(json_string_value(j)),
			    json_string_value(j));
		else if (t->format == FMT_FILE_URI &&
		    (json_string_length(j) < 7 ||
		    strncasecmp(json_string_value(j), "file://", 7) != 0))
			shape_report(w, "shape.file-uri", "\"%.*s\" is no "
			    "file:// URI (the schema: a root \"must start with "
			    "file://\")", shape_quote_len(json_string_value(j)),
			    json_string_value(j));
		else if (t->format == FMT_BYTE &&
		    !shape_base64(json_string_value(j), json_string_length(j)))
			shape_report(w, "shape.format", "this is not base64 "
			    "(the schema gives this member format byte)");
		break;
	case ST_INTEGER:
		if (json_is_real(j)) {
			d = json_real_value(j);
			if (d != floor(d) || !isfinite(d))
				shape_report(w, "shape.integer", "expected an "
				    "integer, got %g", d);
		}
		break;
	case ST_CONST:
		if (!shape_str_eq(j, t->text))
			shape_report(w, "shape.const", "must be \"%s\", not "
			    "\"%.*s\"", t->text, shape_quote_len(
			    json_string_value(j)), json_string_value(j));
		break;
	case ST_ARRAYOF:
		for (i = 0; i < json_array_size(j) && !shape_done(w); i++) {
			saved = shape_push_index(w, i);
			shape_type(w, t->sub, json_array_get(j, i), depth + 1);
			shape_pop(w, saved);
		}
		break;
	case ST_MAP:
		json_object_foreach((json_t *)j, key, val) {
			if (shape_done(w))
				break;
			saved = shape_push_key(w, key);
			shape_type(w, t->sub, val, depth + 1);
			shape_pop(w, saved);
		}
		break;
	case ST_REF:
		shape_def(w, &defs_get()->defs[t->ref[w->v]], j, depth);
		break;
	case ST_UNION:
		shape_union(w, t, j, depth);
		break;
	default:
		break;
	}
}

/*
 * Check a value against a type in revision v, reporting faults to cb
 * with paths under path ("$.params") and spec where no def is nearer.
 * budget is how many more findings
 * may be reported; it is counted down, and what is past it only counted.
 * Returns nothing: the caller counts through cb.
 */
void
shape_check(enum proto_version v, const struct stype *t, const json_t *j,
    const char *path, const char *spec, proto_finding_cb *cb, void *arg,
    size_t *budget)
{
	struct walk	w;

	w.v = v;
	w.cb = cb;
	w.arg = arg;
	w.budget = budget;
	w.dry = 0;
	w.found = 0;
	w.spec = spec;
	w.plen = 0;
	w.cut = 0;
	w.path[0] = '\0';
	shape_append(&w, path, strlen(path));
	shape_type(&w, t, j, 0);
}

/* Whether a value fits a type in revision v, reporting nothing. */
int
shape_fits(enum proto_version v, const struct stype *t, const json_t *j)
{
	struct walk	w;
	size_t		budget = 0;

	w.v = v;
	w.cb = NULL;
	w.arg = NULL;
	w.budget = &budget;
	w.dry = 1;
	w.found = 0;
	w.spec = "";
	w.plen = 0;
	w.cut = 0;
	w.path[0] = '\0';
	shape_type(&w, t, j, 0);
	return (w.found == 0);
}
