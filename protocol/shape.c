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

/* Report a fault at the current path (or only count it when dry). */
void PRINTFLIKE(3, 4)
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
int
shape_quote_len(const char *s)
{
	return ((int)scan_utf8_trim(s, strnlen(s, SHAPE_QUOTE_MAX)));
}

/* Go back to a length shape_append() returned. */
void
shape_pop(struct walk *w, size_t saved)
{
	if (saved < w->plen)
		w->cut = 0;	/* back to before the cut, if any */
	w->plen = saved;
	w->path[saved] = '\0';
}

/* Append a member name: .name, or ['na me'] when it is no identifier. */
size_t
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
const char *
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
const char *
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
int
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
int
shape_str_eq(const json_t *j, const char *s)
{
	size_t	len = strlen(s);

	return (json_string_length(j) == len &&
	    memcmp(json_string_value(j), s, len) == 0);
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

/* A value against a type. */
void
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
