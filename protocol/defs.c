/*
 * defs.c: the shapes of mcp.def (compiled in) read once into tables: each
 * def with its inherited members, every type's reference resolved per
 * revision, every union's alternatives per revision.  A mistake in the
 * data is a broken invariant (fatalx, naming the line), caught by the
 * unit tests the moment it is made.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "shape_int.h"

/* mcp.def, embedded by cmake/embed.cmake. */
extern const char protocol_mcp_def[];

/* A line of mcp.def is at most this long (the longest is ~150). */
#define DEFS_LINE_MAX		512
/* Named types nest at most this deep (the deepest is 3). */
#define DEFS_NEST_MAX		8

static struct shapes	 defs_shapes;
static pthread_once_t	 defs_once = PTHREAD_ONCE_INIT;

/* Every type made, for resolving references once all defs are read. */
static struct stype	**defs_types;
static size_t		  defs_ntypes, defs_types_alloc;

/* The line being read, for messages about the data. */
static int		  defs_line;
/* Whether an indented member line belongs to a def just read (a type or
   error line ends the def before it). */
static int		  defs_in_def;

/* Stop on a mistake in mcp.def, naming its line. */
__dead static void
defs_bad(const char *what, const char *near)
{
	fatalx("protocol/mcp.def line %d: %s near \"%.40s\"", defs_line, what,
	    near);
}

/* A new type node, kept for resolving its references later. */
struct stype *
defs_type_new(enum st_kind kind)
{
	struct stype	*t;
	int		 v;

	t = xcalloc(1, sizeof *t);
	t->kind = kind;
	t->line = defs_line;
	for (v = 0; v < PROTO_V_MAX; v++)
		t->ref[v] = -1;
	if (defs_ntypes == defs_types_alloc) {
		defs_types_alloc = defs_types_alloc == 0 ? 256 :
		    defs_types_alloc * 2;
		defs_types = xreallocarray(defs_types, defs_types_alloc,
		    sizeof *defs_types);
	}
	defs_types[defs_ntypes++] = t;
	return (t);
}

/* Skip blanks. */
static const char *
defs_skip(const char *p)
{
	while (*p == ' ' || *p == '\t')
		p++;
	return (p);
}

/* A revision named in a version tag. */
static enum proto_version
defs_version(const char *s, size_t len)
{
	enum proto_version	v = proto_version_parse_n(s, len);

	if (v == PROTO_V_UNKNOWN)
		defs_bad("unknown revision", s);
	return (v);
}

/* The revisions of a tag without its '@': "2025-06-18+,modern". */
static unsigned
defs_versions(const char *s)
{
	unsigned	 set = 0;
	const char	*start = s, *end, *dots;
	size_t		 len;

	while (*s != '\0') {
		end = strchr(s, ',');
		len = end != NULL ? (size_t)(end - s) : strlen(s);
		dots = memmem(s, len, "..", 2);
		if (len == 6 && strncmp(s, "legacy", 6) == 0)
			set |= PROTO_VLEGACY;
		else if (len == 6 && strncmp(s, "modern", 6) == 0)
			set |= PROTO_VBIT(PROTO_V_2026_07_28);
		else if (len > 0 && s[len - 1] == '+')
			set |= PROTO_VFROM(defs_version(s, len - 1));
		else if (len > 0 && s[0] == '-')
			set |= PROTO_VALL & ((PROTO_VBIT(defs_version(s + 1,
			    len - 1)) << 1) - 1);
		else if (dots != NULL)
			set |= PROTO_VFROM(defs_version(s, (size_t)(dots -
			    s))) & ((PROTO_VBIT(defs_version(dots + 2, len -
			    (size_t)(dots - s) - 2)) << 1) - 1);
		else
			set |= PROTO_VBIT(defs_version(s, len));
		s += len;
		if (*s == ',')
			s++;
	}
	if (set == 0)
		defs_bad("no revisions", start);
	return (set);
}

/* Cut a trailing " @tag" off line, returning its revisions (all if none). */
static unsigned
defs_cut_tag(char *line)
{
	char	*at = strrchr(line, '@');
	size_t	 len;

	if (at == NULL || (at > line && at[-1] != ' ' && at[-1] != '\t'))
		return (PROTO_VALL);
	*at = '\0';
	len = strcspn(at + 1, " \t");
	at[1 + len] = '\0';
	return (defs_versions(at + 1));
}

/* Trim blanks at the end. */
static void
defs_rtrim(char *s)
{
	size_t	len = strlen(s);

	while (len > 0 && (s[len - 1] == ' ' || s[len - 1] == '\t'))
		s[--len] = '\0';
}

/* A new def (or named type) at the end of the table. */
static struct sdef *
defs_add(const char *name)
{
	struct shapes	*sh = &defs_shapes;
	struct sdef	*d;

	sh->defs = xreallocarray(sh->defs, sh->ndefs + 1, sizeof *sh->defs);
	d = &sh->defs[sh->ndefs++];
	memset(d, 0, sizeof *d);
	d->name = xstrdup(name);
	d->line = defs_line;
	d->next = -1;
	return (d);
}

/* "def Name [: A, B] [@tag] [= Spec]" */
static void
defs_read_def(char *rest)
{
	struct sdef	*d;
	char		*eq, *colon, *name, *b, *save = NULL;
	unsigned	 versions;

	eq = strstr(rest, " = ");
	if (eq != NULL) {
		*eq = '\0';
		eq += 3;
	}
	versions = defs_cut_tag(rest);
	colon = strchr(rest, ':');
	if (colon != NULL)
		*colon++ = '\0';
	defs_rtrim(rest);
	name = (char *)defs_skip(rest);
	if (*name == '\0' || strpbrk(name, " \t") != NULL)
		defs_bad("one name expected", name);
	d = defs_add(name);
	d->versions = versions;
	if (eq != NULL) {
		defs_rtrim(eq);
		d->spec_name = xstrdup(defs_skip(eq));
	} else {
		d->spec_name = xstrdup(name);
		if (strchr(d->spec_name, '.') != NULL)
			*strchr(d->spec_name, '.') = '\0';
	}
	for (b = colon != NULL ? strtok_r(colon, ", \t", &save) : NULL;
	    b != NULL; b = strtok_r(NULL, ", \t", &save)) {
		d->bases = xreallocarray(d->bases, d->nbases + 1,
		    sizeof *d->bases);
		d->bases[d->nbases++] = xstrdup(b);
	}
	defs_in_def = 1;
}

/* "type Name [@tag] = expr" */
static void
defs_read_type(char *rest)
{
	struct sdef	*d;
	char		*eq, *cause;

	defs_in_def = 0;
	eq = strstr(rest, " = ");
	if (eq == NULL)
		defs_bad("'=' expected", rest);
	*eq = '\0';
	d = defs_add("");
	d->versions = defs_cut_tag(rest);
	defs_rtrim(rest);
	free(d->name);
	d->name = xstrdup(defs_skip(rest));
	d->spec_name = xstrdup(d->name);
	if (typexpr_parse(eq + 3, &d->alias, &cause) == -1)
		defs_bad(cause, eq + 3);
}

/* "error CODE [@tag] = expr": the shape of error.data for a code. */
static void
defs_read_error(char *rest)
{
	struct shapes	*sh = &defs_shapes;
	struct serror	*e;
	char		*eq, *end, *cause;

	defs_in_def = 0;
	eq = strstr(rest, " = ");
	if (eq == NULL)
		defs_bad("'=' expected", rest);
	*eq = '\0';
	sh->errors = xreallocarray(sh->errors, sh->nerrors + 1,
	    sizeof *sh->errors);
	e = &sh->errors[sh->nerrors++];
	e->line = defs_line;
	e->versions = defs_cut_tag(rest);
	e->code = strtoll(defs_skip(rest), &end, 10);
	if (end == defs_skip(rest) || *defs_skip(end) != '\0')
		defs_bad("an error code expected", rest);
	if (typexpr_parse(eq + 3, &e->data, &cause) == -1)
		defs_bad(cause, eq + 3);
}

/* The data shape of an error code in a revision, or NULL. */
const struct serror *
defs_error(const struct shapes *sh, long long code, enum proto_version v)
{
	size_t	i;

	for (i = 0; i < sh->nerrors; i++) {
		if (sh->errors[i].code == code &&
		    (sh->errors[i].versions & PROTO_VBIT(v)))
			return (&sh->errors[i]);
	}
	return (NULL);
}

/* "  name[?] expr [@tag]", a member of the last def. */
static void
defs_read_member(char *line)
{
	struct shapes	*sh = &defs_shapes;
	struct sdef	*d;
	struct smember	*m;
	char		*name, *end, *cause;

	if (!defs_in_def || sh->ndefs == 0 ||
	    sh->defs[sh->ndefs - 1].alias != NULL)
		defs_bad("a member outside a def (after a type or error line)",
		    defs_skip(line));
	d = &sh->defs[sh->ndefs - 1];
	d->members = xreallocarray(d->members, d->nmembers + 1,
	    sizeof *d->members);
	m = &d->members[d->nmembers++];
	memset(m, 0, sizeof *m);
	m->versions = defs_cut_tag(line) & d->versions;
	if (m->versions == 0)
		defs_bad("a member in no revision of its def", line);
	name = (char *)defs_skip(line);
	end = name + strcspn(name, " \t");
	if (*end == '\0')
		defs_bad("a type expected", name);
	*end++ = '\0';
	if (end - name > 2 && end[-2] == '?') {
		end[-2] = '\0';
		m->optional = 1;
	}
	m->name = xstrdup(name);
	if (typexpr_parse(end, &m->type, &cause) == -1)
		defs_bad(cause, end);
}

/* Read the text of mcp.def into defs_shapes.defs. */
static void
defs_read(const char *text)
{
	const char	*p = text, *nl;
	char		 line[DEFS_LINE_MAX], *hash;
	size_t		 len;

	defs_in_def = 0;
	for (defs_line = 1; *p != '\0'; defs_line++, p = nl + 1) {
		nl = strchr(p, '\n');
		if (nl == NULL)
			nl = p + strlen(p) - 1;
		len = (size_t)(nl - p) + (*nl != '\n');
		if (len >= sizeof line)
			defs_bad("line too long", p);
		memcpy(line, p, len);
		line[len] = '\0';
		if ((hash = strchr(line, '#')) != NULL)
			*hash = '\0';
		defs_rtrim(line);
		if (line[0] == '\0')
			continue;
		if (strncmp(line, "def ", 4) == 0)
			defs_read_def(line + 4);
		else if (strncmp(line, "type ", 5) == 0)
			defs_read_type(line + 5);
		else if (strncmp(line, "error ", 6) == 0)
			defs_read_error(line + 6);
		else if (line[0] == ' ' || line[0] == '\t')
			defs_read_member(line);
		else
			defs_bad("def, type or an indented member expected",
			    line);
	}
}

/* FNV-1a of a name. */
static uint32_t
defs_fnv(const char *s)
{
	uint32_t	h = 2166136261u;

	for (; *s != '\0'; s++) {
		h ^= (unsigned char)*s;
		h *= 16777619u;
	}
	return (h);
}

/* The first def of a name, or -1. */
static int
defs_first(const struct shapes *sh, const char *name)
{
	size_t	slot = defs_fnv(name) & (sh->hash_size - 1);
	int	i;

	for (; (i = sh->hash[slot]) != 0; slot = (slot + 1) &
	    (sh->hash_size - 1)) {
		if (strcmp(sh->defs[i - 1].name, name) == 0)
			return (i - 1);
	}
	return (-1);
}

/* The def or type of a name in a revision, or NULL. */
const struct sdef *
defs_find(const struct shapes *sh, const char *name, enum proto_version v)
{
	int	i;

	for (i = defs_first(sh, name); i != -1; i = sh->defs[i].next) {
		if (sh->defs[i].versions & PROTO_VBIT(v))
			return (&sh->defs[i]);
	}
	return (NULL);
}

/* Hash the names; defs of one name are chained and must not overlap. */
static void
defs_index(void)
{
	struct shapes	*sh = &defs_shapes;
	size_t		 i, slot;
	int		 first, j;

	sh->hash_size = 64;
	while (sh->hash_size < sh->ndefs * 4)
		sh->hash_size *= 2;
	sh->hash = xcalloc(sh->hash_size, sizeof *sh->hash);
	for (i = 0; i < sh->ndefs; i++) {
		defs_line = sh->defs[i].line;
		first = defs_first(sh, sh->defs[i].name);
		if (first == -1) {
			slot = defs_fnv(sh->defs[i].name) &
			    (sh->hash_size - 1);
			while (sh->hash[slot] != 0)
				slot = (slot + 1) & (sh->hash_size - 1);
			sh->hash[slot] = (int)i + 1;
			continue;
		}
		for (j = first; ; j = sh->defs[j].next) {
			if (sh->defs[j].versions & sh->defs[i].versions)
				defs_bad("a second def in the same revision",
				    sh->defs[i].name);
			if (sh->defs[j].next == -1)
				break;
		}
		sh->defs[j].next = (int)i;
	}
}

/* Add a def's inherited members to its own (own members win). */
static void
defs_flatten(struct sdef *d)
{
	struct shapes	*sh = &defs_shapes;
	struct sdef	*b;
	struct smember	*m;
	size_t		 i, k, n;
	unsigned	 vers, mine;
	int		 j;

	if (d->flat == 2)
		return;
	defs_line = d->line;
	if (d->flat == 1)
		defs_bad("a def that inherits from itself", d->name);
	d->flat = 1;
	for (i = 0; i < d->nbases; i++) {
		j = defs_first(sh, d->bases[i]);
		if (j == -1)
			defs_bad("an unknown base", d->bases[i]);
		for (; j != -1; j = sh->defs[j].next) {
			b = &sh->defs[j];
			if ((b->versions & d->versions) == 0)
				continue;
			if (b->alias != NULL)
				defs_bad("a base that is not a def", b->name);
			defs_flatten(b);
			defs_line = d->line;
			for (k = 0; k < b->nmembers; k++) {
				vers = b->members[k].versions & b->versions &
				    d->versions;
				/* Own members win, and a member reached
				   through two bases (both from Result) is
				   added once. */
				mine = 0;
				for (n = 0; n < d->nmembers; n++) {
					if (strcmp(d->members[n].name,
					    b->members[k].name) == 0)
						mine |= d->members[n].versions;
				}
				vers &= ~mine;
				if (vers == 0)
					continue;
				d->members = xreallocarray(d->members,
				    d->nmembers + 1, sizeof *d->members);
				m = &d->members[d->nmembers++];
				*m = b->members[k];
				m->versions = vers;
			}
		}
	}
	d->flat = 2;
}

static void	defs_leaves(struct stype *, struct stype *, enum proto_version,
		    int);

/* Add what one alternative stands for in revision v to union u. */
static void
defs_leaf(struct stype *u, struct stype *alt, enum proto_version v,
    int depth)
{
	const struct sdef	*d;

	if (depth > DEFS_NEST_MAX)
		defs_bad("types nested too deep (or a cycle of named types)",
		    alt->kind == ST_REF ? alt->text : "");
	if (alt->kind == ST_UNION) {
		defs_leaves(u, alt, v, depth + 1);
		return;
	}
	if (alt->kind == ST_REF) {
		if (alt->ref[v] == -1)
			return;		/* not in this revision */
		d = &defs_shapes.defs[alt->ref[v]];
		if (d->alias != NULL) {
			defs_leaf(u, d->alias, v, depth + 1);
			return;
		}
	}
	if (u->nleaves[v] == SHAPE_UNION_MAX)
		defs_bad("a union too wide (raise SHAPE_UNION_MAX)", "");
	u->leaves[v][u->nleaves[v]++] = alt;
}

/* Add every alternative of from to union u's leaves in revision v. */
static void
defs_leaves(struct stype *u, struct stype *from, enum proto_version v,
    int depth)
{
	size_t	i;

	if (depth > DEFS_NEST_MAX)
		defs_bad("types nested too deep", "");
	for (i = 0; i < from->nalts; i++)
		defs_leaf(u, from->alts[i], v, depth);
}

/*
 * That no named type is a cycle of names (type A = B, type B = A): the
 * walk follows a named type to what it stands for, and would never stop.
 */
static void
defs_chains(void)
{
	const struct sdef	*d, *at;
	const struct stype	*t;
	size_t			 i;
	int			 v, n;

	for (i = 0; i < defs_shapes.ndefs; i++) {
		d = &defs_shapes.defs[i];
		if (d->alias == NULL)
			continue;
		for (v = 1; v < PROTO_V_MAX; v++) {
			if ((d->versions & PROTO_VBIT(v)) == 0)
				continue;
			t = d->alias;
			for (n = 0; t->kind == ST_REF && t->ref[v] != -1; n++) {
				at = &defs_shapes.defs[t->ref[v]];
				if (at->alias == NULL)
					break;
				if (n == DEFS_NEST_MAX) {
					defs_line = d->line;
					defs_bad("a named type that stands for "
					    "itself (a cycle of names)",
					    d->name);
				}
				t = at->alias;
			}
		}
	}
}

/* Resolve every reference, per revision; then every union's leaves. */
static void
defs_resolve(void)
{
	const struct sdef	*d;
	struct stype		*t;
	size_t			 i;
	int			 v;

	for (i = 0; i < defs_ntypes; i++) {
		t = defs_types[i];
		if (t->kind != ST_REF)
			continue;
		defs_line = t->line;
		if (defs_first(&defs_shapes, t->text) == -1)
			defs_bad("a name used but never defined", t->text);
		for (v = 1; v < PROTO_V_MAX; v++) {
			d = defs_find(&defs_shapes, t->text,
			    (enum proto_version)v);
			if (d != NULL)
				t->ref[v] = (int)(d - defs_shapes.defs);
		}
	}
	defs_chains();
	for (i = 0; i < defs_ntypes; i++) {
		t = defs_types[i];
		if (t->kind != ST_UNION)
			continue;
		defs_line = t->line;
		for (v = 1; v < PROTO_V_MAX; v++)
			defs_leaves(t, t, (enum proto_version)v, 0);
	}
}

/*
 * That a type means something in revision v: a reference names a def of
 * v and a union keeps at least one alternative.  where says who uses it.
 */
static void
defs_check(const struct stype *t, enum proto_version v, const char *where)
{
	size_t	i;

	switch (t->kind) {
	case ST_REF:
		if (t->ref[v] == -1)
			fatalx("protocol/mcp.def: %s uses %s, which %s does "
			    "not have", where, t->text, proto_version_name(v));
		break;
	case ST_UNION:
		if (t->nleaves[v] == 0)
			fatalx("protocol/mcp.def: %s uses a union with "
			    "nothing in %s", where, proto_version_name(v));
		for (i = 0; i < t->nalts; i++) {
			if (t->alts[i]->kind != ST_REF)
				defs_check(t->alts[i], v, where);
		}
		break;
	case ST_ARRAYOF:
	case ST_MAP:
		defs_check(t->sub, v, where);
		break;
	default:
		break;
	}
}

/* Build the method table's params and result types and check them. */
static void
defs_methods(void)
{
	struct shapes			*sh = &defs_shapes;
	const struct proto_method	*t;
	size_t				 n, i, first = defs_ntypes;
	char				*cause, where[128];
	int				 v;

	t = proto_methods(&n);
	sh->params = xcalloc(n, sizeof *sh->params);
	sh->result = xcalloc(n, sizeof *sh->result);
	for (i = 0; i < n; i++) {
		if (typexpr_parse(t[i].params, &sh->params[i], &cause) ==
		    -1)
			fatalx("method %s: params: %s", t[i].name, cause);
		if (t[i].result != NULL && typexpr_parse(t[i].result,
		    &sh->result[i], &cause) == -1)
			fatalx("method %s: result: %s", t[i].name, cause);
	}
	/* The new types' references. */
	for (i = first; i < defs_ntypes; i++) {
		struct stype *ty = defs_types[i];

		if (ty->kind != ST_REF)
			continue;
		for (v = 1; v < PROTO_V_MAX; v++) {
			const struct sdef *d = defs_find(sh, ty->text,
			    (enum proto_version)v);

			if (d != NULL)
				ty->ref[v] = (int)(d - sh->defs);
		}
	}
	for (i = first; i < defs_ntypes; i++) {
		if (defs_types[i]->kind != ST_UNION)
			continue;
		for (v = 1; v < PROTO_V_MAX; v++)
			defs_leaves(defs_types[i], defs_types[i],
			    (enum proto_version)v, 0);
	}
	for (i = 0; i < n; i++) {
		for (v = 1; v < PROTO_V_MAX; v++) {
			if ((t[i].versions & PROTO_VBIT(v)) == 0)
				continue;
			snprintf(where, sizeof where, "method %s", t[i].name);
			defs_check(sh->params[i], (enum proto_version)v,
			    where);
			if (sh->result[i] != NULL)
				defs_check(sh->result[i],
				    (enum proto_version)v, where);
		}
	}
}

/*
 * Read, index, flatten, resolve and check a text in the form of mcp.def,
 * stopping the program naming the line of a mistake.  Called once, from
 * defs_init(); the unit tests call it on small bad texts (in a child).
 */
void
defs_load_text(const char *text)
{
	struct shapes	*sh = &defs_shapes;
	struct sdef	*d;
	size_t		 i, k;
	char		 where[128];
	int		 v;

	defs_read(text);
	defs_index();
	for (i = 0; i < sh->ndefs; i++)
		defs_flatten(&sh->defs[i]);
	defs_resolve();
	for (i = 0; i < sh->ndefs; i++) {
		d = &sh->defs[i];
		for (v = 1; v < PROTO_V_MAX; v++) {
			if ((d->versions & PROTO_VBIT(v)) == 0)
				continue;
			xasprintf(&d->spec[v], "%s schema.ts: %s",
			    proto_version_name((enum proto_version)v),
			    d->spec_name);
			snprintf(where, sizeof where, "line %d (%s)", d->line,
			    d->name);
			if (d->alias != NULL)
				defs_check(d->alias, (enum proto_version)v,
				    where);
			for (k = 0; k < d->nmembers; k++) {
				if (d->members[k].versions & PROTO_VBIT(v))
					defs_check(d->members[k].type,
					    (enum proto_version)v, where);
			}
		}
	}
	for (i = 0; i < sh->nerrors; i++) {
		for (v = 1; v < PROTO_V_MAX; v++) {
			if ((sh->errors[i].versions & PROTO_VBIT(v)) == 0)
				continue;
			snprintf(where, sizeof where, "line %d (error %lld)",
			    sh->errors[i].line, sh->errors[i].code);
			defs_check(sh->errors[i].data, (enum proto_version)v,
			    where);
		}
	}
}

/* Everything of the compiled-in mcp.def and the method table, once. */
static void
defs_init(void)
{
	defs_load_text(protocol_mcp_def);
	defs_line = 0;
	defs_methods();
}

/* The shapes, built on first use; read-only after. */
const struct shapes *
defs_get(void)
{
	pthread_once(&defs_once, defs_init);
	return (&defs_shapes);
}
