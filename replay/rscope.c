/*
 * Scopes: which requests a replay or mock rule is for.  A scope holds a
 * method (a glob), and one of a tool (tools/call's params.name), a
 * prompt (prompts/get's params.name) or a resource (resources/read's
 * params.uri), globs too; empty, it holds every request.
 */

#include <fnmatch.h>
#include <stdlib.h>
#include <string.h>

#include "replay.h"

/*
 * What a tool, prompt or resource scope names: the request's method and
 * the params member holding the name.
 */
static const struct rscope_named {
	enum rscope_kind	 kind;
	const char		*key;		/* in --for and rules files */
	const char		*method;
	const char		*param;
} rscope_named[] = {
	{ RSCOPE_TOOL,		"tool",		"tools/call",	  "name" },
	{ RSCOPE_PROMPT,	"prompt",	"prompts/get",	  "name" },
	{ RSCOPE_RESOURCE,	"resource",	"resources/read", "uri" },
};
#define RSCOPE_NNAMED	(sizeof rscope_named / sizeof rscope_named[0])

/* The table row of a named scope kind. */
static const struct rscope_named *
rscope_named_of(enum rscope_kind kind)
{
	size_t	i;

	for (i = 0; i < RSCOPE_NNAMED; i++) {
		if (rscope_named[i].kind == kind)
			return &rscope_named[i];
	}
	return NULL;
}

/* Free what a scope holds and leave it empty (every request). */
void
rscope_clear(struct rscope *s)
{
	free(s->method);
	free(s->name);
	memset(s, 0, sizeof *s);
}

/* Whether a scope is empty: the rule applies to every answer. */
int
rscope_empty(const struct rscope *s)
{
	return s->method == NULL && s->kind == RSCOPE_ANY;
}

/*
 * Narrow a scope by one key and its glob (method, tool, prompt or
 * resource); -1 with *cause when the key is unknown, given twice, or
 * cannot go with what the scope already holds.
 */
int
rscope_set(struct rscope *s, const char *key, const char *value,
    char **cause)
{
	const struct rscope_named	*n = NULL, *have;
	size_t				 i;

	if (*value == '\0') {
		xasprintf(cause, "scope %s= needs a value (a name or a glob)",
		    key);
		return -1;
	}
	for (i = 0; i < RSCOPE_NNAMED; i++) {
		if (strcmp(key, rscope_named[i].key) == 0)
			n = &rscope_named[i];
	}
	if (n == NULL && strcmp(key, "method") != 0) {
		xasprintf(cause, "unknown scope '%s' (expected "
		    RSCOPE_KEYS ")", key);
		return -1;
	}
	if (n == NULL) {
		if (s->method != NULL) {
			xasprintf(cause, "scope method= given twice");
			return -1;
		}
		s->method = xstrdup(value);
	} else {
		if (s->kind != RSCOPE_ANY) {
			have = rscope_named_of(s->kind);
			xasprintf(cause, "scope %s= cannot go with %s= (a "
			    "scope names one tool, prompt or resource)",
			    key, have->key);
			return -1;
		}
		s->kind = n->kind;
		s->name = xstrdup(value);
	}
	if (s->kind != RSCOPE_ANY && s->method != NULL) {
		have = rscope_named_of(s->kind);
		if (fnmatch(s->method, have->method, 0) != 0) {
			xasprintf(cause, "scope method=%s cannot go with "
			    "%s= (which is for %s requests)", s->method,
			    have->key, have->method);
			return -1;
		}
	}
	return 0;
}

/* Narrow a scope by "KEY=GLOB" (the --for form); as rscope_set. */
int
rscope_parse(struct rscope *s, const char *kv, char **cause)
{
	const char	*eq = strchr(kv, '=');
	char		*key;
	int		 r;

	if (eq == NULL || eq == kv) {
		xasprintf(cause, "bad scope '%s': write KEY=VALUE, KEY one of "
		    RSCOPE_KEYS " (e.g. tool=get_weather)", kv);
		return -1;
	}
	key = xstrndup(kv, (size_t)(eq - kv));
	r = rscope_set(s, key, eq + 1, cause);
	free(key);
	return r;
}

/* Whether a request message is in a scope (an empty one: any, even NULL). */
int
rscope_match(const struct rscope *s, const json_t *req)
{
	const struct rscope_named	*n;
	const char			*method, *name;

	if (rscope_empty(s))
		return 1;
	method = json_string_value(json_object_get(req, "method"));
	if (method == NULL)
		return 0;
	if (s->method != NULL && fnmatch(s->method, method, 0) != 0)
		return 0;
	if (s->kind == RSCOPE_ANY)
		return 1;
	n = rscope_named_of(s->kind);
	if (strcmp(method, n->method) != 0)
		return 0;
	name = json_string_value(json_object_get(json_object_get(req,
	    "params"), n->param));
	return name != NULL && fnmatch(s->name, name, 0) == 0;
}

/* The scope as "method=M tool=T", or NULL for an empty one; caller frees. */
char *
rscope_text(const struct rscope *s)
{
	char	*out;

	if (rscope_empty(s))
		return NULL;
	if (s->kind == RSCOPE_ANY)
		xasprintf(&out, "method=%s", s->method);
	else
		xasprintf(&out, "%s%s%s%s=%s", s->method ? "method=" : "",
		    s->method ? s->method : "", s->method ? " " : "",
		    rscope_named_of(s->kind)->key, s->name);
	return out;
}

/* Set key to the glob text, bytes that are not UTF-8 escaped (\xNN). */
static void
rscope_json_set(json_t *o, const char *key, const char *text)
{
	char	*safe = scan_utf8_escape(text);

	json_object_set_new(o, key, json_string(safe));
	free(safe);
}

/* The scope as a JSON object, or NULL for an empty one. */
json_t *
rscope_json(const struct rscope *s)
{
	json_t	*o;

	if (rscope_empty(s))
		return NULL;
	o = json_object();
	if (s->method != NULL)
		rscope_json_set(o, "method", s->method);
	if (s->kind != RSCOPE_ANY)
		rscope_json_set(o, rscope_named_of(s->kind)->key, s->name);
	return o;
}

/* Whether key is one of the scope keys (method, tool, ...). */
int
rscope_is_key(const char *key)
{
	size_t	i;

	for (i = 0; i < RSCOPE_NNAMED; i++) {
		if (strcmp(key, rscope_named[i].key) == 0)
			return 1;
	}
	return strcmp(key, "method") == 0;
}
