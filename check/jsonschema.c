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

/* A JSON value's kind for a sentence: "an integer", "an object"... */
const char *
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
void PRINTFLIKE(2, 3)
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
void PRINTFLIKE(2, 3)
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

/*
 * A path cut to JSCHEMA_PATH_MAX bytes (p is taken, the result given):
 * its head and its tail kept at '/' boundaries, "/..." between.
 */
char *
jschema_path_fit(char *p)
{
	size_t	 len = strlen(p), h, t, keep;
	char	*out;

	if (len <= JSCHEMA_PATH_MAX)
		return p;
	for (h = JSCHEMA_PATH_MAX / 4; h > 1 && p[h] != '/'; h--)
		;
	keep = JSCHEMA_PATH_MAX - h - 4;
	for (t = len - keep; t < len && p[t] != '/'; t++)
		;
	if (t == len) {
		/* One long segment: cut it at a UTF-8 boundary. */
		for (t = len - keep; t < len && (p[t] & 0xc0) == 0x80; t++)
			;
	}
	xasprintf(&out, "%.*s/...%s", (int)h, p, p + t);
	free(p);
	return out;
}

/*
 * parent + "/" + key, the key escaped as JSON Pointer wants (~0 ~1) and
 * cut to JSCHEMA_PATH_KEY_MAX bytes, the whole cut by jschema_path_fit().
 */
char *
jschema_path(const char *parent, const char *key)
{
	size_t	 plen = strlen(parent), i, o;
	char	*out;

	out = xmalloc(plen + JSCHEMA_PATH_KEY_MAX + 8);
	memcpy(out, parent, plen);
	o = plen;
	out[o++] = '/';
	for (i = 0; key[i] != '\0'; i++) {
		if (o - plen - 1 + 2 > JSCHEMA_PATH_KEY_MAX) {
			/* Not within a UTF-8 sequence: cut before its start. */
			while ((key[i] & 0xc0) == 0x80) {
				i--;
				o--;
			}
			memcpy(out + o, "...", 3);
			o += 3;
			break;
		}
		if (key[i] == '~' || key[i] == '/') {
			out[o++] = '~';
			out[o++] = key[i] == '~' ? '0' : '1';
		} else
			out[o++] = key[i];
	}
	out[o] = '\0';
	return jschema_path_fit(out);
}

/* parent + "/" + key + "/" + i: an item of an array keyword. */
char *
jschema_path_index(const char *parent, const char *key, size_t i)
{
	char	*p, *q;

	p = jschema_path(parent, key);
	xasprintf(&q, "%s/%zu", p, i);
	free(p);
	return jschema_path_fit(q);
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

/* Remember the node compiled from a schema object (the table grows at half full). */
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

/* The node already compiled from a schema object, or NULL. */
static struct jsnode *
jschema_memo_get(struct jscomp *c, const json_t *k)
{
	size_t	h;

	if (c->mcap == 0)
		return NULL;
	h = jschema_memo_slot(c, k);
	return c->mkeys[h] == k ? c->mvals[h] : NULL;
}

/* A new node at path, owned by the schema; boolean -1 for an object schema. */
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
struct jsnode *
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

/* Compile one schema (object or boolean) at path. */
struct jsnode *
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
		jskeyword_type(c, n, x);
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
	n->props = jskeyword_named(c, v, path, "properties", &n->nprops, depth);
	if ((x = json_object_get(v, "required")) != NULL) {
		char	*where = jschema_path(path, "required");

		n->required = jskeyword_strings(c, x, where, &n->nrequired);
		free(where);
	}
	n->additional = jschema_sub(c, v, path, "additionalProperties", NULL,
	    depth);
	jskeyword_patterns(c, n, v, depth);
	n->propnames = jschema_sub(c, v, path, "propertyNames", NULL, depth);
	n->min_props = jskeyword_count(c, v, path, "minProperties");
	n->max_props = jskeyword_count(c, v, path, "maxProperties");
	jskeyword_deps(c, n, v, depth);
	jskeyword_arrays(c, n, v, depth);
	jskeyword_strings_kw(c, n, v);
	jskeyword_numbers(c, n, v);
	jskeyword_list(c, v, path, "allOf", &n->all, depth);
	jskeyword_list(c, v, path, "anyOf", &n->any, depth);
	jskeyword_list(c, v, path, "oneOf", &n->one, depth);
	n->not = jschema_sub(c, v, path, "not", NULL, depth);
	if ((n->if_ = jschema_sub(c, v, path, "if", NULL, depth)) != NULL) {
		n->then_ = jschema_sub(c, v, path, "then", NULL, depth);
		n->else_ = jschema_sub(c, v, path, "else", NULL, depth);
	}
	jskeyword_unsupported(c, n, v);
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
	char		*frag, *path, *q;

	while (c->npending > 0 && c->err == NULL) {
		n = c->pending[--c->npending];
		ref = n->ref_src;
		q = jsvalue_quote_str(ref, strlen(ref));
		if (ref[0] != '#') {
			jschema_notef(c->s, "%s/$ref: %s is not in this "
			    "schema (only \"#...\" references are followed): "
			    "it is not checked", n->path, q);
			free(q);
			continue;
		}
		if ((frag = jschema_unpercent(ref + 1)) == NULL) {
			jschema_fail(c, "%s/$ref: %s has a bad %%-escape",
			    n->path, q);
			free(q);
			return;
		}
		if (frag[0] != '\0' && frag[0] != '/') {
			jschema_notef(c->s, "%s/$ref: %s names an anchor, "
			    "which is not supported: it is not checked",
			    n->path, q);
			free(frag);
			free(q);
			continue;
		}
		if ((t = jschema_pointer(c->s->doc, frag)) == NULL) {
			jschema_fail(c, "%s/$ref: %s points at nothing in "
			    "the schema", n->path, q);
			free(frag);
			free(q);
			return;
		}
		free(q);
		xasprintf(&path, "#%s", frag);
		path = jschema_path_fit(path);
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

/* What one node holds, for jschema_size(). */
static size_t
jschema_node_size(const struct jsnode *n)
{
	return sizeof *n + strlen(n->path) + 1 +
	    n->nprops * sizeof *n->props +
	    n->nrequired * sizeof *n->required +
	    n->npatterns * sizeof *n->patterns +
	    n->ndepreq * sizeof *n->depreq +
	    n->ndepschema * sizeof *n->depschema +
	    (n->prefix.n + n->all.n + n->any.n + n->one.n) *
	    sizeof (struct jsnode *);
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
	size_t		 i;

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
	/* re_size counts instructions and ranges; an instruction is the
	   larger. */
	s->size = sizeof *s + c.re_size * sizeof (struct jsre_insn) +
	    s->nodecap * sizeof *s->nodes;
	for (i = 0; i < s->nnodes; i++)
		s->size += jschema_node_size(s->nodes[i]);
	if (s->notes_dropped > 0) {
		s->nnotes--;
		free(s->notes[s->nnotes]);
		s->notes[s->nnotes] = NULL;
		xasprintf(&s->notes[s->nnotes++], "and %zu more notes",
		    s->notes_dropped + 1);
	}
	return s;
}

/* Free one node and what it owns (its regexes too). */
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

/* Free a compiled schema, its nodes and notes, and drop our reference. */
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
	return jschema_validate_run(s, v, cb, arg, NULL);
}

/* jschema_validate(), also saying in *run (if not NULL) what it cost. */
int
jschema_validate_run(const struct jschema *s, const json_t *v,
    jschema_error_cb cb, void *arg, struct jschema_run *run)
{
	if (run != NULL)
		memset(run, 0, sizeof *run);
	if (v == NULL) {
		if (cb != NULL)
			cb(arg, "$", "#", "there is no value to check");
		return 1;
	}
	return jsvalid_run(s, v, cb, arg, run);
}

/*
 * The bytes a compiled schema holds of its own: its nodes with their
 * paths and tables, and its matchers (the schema document it refers to
 * is the caller's to count).
 */
size_t
jschema_size(const struct jschema *s)
{
	return s->size;
}


/* The dialect the schema was read as. */
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

/* Note i (0 to jschema_nnotes() - 1), or NULL. */
const char *
jschema_note(const struct jschema *s, size_t i)
{
	return i < s->nnotes ? s->notes[i] : NULL;
}
