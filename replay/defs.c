/*
 * The definitions a recorded server listed (tools, prompts, resources,
 * resource templates), and how two recordings' definitions differ: which
 * were added, removed, and which changed and where, for mcpreel diff.
 *
 * A kind's definitions are the union of every page of every list answer
 * in the session, by name (URI for resources, URI template for
 * templates), a later definition replacing an earlier one.  Two
 * definitions are compared with the structural diff and the user's
 * rules, as an answer to the kind's list method holding that one
 * definition, so a rule written for the list answer
 * ("$.result.tools[*].description", scoped to method=tools/list) applies;
 * the paths reported are from the definition ("$.description").
 */

#include <stdlib.h>
#include <string.h>

#include "replay.h"

/* What each kind is called, and where its list answers hold it. */
const struct defs_kind defs_kinds[DEFS_MAX] = {
	{ "tools",	"tool",	"tools/list",	"tools",	"name" },
	{ "prompts",	"prompt", "prompts/list", "prompts",	"name" },
	{ "resources",	"resource", "resources/list", "resources", "uri" },
	{ "resource templates", "resource template",
	    "resources/templates/list", "resourceTemplates", "uriTemplate" },
};

/*
 * The definitions of kind k in plan p: an object from name to definition,
 * or NULL when the session has no answer to the kind's list method.
 */
json_t *
defs_collect(const struct plan *p, enum defs_which k)
{
	const struct defs_kind	*dk = &defs_kinds[k];
	const struct rmsg	*m;
	const json_t		*list, *d, *name;
	json_t			*out = NULL;
	size_t			 i, j;

	for (i = 0; i < p->n; i++) {
		m = &p->m[i];
		if (m->dir != DIR_C2S || m->kind != KIND_REQUEST ||
		    m->method == NULL || strcmp(m->method, dk->method) != 0 ||
		    m->answer < 0 || plan_json(&p->m[m->answer]) == NULL)
			continue;
		if (out == NULL)
			out = json_object();
		list = json_object_get(json_object_get(plan_json(&p->m[m->answer]),
		    "result"), dk->key);
		json_array_foreach(list, j, d) {
			name = json_object_get(d, dk->id);
			if (json_is_string(name))
				json_object_set(out, json_string_value(name),
				    (json_t *)d);
		}
	}
	return out;
}

/* The list request and answer a definition is compared inside. */
static void
defs_wrap(enum defs_which k, const json_t *d, json_t **req, json_t **ans)
{
	const struct defs_kind	*dk = &defs_kinds[k];

	*req = json_pack("{s:s, s:i, s:s}", "jsonrpc", "2.0", "id", 1,
	    "method", dk->method);
	*ans = json_pack("{s:s, s:i, s:{s:[O]}}", "jsonrpc", "2.0", "id", 1,
	    "result", dk->key, d);
	if (*req == NULL || *ans == NULL)
		fatalx("out of memory");
}

/* Add a change to out; the caller fills in what it has. */
static struct defs_change *
defs_add(struct defs_diff *out, const char *name, enum defs_how how)
{
	struct defs_change	*c;

	out->v = xreallocarray(out->v, out->n + 1, sizeof *out->v);
	c = &out->v[out->n++];
	memset(c, 0, sizeof *c);
	c->name = xstrdup(name);
	c->how = how;
	return c;
}

/*
 * The first key of path text p (after the "$"), as jpath_format writes
 * it: ".key", or "['key']" with ' and \\ escaped.  NULL when p does not
 * start with a key (the caller frees it).
 */
static char *
defs_field(const char *p)
{
	char	*out;
	size_t	 n = 0;

	if (p[0] == '.')
		return xstrndup(p + 1, strcspn(p + 1, ".[{"));
	if (p[0] != '[' || p[1] != '\'')
		return NULL;
	out = xmalloc(strlen(p) + 1);
	for (p += 2; *p != '\0' && *p != '\''; p++) {
		if (*p == '\\' && p[1] != '\0')
			p++;
		out[n++] = *p;
	}
	out[n] = '\0';
	return out;
}

/*
 * Paths from the wrapped answer to paths from the definition, and the
 * top-level fields that differ (description, inputSchema, ...) into
 * c->fields, each once, in the order found.
 */
static void
defs_paths(enum defs_which k, struct defs_change *c)
{
	char		*prefix, *p, *key;
	size_t		 i, plen;
	json_t		*f, *seen = json_object();

	xasprintf(&prefix, "$.result.%s[0]", defs_kinds[k].key);
	plen = strlen(prefix);
	c->fields = json_array();
	for (i = 0; i < c->diff.n; i++) {
		if (strncmp(c->diff.v[i].path, prefix, plen) != 0)
			continue;
		xasprintf(&p, "$%s", c->diff.v[i].path + plen);
		free(c->diff.v[i].path);
		c->diff.v[i].path = p;
		if ((key = defs_field(p + 1)) == NULL)
			key = xstrdup("(whole)");
		f = json_string(key);
		free(key);
		if (f == NULL)
			continue;
		/* A set beside the list: a definition may have many fields. */
		if (json_object_get(seen, json_string_value(f)) == NULL) {
			json_object_set_new(seen, json_string_value(f),
			    json_true());
			json_array_append(c->fields, f);
		}
		json_decref(f);
	}
	json_decref(seen);
	free(prefix);
}

/* For qsort: names in byte order. */
static int
defs_cmp_name(const void *x, const void *y)
{
	return strcmp(*(const char *const *)x, *(const char *const *)y);
}

/*
 * Compare the definitions of kind k, a (the first recording's) with b,
 * under rules: out gets the removed (in a only), added (in b only) and
 * changed, by name.  rules may be NULL; what they matched is noted.
 */
void
defs_compare(enum defs_which k, const json_t *a, const json_t *b,
    struct diff_rules *rules, struct defs_diff *out)
{
	const char		**names;
	const char		*name;
	const json_t		*da, *db;
	json_t			*v, *req, *wa, *wb;
	struct defs_change	*c;
	struct diff		 d;
	size_t			 n = 0, i;

	names = xreallocarray(NULL, json_object_size(a) +
	    json_object_size(b) + 1, sizeof *names);
	json_object_foreach((json_t *)a, name, v)
		names[n++] = name;
	json_object_foreach((json_t *)b, name, v) {
		if (json_object_get(a, name) == NULL)
			names[n++] = name;
	}
	qsort(names, n, sizeof *names, defs_cmp_name);
	for (i = 0; i < n; i++) {
		da = json_object_get(a, names[i]);
		db = json_object_get(b, names[i]);
		if (db == NULL) {
			defs_add(out, names[i], DEFS_REMOVED);
			continue;
		}
		if (da == NULL) {
			defs_add(out, names[i], DEFS_ADDED);
			continue;
		}
		defs_wrap(k, da, &req, &wa);
		json_decref(req);
		defs_wrap(k, db, &req, &wb);
		memset(&d, 0, sizeof d);
		if (diff_messages_for(req, wa, wb, rules, &d) > 0) {
			c = defs_add(out, names[i], DEFS_CHANGED);
			c->diff = d;
			defs_paths(k, c);
		} else
			diff_clear(&d);
		rules_note_use(rules, req, wa, wb);
		json_decref(req);
		json_decref(wa);
		json_decref(wb);
	}
	free(names);
}

/* Free what a comparison holds. */
void
defs_clear(struct defs_diff *out)
{
	size_t	i;

	for (i = 0; i < out->n; i++) {
		free(out->v[i].name);
		json_decref(out->v[i].fields);
		diff_clear(&out->v[i].diff);
	}
	free(out->v);
	memset(out, 0, sizeof *out);
}
