/*
 * tools.c: a tool's schemas applied to its calls.  When tools/list is
 * answered each listed tool's name is kept, and its inputSchema and
 * outputSchema compiled (jsonschema.c); a schema that cannot be compiled
 * is a finding on that answer, what the validator leaves out a note.  A
 * tools/call's arguments are checked against the inputSchema, its
 * result's structuredContent against the outputSchema (or its absence
 * reported; for a task-augmented call, in the task's tasks/result), and
 * the kind of answer (a JSON-RPC error or a result with isError) against
 * what the revision's tools page prescribes for an unknown tool and for
 * arguments that fail the schema.
 *
 * Bounds (check_session.h): CHECK_TOOLS_MAX names a listing,
 * CHECK_SCHEMA_TOOLS_MAX compiled a listing, CHECK_SCHEMA_BYTES_MAX of
 * compiled schemas and CHECK_SCHEMA_STEPS_MAX of checking a session.
 * Compiled schemas are kept for the current listing and the one before,
 * with the SHA-256 of their text, so a tool listed again with the same
 * schemas is neither compiled nor counted again.
 */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "check_int.h"

/*
 * The x-mcp-header marks kept for a listing (http.c checks a call's
 * Mcp-Param-* headers by them): each is a small tree (~200 bytes), and a
 * listing of 10 000 tools of 256 marks each must not cost gigabytes.  The
 * tools past it are not checked for those headers.
 */
#define TOOLS_MARKS_MAX	4096

/* One listed tool: its name and its schemas. */
struct tools_ent {
	char		*key;		/* the name, or its digest if long */
	size_t		 klen;
	char		*name;		/* for findings: JSON-quoted, cut */
	char		*in_dig;	/* SHA-256 of the schema's text, or */
	char		*out_dig;	/* NULL when not compiled */
	int		 has_out;	/* an outputSchema was listed */
	int64_t		 seq;		/* the tools/list answer that listed
					   it (a repeat in a later page is
					   a cursor's fault, not a name's) */
	struct jschema	*in;		/* NULL: none, or not compiled */
	struct jschema	*out;
	int		 costly;	/* a check of it ran out of steps */
	json_t		*marks;		/* 2026-07-28: its inputSchema's
					   x-mcp-header marks, or NULL */
};

/* The tools of one listing, key -> slot. */
struct tools_gen {
	struct tools_ent *ent;
	size_t		  n, alloc;
	size_t		  compiled;	/* tools whose schemas were tried */
	size_t		  marks;	/* x-mcp-header marks kept */
	struct idmap	 *keys;
};

/* The tools of the last listing and the one before, and the budgets. */
struct tools {
	struct tools_gen cur, old;
	int		 known;		/* a listing was seen */
	int		 cut;		/* it had more than CHECK_TOOLS_MAX */
	size_t		 bytes;		/* compiled bytes charged so far */
	uint64_t	 steps;		/* checking steps spent so far */
	size_t		 costly;	/* checks that ran out of steps */
	int		 over_tools;	/* the notes given */
	int		 over_bytes;
	int		 over_costly;
	int		 over_steps;
	json_t		*tasks;		/* taskId -> tool key (a string) */
};

/* Free one listing's tools. */
static void
tools_gen_free(struct tools_gen *g)
{
	size_t	i;

	for (i = 0; i < g->n; i++) {
		free(g->ent[i].key);
		free(g->ent[i].name);
		free(g->ent[i].in_dig);
		free(g->ent[i].out_dig);
		jschema_free(g->ent[i].in);
		jschema_free(g->ent[i].out);
		json_decref(g->ent[i].marks);
	}
	free(g->ent);
	idmap_free(g->keys);
	memset(g, 0, sizeof *g);
}

/* An empty listing. */
static void
tools_gen_init(struct tools_gen *g)
{
	memset(g, 0, sizeof *g);
	g->keys = idmap_new();
}

/* A new, empty cache. */
struct tools *
tools_new(void)
{
	struct tools	*t;

	t = xcalloc(1, sizeof *t);
	tools_gen_init(&t->cur);
	tools_gen_init(&t->old);
	t->tasks = json_object();
	return (t);
}

/* Free the cache and every compiled schema. */
void
tools_free(struct tools *t)
{
	if (t == NULL)
		return;
	tools_gen_free(&t->cur);
	tools_gen_free(&t->old);
	json_decref(t->tasks);
	free(t);
}

/*
 * The key a name is kept by (a copy): 'n' and the name, or 'd' and its
 * SHA-256 if long, so no name can stand for another's digest; a request
 * keeps its tool's, resource's or task's name by it too.
 */
char *
tools_key(const char *name, size_t len, size_t *klen)
{
	struct digest	*d;
	char		*k, *hex;

	if (len <= CHECK_TOOL_NAME_MAX) {
		k = xmalloc(len + 2);
		k[0] = 'n';
		memcpy(k + 1, name, len);
		k[len + 1] = '\0';
		*klen = len + 1;
		return (k);
	}
	d = digest_new();
	digest_update(d, name, len);
	hex = digest_hex_free(d);
	*klen = strlen(hex) + 1;
	k = xmalloc(*klen + 1);
	k[0] = 'd';
	memcpy(k + 1, hex, *klen);
	free(hex);
	return (k);
}

/* A key as findings quote it: the name, or what a long one was. */
static char *
tools_key_quote(const char *k, size_t klen)
{
	if (k == NULL || klen == 0)
		return (tools_quote("", 0));
	if (k[0] == 'd')
		return (xstrdup("(a name longer than 256 bytes)"));
	return (tools_quote(k + 1, klen - 1));
}

/* A name as findings quote it: JSON-escaped, cut past 64 bytes. */
char *
tools_quote(const char *name, size_t len)
{
	json_t	*j;
	char	*q;

	j = json_stringn_nocheck(name, len > 64 ? 64 : len);
	q = json_dumps(j, JSON_ENCODE_ANY);
	json_decref(j);
	if (q == NULL)
		return (xstrdup("\"?\""));
	if (len > 64) {
		char *cut;

		xasprintf(&cut, "%s...", q);
		free(q);
		q = cut;
	}
	return (q);
}

/* The tool keyed k in listing g, or NULL. */
static struct tools_ent *
tools_find(struct tools_gen *g, const char *k, size_t klen)
{
	int64_t	slot;

	if (idmap_get(g->keys, k, klen, &slot) != 0)
		return (NULL);
	return (&g->ent[slot]);
}

static struct tools_ent *tools_lookup(struct tools *, const char *,
		    size_t);

/* The tool named by string j in the current listing, or NULL. */
static struct tools_ent *
tools_named(struct tools *t, const json_t *j)
{
	return (tools_lookup(t, json_string_value(j), json_string_length(j)));
}

/*
 * The x-mcp-header marks of a 2026-07-28 inputSchema as a tree of
 * "properties" holding only them, or NULL if it has none: what http.c
 * walks a call's arguments with, without keeping the schema.  *kept
 * counts the marks of the listing, up to TOOLS_MARKS_MAX.
 */
static json_t *
tools_marks_of(const json_t *schema, int depth, size_t *seen, size_t *kept)
{
	const json_t	*props, *p, *mark;
	const char	*k;
	json_t		*out = NULL, *keep;

	props = json_object_get(schema, "properties");
	if (!json_is_object(props) || depth >= HTTP_PARAM_DEPTH_MAX)
		return (NULL);
	json_object_foreach((json_t *)props, k, p) {
		if ((*seen)++ >= HTTP_PARAM_PROPS_MAX ||
		    *kept >= TOOLS_MARKS_MAX)
			break;
		mark = json_object_get(p, "x-mcp-header");
		if (json_is_string(mark)) {
			keep = json_pack("{s:O}", "x-mcp-header", mark);
			(*kept)++;
		} else if ((keep = tools_marks_of(p, depth + 1, seen,
		    kept)) == NULL)
			continue;
		if (out == NULL)
			out = json_pack("{s:{}}", "properties");
		json_object_set_new(json_object_get(out, "properties"), k,
		    keep);
	}
	return (out);
}

/* The x-mcp-header marks of the listed tool named by string j, or NULL. */
const json_t *
tools_marks(struct check *c, const json_t *j)
{
	struct tools_ent	*e;

	if (!c->toolc->known || !json_is_string(j) ||
	    (e = tools_named(c->toolc, j)) == NULL)
		return (NULL);
	return (e->marks);
}

/* A first page of tools/list (or a reset): a new listing starts. */
void
tools_list_begin(struct check *c)
{
	struct tools	*t = c->toolc;
	size_t		 i;

	tools_gen_free(&t->old);
	t->old = t->cur;
	/* Only the current listing's marks are asked for. */
	for (i = 0; i < t->old.n; i++) {
		json_decref(t->old.ent[i].marks);
		t->old.ent[i].marks = NULL;
	}
	tools_gen_init(&t->cur);
	t->over_tools = 0;
	t->cut = 0;
	t->known = 1;
}

/*
 * Forget every listing and task (the session starts over).  The budgets
 * spent stay spent (they bound the run's work), but the new session is
 * told again when one stops its checks.
 */
void
tools_reset(struct check *c)
{
	struct tools	*t = c->toolc;

	tools_list_begin(c);
	tools_list_begin(c);
	t->known = 0;
	t->over_bytes = t->over_costly = t->over_steps = 0;
	json_object_clear(t->tasks);
}

/*
 * Whether a tools/call of the string name j can be said to be of an
 * unknown tool: 1 unknown, 0 listed or not known (no listing, or one cut).
 */
int
tools_unknown(struct check *c, const json_t *j)
{
	struct tools	*t = c->toolc;

	if (!t->known || t->cut)
		return (0);
	return (tools_named(t, j) == NULL);
}

/* The draft a schema without $schema is read as under revision v. */
static int
tools_flags(enum proto_version v)
{
	/* 2025-11-25 on: "Defaults to 2020-12 if no $schema field". */
	return (v != PROTO_V_UNKNOWN && v < PROTO_V_2025_11_25 ?
	    JSCHEMA_DRAFT07 : 0);
}

/* Whether a revision has outputSchema and structuredContent. */
static int
tools_has_output(enum proto_version v)
{
	return (v >= PROTO_V_2025_06_18);
}

/*
 * The SHA-256 of a schema's compact text, and what its parse tree costs
 * (CHECK_SCHEMA_VALUE_BYTES per value: a '{', '[', ',' or ':' each).
 */
static char *
tools_digest(const json_t *doc, size_t *cost)
{
	struct digest	*d;
	char		*buf;
	size_t		 len, i, values = 1;

	len = json_dumpb(doc, NULL, 0, JSON_COMPACT);
	buf = xmalloc(len + 1);
	len = json_dumpb(doc, buf, len, JSON_COMPACT);
	for (i = 0; i < len; i++)
		if (buf[i] == '{' || buf[i] == '[' || buf[i] == ',' ||
		    buf[i] == ':')
			values++;
	*cost = len + values * CHECK_SCHEMA_VALUE_BYTES;
	d = digest_new();
	digest_update(d, buf, len);
	free(buf);
	return (digest_hex_free(d));
}

/* Compile one of a tool's schemas; report why not, and its notes. */
static struct jschema *
tools_compile(struct check *c, struct cmsg *m, const json_t *doc,
    struct tools_ent *e, size_t idx, const char *which, size_t cost)
{
	struct tools	*t = c->toolc;
	struct jschema	*s;
	char		*cause = NULL, member[64], path[96], spec[64];
	size_t		 i;
	int		 sev;

	snprintf(member, sizeof member, "result.tools[%zu].%s", idx, which);
	check_path(c, member, path, sizeof path);
	check_spec(m->v, "server/tools", spec, sizeof spec);
	if (t->bytes + cost > CHECK_SCHEMA_BYTES_MAX) {
		if (!t->over_bytes)
			check_report(c, "tool.schema-limit", PROTO_NOTE, path,
			    spec, "the tool schemas compiled in this session "
			    "take %d bytes already; the %s of %s and of later "
			    "tools are not checked", CHECK_SCHEMA_BYTES_MAX,
			    which, e->name);
		t->over_bytes = 1;
		return (NULL);
	}
	t->bytes += cost;
	if ((s = jschema_compile(doc, tools_flags(m->v), &cause)) == NULL) {
		/* 2025-11-25: inputSchema "MUST be a valid JSON Schema". */
		sev = m->v >= PROTO_V_2025_11_25 && strcmp(which,
		    "inputSchema") == 0 ? PROTO_ERROR : PROTO_WARNING;
		check_report(c, "tool.schema-invalid", sev, path,
		    spec, "the %s of tool %s is not a usable JSON Schema "
		    "(%s); nothing is checked against it", which, e->name,
		    cause != NULL ? cause : "refused");
		free(cause);
		return (NULL);
	}
	/* The nodes and matchers: a schema over the budget is the last. */
	t->bytes += jschema_size(s);
	for (i = 0; i < jschema_nnotes(s); i++)
		check_report(c, "tool.schema-note", PROTO_NOTE, path, spec,
		    "the %s of tool %s is checked in part: %s", which,
		    e->name, jschema_note(s, i));
	return (s);
}

/* One schema of a listed tool: reused from prev if the same, or compiled. */
static void
tools_schema(struct check *c, struct cmsg *m, struct tools_ent *e,
    struct tools_ent *prev, const json_t *doc, size_t idx, int output)
{
	struct jschema	**sp = output ? &e->out : &e->in;
	char		**dp = output ? &e->out_dig : &e->in_dig;
	struct jschema	**psp;
	char		**pdp, *dig;
	size_t		 cost;

	dig = tools_digest(doc, &cost);
	if (prev != NULL) {
		psp = output ? &prev->out : &prev->in;
		pdp = output ? &prev->out_dig : &prev->in_dig;
		if (*pdp != NULL && strcmp(*pdp, dig) == 0) {
			/* The same text as before: compiled (and counted). */
			*sp = *psp;
			*psp = NULL;
			*dp = dig;
			if (prev->costly)
				e->costly = 1;
			return;
		}
	}
	*sp = tools_compile(c, m, doc, e, idx, output ? "outputSchema" :
	    "inputSchema", cost);
	if (*sp != NULL)
		*dp = dig;
	else
		free(dig);
}

/* A tool of a tools/list answer (index idx in result.tools). */
void
tools_listed(struct check *c, struct cmsg *m, const json_t *tool,
    size_t idx)
{
	struct tools	 *t = c->toolc;
	struct tools_gen *g = &t->cur;
	struct tools_ent *e, *prev;
	const json_t	 *name, *in, *out;
	char		 *k, path[64], spec[64], member[64];
	size_t		  klen, seen = 0;
	int64_t		  slot;

	name = json_object_get(tool, "name");
	if (!json_is_string(name))
		return;
	t->known = 1;
	check_spec(m->v, "server/tools", spec, sizeof spec);
	k = tools_key(json_string_value(name), json_string_length(name),
	    &klen);
	if (idmap_get(g->keys, k, klen, &slot) == 0) {
		/* Listed twice: the last one counts, as clients keep it. */
		e = &g->ent[slot];
		if (m->v >= PROTO_V_2025_11_25 && e->seq == m->in->seq) {
			snprintf(member, sizeof member, "result.tools[%zu].name",
			    idx);
			check_report(c, "tool.duplicate-name", PROTO_WARNING,
			    check_path(c, member, path, sizeof path), spec,
			    "tool %s is listed twice in one listing; tool "
			    "names should be unique within a server", e->name);
		}
		free(k);
		free(e->in_dig);
		free(e->out_dig);
		jschema_free(e->in);
		jschema_free(e->out);
		e->in_dig = e->out_dig = NULL;
		e->in = e->out = NULL;
		e->costly = 0;
	} else {
		if (g->n >= CHECK_TOOLS_MAX) {
			if (!t->cut)
				check_report(c, "check.tools-cut", PROTO_NOTE,
				    check_path(c, "result.tools", path,
				    sizeof path), spec, "more than %d tools "
				    "listed; the rest are not remembered, so "
				    "no tools/call is said to be of an unknown "
				    "tool until a shorter listing",
				    CHECK_TOOLS_MAX);
			t->cut = 1;
			free(k);
			return;
		}
		if (g->n == g->alloc) {
			g->alloc = g->alloc ? g->alloc * 2 : 16;
			g->ent = xreallocarray(g->ent, g->alloc,
			    sizeof *g->ent);
		}
		e = &g->ent[g->n];
		memset(e, 0, sizeof *e);
		e->key = k;
		e->klen = klen;
		e->seq = m->in->seq;
		e->name = tools_quote(json_string_value(name),
		    json_string_length(name));
		idmap_put(g->keys, k, klen, (int64_t)g->n, NULL);
		g->n++;
	}
	in = json_object_get(tool, "inputSchema");
	out = json_object_get(tool, "outputSchema");
	e->has_out = json_is_object(out);
	json_decref(e->marks);
	e->marks = m->v == PROTO_V_2026_07_28 ?
	    tools_marks_of(in, 0, &seen, &g->marks) : NULL;
	if (g->compiled >= CHECK_SCHEMA_TOOLS_MAX) {
		if (!t->over_tools)
			check_report(c, "tool.schema-limit", PROTO_NOTE,
			    check_path(c, "result.tools", path, sizeof path),
			    spec, "more than %d tools listed; the schemas of "
			    "%s and later tools are not checked",
			    CHECK_SCHEMA_TOOLS_MAX, e->name);
		t->over_tools = 1;
		return;
	}
	g->compiled++;
	prev = tools_find(&t->old, e->key, e->klen);
	if (json_is_object(in))
		tools_schema(c, m, e, prev, in, idx, 0);
	if (json_is_object(out))
		tools_schema(c, m, e, prev, out, idx, 1);
}

/* What a schema check passes to each validator error. */
struct tools_err {
	struct check	 *c;
	struct tools_ent *e;
	const char	 *rule;
	int		  severity;
	const char	 *base;		/* "$.params.arguments" */
	const char	 *spec;
	const char	 *what;		/* "the arguments are", ... */
	const char	 *schema;	/* "inputSchema" */
};

/* One validator error as a finding, at its place under base. */
static void
tools_err_cb(void *arg, const char *ipath, const char *spath,
    const char *text)
{
	struct tools_err	*a = arg;
	char			*path;

	/* ipath is "$" then members: put it under where the value is. */
	xasprintf(&path, "%s%s", a->base, ipath[0] == '$' ? ipath + 1 :
	    ipath);
	check_report(a->c, a->rule, a->severity, path, a->spec, "%s not as "
	    "tool %s's %s requires: %s (schema %s)", a->what,
	    a->e->name, a->schema, text, spath);
	free(path);
}

/* Apply a compiled schema; the number of errors (0 if it stopped). */
static int
tools_apply(struct check *c, struct cmsg *m, struct tools_ent *e,
    const struct jschema *s, const json_t *v, const char *member,
    const char *rule, int severity, const char *what, const char *schema)
{
	struct tools		*t = c->toolc;
	struct tools_err	 a;
	struct jschema_run	 run;
	char			 base[96], spec[64];
	uint64_t		 due;
	int			 n;

	check_path(c, member, base, sizeof base);
	check_spec(m->v, "server/tools", spec, sizeof spec);
	if (t->costly >= CHECK_SCHEMA_COSTLY_MAX) {
		if (!t->over_costly)
			check_report(c, "tool.schema-limit", PROTO_NOTE, base,
			    spec, "%d tool schema checks ran out of steps; no "
			    "more are checked in this session",
			    CHECK_SCHEMA_COSTLY_MAX);
		t->over_costly = 1;
		return (0);
	}
	if (t->steps >= CHECK_SCHEMA_STEPS_MAX) {
		if (!t->over_steps)
			check_report(c, "tool.schema-limit", PROTO_NOTE, base,
			    spec, "tool schema checks took %llu steps of work "
			    "in this session; no more are checked in it",
			    (unsigned long long)CHECK_SCHEMA_STEPS_MAX);
		t->over_steps = 1;
		return (0);
	}
	memset(&a, 0, sizeof a);
	a.c = c;
	a.e = e;
	a.rule = rule;
	a.severity = severity;
	a.base = base;
	a.spec = spec;
	a.what = what;
	a.schema = schema;
	n = jschema_validate_run(s, v, tools_err_cb, &a, &run);
	t->steps += run.steps;
	due = CHECK_SCHEMA_CALL_STEPS + CHECK_SCHEMA_STEPS_PER_BYTE *
	    (uint64_t)m->in->len;
	if (run.stopped || run.steps > due) {
		check_report(c, "tool.schema-limit", PROTO_NOTE, base, spec,
		    "checking against the %s of tool %s %s; later calls of it "
		    "are not checked", schema, e->name,
		    run.stopped == JSCHEMA_STOP_COSTLY ? "stopped: the schema "
		    "is too costly to check against this value" :
		    run.stopped ? "stopped: the schema nests too deep on this "
		    "value (a $ref that loops?)" : "took more work than a "
		    "message this size is due");
		e->costly = 1;
		t->costly++;
		return (run.stopped ? 0 : n);
	}
	return (n);
}

/* tools/call of a listed tool: its arguments against its inputSchema. */
void
tools_call(struct check *c, struct cmsg *m, const json_t *name)
{
	struct tools_ent	*e;
	const json_t		*params, *args;
	json_t			*empty = NULL;

	params = json_object_get(m->j, "params");
	if (json_is_object(json_object_get(params, "task")))
		m->tool_flags |= TOOL_TASK;
	if ((e = tools_named(c->toolc, name)) == NULL || e->in == NULL ||
	    e->costly)
		return;
	args = json_object_get(params, "arguments");
	if (args == NULL)
		args = empty = json_object();
	/* Not an object: the message's shape says so, once. */
	if (json_is_object(args) && tools_apply(c, m, e, e->in, args,
	    "params.arguments", "tool.arguments", PROTO_WARNING,
	    "the arguments are", "inputSchema") > 0)
		m->tool_flags |= TOOL_ARGS_BAD;
	json_decref(empty);
}

/* A CallToolResult of tool e (from tools/call or tasks/result). */
static void
tools_output(struct check *c, struct cmsg *m, struct tools_ent *e,
    const json_t *result)
{
	const json_t	*sc, *rt;
	char		 path[64], spec[64];

	if (!tools_has_output(m->v) || !e->has_out ||
	    json_is_true(json_object_get(result, "isError")))
		return;
	/* 2026-07-28 answers input_required before the real result. */
	rt = json_object_get(result, "resultType");
	if (json_is_string(rt) && strcmp(json_string_value(rt),
	    "complete") != 0)
		return;
	sc = json_object_get(result, "structuredContent");
	if (sc == NULL) {
		check_report(c, "tool.structured-content-missing",
		    PROTO_ERROR, check_path(c, "result", path, sizeof path),
		    check_spec(m->v, "server/tools", spec, sizeof spec),
		    "tool %s has an outputSchema but its result has no "
		    "structuredContent; a server must provide structured "
		    "results that conform to it", e->name);
		return;
	}
	/* Not an object: the message's shape says so, once. */
	if (e->out == NULL || e->costly || !json_is_object(sc))
		return;
	tools_apply(c, m, e, e->out, sc, "result.structuredContent",
	    "tool.structured-content", PROTO_ERROR,
	    "the structuredContent is", "outputSchema");
}

/* The tool named (name, len) in the current listing, or NULL. */
static struct tools_ent *
tools_lookup(struct tools *t, const char *name, size_t len)
{
	struct tools_ent	*e;
	char			*k;
	size_t			 klen;

	k = tools_key(name, len, &klen);
	e = tools_find(&t->cur, k, klen);
	free(k);
	return (e);
}

/* A CreateTaskResult: its taskId remembered for the call's tool. */
static void
tools_task(struct check *c, const struct pend *p, const json_t *task)
{
	struct tools	*t = c->toolc;
	const json_t	*id;
	char		*k;
	size_t		 klen;

	id = json_object_get(task, "taskId");
	if (!json_is_string(id) || p->target == NULL ||
	    json_object_size(t->tasks) >= CHECK_TOOL_TASKS_MAX)
		return;
	/* Keyed as tasks/result's request keeps its taskId. */
	k = tools_key(json_string_value(id), json_string_length(id), &klen);
	json_object_setn_new_nocheck(t->tasks, k, klen,
	    json_stringn_nocheck(p->target, p->target_len));
	free(k);
}

/* The answer to tasks/result (m->req): a tool's result, if it was one. */
void
tools_task_result(struct check *c, struct cmsg *m)
{
	struct tools		*t = c->toolc;
	struct tools_ent	*e;
	const json_t		*result, *tool;

	result = json_object_get(m->j, "result");
	if (!json_is_object(result) || m->req->target == NULL)
		return;
	tool = json_object_getn(t->tasks, m->req->target,
	    m->req->target_len);
	if (tool == NULL || (e = tools_find(&t->cur, json_string_value(tool),
	    json_string_length(tool))) == NULL)
		return;
	tools_output(c, m, e, result);
}

/* The answer to a tools/call (m->req): a result or a JSON-RPC error. */
void
tools_answered(struct check *c, struct cmsg *m)
{
	struct pend		*p = m->req;
	struct tools_ent	*e = NULL;
	const json_t		*result, *task;
	char			 path[64], spec[64], *q = NULL;
	int			 is_error;

	result = json_object_get(m->j, "result");
	task = json_object_get(result, "task");
	if (json_is_object(result) && json_is_object(task)) {
		/* A task was made: the tool's result comes in tasks/result. */
		tools_task(c, p, task);
		return;
	}
	is_error = json_is_true(json_object_get(result, "isError"));
	check_spec(m->v, "server/tools", spec, sizeof spec);
	if (json_is_object(result) && is_error &&
	    (p->tool_flags & TOOL_UNKNOWN))
		check_report(c, "tool.unknown-as-result", PROTO_WARNING,
		    check_path(c, "result.isError", path, sizeof path), spec,
		    "tool %s is unknown (not in the last tools/list), and "
		    "the server answered with a result and \"isError\": true; "
		    "an unknown tool is a protocol error (a JSON-RPC error, "
		    "-32602)", (q = tools_key_quote(p->target, p->target_len)));
	free(q);
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
	if (json_is_object(result) && p->target != NULL && (e =
	    tools_find(&c->toolc->cur, p->target, p->target_len)) != NULL)
		tools_output(c, m, e, result);
}
