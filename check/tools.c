/*
 * tools.c: a tool's schemas applied to its calls.  When tools/list is
 * answered each listed tool's inputSchema and outputSchema are compiled
 * (jsonschema.c) and kept by tool name; a schema that cannot be compiled
 * is a warning on that answer, what the validator leaves out a note.  A
 * tools/call's arguments are checked against the inputSchema, its
 * result's structuredContent against the outputSchema (or its absence
 * reported), and the kind of answer (a JSON-RPC error or a result with
 * isError) against what the revision's tools page prescribes for an
 * unknown tool and for arguments that fail the schema.
 *
 * Compiled schemas are kept for the current listing and the one before
 * (a tool listed again with the same schemas is not compiled again), at
 * most CHECK_SCHEMA_TOOLS_MAX a listing, and at most
 * CHECK_SCHEMA_BYTES_MAX bytes of schema are compiled in a session.
 */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "check_int.h"

/* One tool's compiled schemas. */
struct tool_ent {
	char		*name;
	json_t		*in_doc;	/* the schemas as listed, or NULL */
	json_t		*out_doc;
	struct jschema	*in;		/* NULL: none, or not compiled */
	struct jschema	*out;
	int		 costly;	/* a check of it ran out of steps */
};

/* The tools of one listing, name -> slot. */
struct tool_gen {
	struct tool_ent	*ent;
	size_t		 n, alloc;
	struct idmap	*names;
};

struct tools {
	struct tool_gen	 cur, old;
	size_t		 bytes;		/* schema bytes compiled so far */
	size_t		 costly;	/* checks that ran out of steps */
	int		 over_tools;	/* the notes given */
	int		 over_bytes;
	int		 over_costly;
};

/* A validation stopped for cost: the tool's later calls go unchecked. */
#define TOOLS_COSTLY_TEXT	"the schema is too costly"
#define TOOLS_DEEP_TEXT		"the schema nests deeper"

static void
tools_gen_free(struct tool_gen *g)
{
	size_t	i;

	for (i = 0; i < g->n; i++) {
		free(g->ent[i].name);
		json_decref(g->ent[i].in_doc);
		json_decref(g->ent[i].out_doc);
		jschema_free(g->ent[i].in);
		jschema_free(g->ent[i].out);
	}
	free(g->ent);
	idmap_free(g->names);
	memset(g, 0, sizeof *g);
}

static void
tools_gen_init(struct tool_gen *g)
{
	memset(g, 0, sizeof *g);
	g->names = idmap_new();
}

/* A new, empty cache. */
struct tools *
tools_new(void)
{
	struct tools	*t;

	t = xcalloc(1, sizeof *t);
	tools_gen_init(&t->cur);
	tools_gen_init(&t->old);
	return (t);
}

void
tools_free(struct tools *t)
{
	if (t == NULL)
		return;
	tools_gen_free(&t->cur);
	tools_gen_free(&t->old);
	free(t);
}

static struct tool_ent *
tools_find(struct tool_gen *g, const char *name)
{
	int64_t	slot;

	if (idmap_get(g->names, name, strlen(name), &slot) != 0)
		return (NULL);
	return (&g->ent[slot]);
}

/* A first page of tools/list: a new listing starts. */
void
tools_list_begin(struct check *c)
{
	struct tools	*t = c->toolc;

	tools_gen_free(&t->old);
	t->old = t->cur;
	tools_gen_init(&t->cur);
	t->over_tools = 0;
}

/* The draft a schema without $schema is read as under revision v. */
static int
tools_flags(enum proto_version v)
{
	/* 2025-11-25 on: "Defaults to 2020-12 if no $schema field". */
	return (v != PROTO_V_UNKNOWN && v < PROTO_V_2025_11_25 ?
	    JSCHEMA_DRAFT07 : 0);
}

/* Compile one of a tool's schemas; report why not, and its notes. */
static struct jschema *
tools_compile(struct check *c, struct cmsg *m, const json_t *doc,
    const char *name, size_t idx, const char *which)
{
	struct tools	*t = c->toolc;
	struct jschema	*s;
	char		*cause = NULL, member[64], path[96], spec[64];
	size_t		 len, i;

	snprintf(member, sizeof member, "result.tools[%zu].%s", idx, which);
	check_path(c, member, path, sizeof path);
	check_spec(m->v, "server/tools", spec, sizeof spec);
	len = json_dumpb(doc, NULL, 0, JSON_COMPACT);
	if (t->bytes + len > CHECK_SCHEMA_BYTES_MAX) {
		if (!t->over_bytes)
			check_report(c, "tool.schema-limit", PROTO_NOTE, path,
			    spec, "%d bytes of tool schemas were compiled in "
			    "this session already; the %s of \"%s\" and of "
			    "later tools are not checked",
			    CHECK_SCHEMA_BYTES_MAX, which, name);
		t->over_bytes = 1;
		return (NULL);
	}
	t->bytes += len;
	if ((s = jschema_compile(doc, tools_flags(m->v), &cause)) == NULL) {
		check_report(c, "tool.schema-invalid", PROTO_WARNING, path,
		    spec, "the %s of tool \"%s\" is not a usable JSON Schema "
		    "(%s); nothing is checked against it", which, name,
		    cause != NULL ? cause : "refused");
		free(cause);
		return (NULL);
	}
	for (i = 0; i < jschema_nnotes(s); i++)
		check_report(c, "tool.schema-note", PROTO_NOTE, path, spec,
		    "the %s of tool \"%s\" is checked in part: %s", which,
		    name, jschema_note(s, i));
	return (s);
}

/* A tool of a tools/list answer (index idx in result.tools). */
void
tools_listed(struct check *c, struct cmsg *m, const json_t *tool,
    size_t idx)
{
	struct tools	*t = c->toolc;
	struct tool_gen	*g = &t->cur;
	struct tool_ent	*e, *prev;
	const json_t	*in, *out;
	const char	*name;
	char		 path[64], spec[64];

	name = json_string_value(json_object_get(tool, "name"));
	if (name == NULL || tools_find(g, name) != NULL)
		return;
	if (g->n >= CHECK_SCHEMA_TOOLS_MAX) {
		if (!t->over_tools)
			check_report(c, "tool.schema-limit", PROTO_NOTE,
			    check_path(c, "result.tools", path, sizeof path),
			    check_spec(m->v, "server/tools", spec, sizeof spec),
			    "more than %d tools listed; the schemas of \"%s\" "
			    "and later tools are not checked",
			    CHECK_SCHEMA_TOOLS_MAX, name);
		t->over_tools = 1;
		return;
	}
	in = json_object_get(tool, "inputSchema");
	out = json_object_get(tool, "outputSchema");
	if (!json_is_object(in))
		in = NULL;
	if (!json_is_object(out))
		out = NULL;
	if (g->n == g->alloc) {
		g->alloc = g->alloc ? g->alloc * 2 : 16;
		g->ent = xreallocarray(g->ent, g->alloc, sizeof *g->ent);
	}
	e = &g->ent[g->n];
	memset(e, 0, sizeof *e);
	e->name = xstrdup(name);
	e->in_doc = json_incref((json_t *)in);
	e->out_doc = json_incref((json_t *)out);
	idmap_put(g->names, name, strlen(name), (int64_t)g->n, NULL);
	g->n++;
	/* The same schemas as in the listing before: compiled already. */
	prev = tools_find(&t->old, name);
	if (prev != NULL && !prev->costly &&
	    (in == NULL) == (prev->in_doc == NULL) &&
	    (out == NULL) == (prev->out_doc == NULL) &&
	    (in == NULL || (prev->in != NULL && json_equal(in,
	    prev->in_doc))) && (out == NULL || (prev->out != NULL &&
	    json_equal(out, prev->out_doc)))) {
		e->in = prev->in;
		e->out = prev->out;
		prev->in = prev->out = NULL;
		return;
	}
	if (in != NULL)
		e->in = tools_compile(c, m, in, name, idx, "inputSchema");
	if (out != NULL)
		e->out = tools_compile(c, m, out, name, idx, "outputSchema");
}

/* What a schema check passes to each validator error. */
struct tools_err {
	struct check	*c;
	struct tool_ent	*e;
	const char	*rule;
	int		 severity;
	const char	*base;		/* "$.params.arguments" */
	const char	*spec;
	const char	*what;		/* "the arguments are", ... */
	const char	*schema;	/* "inputSchema" */
	int		 stopped;
};

static void
tools_err_cb(void *arg, const char *ipath, const char *spath,
    const char *text)
{
	struct tools_err	*a = arg;
	char			*path;

	if (strncmp(text, TOOLS_COSTLY_TEXT, strlen(TOOLS_COSTLY_TEXT)) == 0 ||
	    strncmp(text, TOOLS_DEEP_TEXT, strlen(TOOLS_DEEP_TEXT)) == 0) {
		a->stopped = 1;
		check_report(a->c, "tool.schema-limit", PROTO_NOTE, a->base,
		    a->spec, "checking against the %s of tool \"%s\" "
		    "stopped: %s; later calls of it are not checked",
		    a->schema, a->e->name, text);
		return;
	}
	/* ipath is "$" then members: put it under where the value is. */
	xasprintf(&path, "%s%s", a->base, ipath[0] == '$' ? ipath + 1 :
	    ipath);
	check_report(a->c, a->rule, a->severity, path, a->spec, "%s not as "
	    "tool \"%s\"'s %s requires: %s (schema %s)", a->what,
	    a->e->name, a->schema, text, spath);
	free(path);
}

/* Apply a compiled schema; the number of errors. */
static int
tools_apply(struct check *c, struct cmsg *m, struct tool_ent *e,
    const struct jschema *s, const json_t *v, const char *member,
    const char *rule, int severity, const char *what, const char *schema)
{
	struct tools		*t = c->toolc;
	struct tools_err	 a;
	char			 base[96], spec[64];
	int			 n;

	if (t->costly >= CHECK_SCHEMA_COSTLY_MAX) {
		if (!t->over_costly)
			check_report(c, "tool.schema-limit", PROTO_NOTE,
			    check_path(c, member, base, sizeof base),
			    check_spec(m->v, "server/tools", spec, sizeof spec),
			    "%d tool schema checks ran out of steps; no more "
			    "are checked in this session",
			    CHECK_SCHEMA_COSTLY_MAX);
		t->over_costly = 1;
		return (0);
	}
	memset(&a, 0, sizeof a);
	a.c = c;
	a.e = e;
	a.rule = rule;
	a.severity = severity;
	a.base = check_path(c, member, base, sizeof base);
	a.spec = check_spec(m->v, "server/tools", spec, sizeof spec);
	a.what = what;
	a.schema = schema;
	n = jschema_validate(s, v, tools_err_cb, &a);
	if (a.stopped) {
		e->costly = 1;
		t->costly++;
	}
	return (a.stopped ? 0 : n);
}

/* tools/call of a listed tool: its arguments against its inputSchema. */
void
tools_call(struct check *c, struct cmsg *m, const char *name)
{
	struct tool_ent	*e;
	const json_t	*args;
	json_t		*empty = NULL;

	if ((e = tools_find(&c->toolc->cur, name)) == NULL || e->in == NULL ||
	    e->costly)
		return;
	args = json_object_get(json_object_get(m->j, "params"), "arguments");
	if (args == NULL)
		args = empty = json_object();
	if (tools_apply(c, m, e, e->in, args, "params.arguments",
	    "tool.arguments", PROTO_WARNING, "the arguments are",
	    "inputSchema") >
	    0)
		m->tool_flags |= TOOL_ARGS_BAD;
	json_decref(empty);
}

/* The answer to a tools/call (m->req): a result or a JSON-RPC error. */
void
tools_answered(struct check *c, struct cmsg *m)
{
	struct pend	*p = m->req;
	struct tool_ent	*e;
	const json_t	*result, *sc;
	char		 path[64], spec[64];
	int		 is_error;

	result = json_object_get(m->j, "result");
	is_error = json_is_true(json_object_get(result, "isError"));
	check_spec(m->v, "server/tools", spec, sizeof spec);
	if (json_is_object(result) && is_error &&
	    (p->tool_flags & TOOL_UNKNOWN))
		check_report(c, "tools.unknown-as-result", PROTO_WARNING,
		    check_path(c, "result.isError", path, sizeof path), spec,
		    "tool \"%s\" is unknown (not in the last tools/list), and "
		    "the server answered with a result and \"isError\": true; "
		    "an unknown tool is a protocol error (a JSON-RPC error, "
		    "-32602)", p->target != NULL ? p->target : "");
	if (p->tool_flags & TOOL_ARGS_BAD) {
		/* Up to 2025-06-18 "Invalid arguments" are protocol errors;
		   from 2025-11-25 "Input validation errors" are isError. */
		if (m->v < PROTO_V_2025_11_25 && json_is_object(result) &&
		    is_error)
			check_report(c, "tool.invalid-arguments-answer",
			    PROTO_NOTE, check_path(c, "result.isError", path,
			    sizeof path), spec, "arguments that do not "
			    "satisfy the inputSchema were answered with "
			    "isError; under %s invalid arguments are a "
			    "protocol error (a JSON-RPC error)",
			    proto_version_name(m->v));
		else if (m->v >= PROTO_V_2025_11_25 &&
		    json_object_get(m->j, "error") != NULL)
			check_report(c, "tool.invalid-arguments-answer",
			    PROTO_NOTE, check_path(c, "error", path,
			    sizeof path), spec, "arguments that do not "
			    "satisfy the inputSchema were answered with a "
			    "JSON-RPC error; under %s an input validation "
			    "error is a result with isError, so the model can "
			    "correct itself", proto_version_name(m->v));
	}
	if (!json_is_object(result) || p->target == NULL || (e =
	    tools_find(&c->toolc->cur, p->target)) == NULL || e->out == NULL ||
	    e->costly)
		return;
	/* 2026-07-28 answers input_required before the real result. */
	if (json_is_string(json_object_get(result, "resultType")) &&
	    strcmp(json_string_value(json_object_get(result, "resultType")),
	    "complete") != 0)
		return;
	sc = json_object_get(result, "structuredContent");
	if (sc == NULL) {
		if (!is_error)
			check_report(c, "tool.structured-content-missing",
			    PROTO_ERROR, check_path(c, "result", path,
			    sizeof path), spec, "tool \"%s\" has an "
			    "outputSchema but its result has no "
			    "structuredContent; a server must provide "
			    "structured results that conform to it", e->name);
		return;
	}
	if (is_error)
		return;
	tools_apply(c, m, e, e->out, sc, "result.structuredContent",
	    "tool.structured-content", PROTO_ERROR,
	    "the structuredContent is", "outputSchema");
}
