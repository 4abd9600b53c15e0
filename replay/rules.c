/*
 * The rules replay compares by (and mock matches by): places to ignore,
 * string normalisations, and requests whose answers are not compared,
 * each with an optional scope, and what each rule matched in a run.
 *
 * A rule with a scope (rscope.c) applies only to the answers of the
 * requests in it.
 *
 * A rule is used when, in the answers of requests in its scope, its path
 * named a place in either message (ignore), its regex matched a string
 * it runs on (normalize), or a request was in its scope (a skipped
 * answer).  The check walks both messages only while some rule in scope
 * is still unused, so a run whose rules are all used pays nothing more.
 */

#include <sys/types.h>

#include <errno.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "replay.h"

/* The keys a rules file may hold, for the unknown-key message. */
#define RULES_FILE_KEYS	"ignore, ignore_methods, ignore_tools, " \
			"ignore_prompts, ignore_resources, normalize, defaults"

/* Empty rules: nothing ignored but the defaults, nothing rewritten. */
void
rules_init(struct diff_rules *rules)
{
	memset(rules, 0, sizeof *rules);
}

/* Free what one rule's common part holds. */
static void
rules_rule_clear(struct diff_rule *r)
{
	rscope_clear(&r->scope);
	free(r->origin);
}

/* Free everything rules hold and leave them empty. */
void
rules_clear(struct diff_rules *rules)
{
	size_t	i;

	for (i = 0; i < rules->nignore; i++) {
		jpath_free(rules->ignore[i].path);
		rules_rule_clear(&rules->ignore[i].r);
	}
	free(rules->ignore);
	for (i = 0; i < rules->nskip; i++) {
		free(rules->skip[i].value);
		rules_rule_clear(&rules->skip[i].r);
	}
	free(rules->skip);
	for (i = 0; i < rules->nsubst; i++) {
		free(rules->subst[i].regex);
		free(rules->subst[i].with);
		if (rules->subst[i].compiled != NULL)
			regfree(rules->subst[i].compiled);
		free(rules->subst[i].compiled);
		rules_rule_clear(&rules->subst[i].r);
	}
	free(rules->subst);
	rules_init(rules);
}

/*
 * Add a place never to compare, for every answer, written on the command
 * line as --ignore; -1 with *cause if the pattern is bad.
 */
int
rules_add_ignore(struct diff_rules *rules, const char *pattern,
    char **cause)
{
	return rules_add_ignore_from(rules, pattern, "--ignore", cause);
}

/* Add a place never to compare; origin says where the rule was written. */
int
rules_add_ignore_from(struct diff_rules *rules, const char *pattern,
    const char *origin, char **cause)
{
	struct diff_ignore	*di;
	struct jpath		*jp;

	if ((jp = jpath_compile(pattern, cause)) == NULL)
		return -1;
	rules->ignore = xreallocarray(rules->ignore, rules->nignore + 1,
	    sizeof *rules->ignore);
	di = &rules->ignore[rules->nignore++];
	memset(di, 0, sizeof *di);
	di->path = jp;
	di->r.origin = xstrdup(origin);
	return 0;
}

/*
 * Narrow the last ignore added by "KEY=GLOB" (--for); -1 with *cause when
 * there is none or the scope is bad.
 */
int
rules_scope_last(struct diff_rules *rules, const char *kv, char **cause)
{
	if (rules->nignore == 0) {
		xasprintf(cause, "--for narrows the --ignore just before it: "
		    "give --ignore PATH first");
		return -1;
	}
	return rscope_parse(&rules->ignore[rules->nignore - 1].r.scope, kv,
	    cause);
}

/*
 * Add requests whose answers are not compared: those of a method (a glob)
 * when key is "method", else the tool, prompt or resource named (a glob).
 */
int
rules_add_skip(struct diff_rules *rules, const char *key,
    const char *value, const char *origin, char **cause)
{
	struct diff_skip	*ds;
	struct rscope		 s;

	memset(&s, 0, sizeof s);
	if (rscope_set(&s, key, value, cause) != 0) {
		rscope_clear(&s);
		return -1;
	}
	rules->skip = xreallocarray(rules->skip, rules->nskip + 1,
	    sizeof *rules->skip);
	ds = &rules->skip[rules->nskip++];
	memset(ds, 0, sizeof *ds);
	ds->r.scope = s;
	ds->r.origin = xstrdup(origin);
	ds->value = xstrdup(value);
	return 0;
}

/*
 * Check that a replacement's \N references name groups the regex has;
 * -1 with *cause if not.
 */
static int
rules_check_with(const char *regex, const char *with, size_t nsub,
    char **cause)
{
	const char	*p;

	for (p = with; *p != '\0'; p++) {
		if (*p != '\\')
			continue;
		p++;
		if (*p >= '0' && *p <= '9') {
			if ((size_t)(*p - '0') > nsub) {
				xasprintf(cause, "bad replacement '%s' for "
				    "regex '%s': \\%c but the regex has %zu "
				    "group%s", with, regex, *p, nsub,
				    nsub == 1 ? "" : "s");
				return -1;
			}
		} else if (*p != '\\') {
			xasprintf(cause, "bad replacement '%s' for regex "
			    "'%s': a \\ must be followed by a digit or \\ "
			    "(write \\\\ for a backslash)", with, regex);
			return -1;
		}
	}
	return 0;
}

/* Add a normalisation of strings; -1 with *cause if the regex is bad. */
int
rules_add_subst(struct diff_rules *rules, const char *regex,
    const char *with, char **cause)
{
	struct diff_subst	*ds;
	regex_t			*re;
	char			 err[256];
	int			 r;

	re = xcalloc(1, sizeof *re);
	if ((r = regcomp(re, regex, REG_EXTENDED)) != 0) {
		regerror(r, re, err, sizeof err);
		xasprintf(cause, "bad regex '%s': %s", regex, err);
		free(re);
		return -1;
	}
	if (rules_check_with(regex, with, re->re_nsub, cause) != 0) {
		regfree(re);
		free(re);
		return -1;
	}
	rules->subst = xreallocarray(rules->subst, rules->nsubst + 1,
	    sizeof *rules->subst);
	ds = &rules->subst[rules->nsubst++];
	memset(ds, 0, sizeof *ds);
	ds->regex = xstrdup(regex);
	ds->with = xstrdup(with);
	ds->compiled = re;
	ds->r.origin = xstrdup("normalize");
	return 0;
}

/* Move everything from src to the end of dst, leaving src empty. */
static void
rules_move(struct diff_rules *dst, struct diff_rules *src)
{
	size_t	i;

	dst->ignore = xreallocarray(dst->ignore, dst->nignore + src->nignore,
	    sizeof *dst->ignore);
	for (i = 0; i < src->nignore; i++)
		dst->ignore[dst->nignore++] = src->ignore[i];
	dst->skip = xreallocarray(dst->skip, dst->nskip + src->nskip,
	    sizeof *dst->skip);
	for (i = 0; i < src->nskip; i++)
		dst->skip[dst->nskip++] = src->skip[i];
	dst->subst = xreallocarray(dst->subst, dst->nsubst + src->nsubst,
	    sizeof *dst->subst);
	for (i = 0; i < src->nsubst; i++)
		dst->subst[dst->nsubst++] = src->subst[i];
	free(src->ignore);
	free(src->skip);
	free(src->subst);
	rules_init(src);
}

/* Whether key is one of own, a list like "regex, replace". */
static int
rules_own_key(const char *own, const char *key)
{
	size_t	klen = strlen(key), n;

	while (*own != '\0') {
		n = strcspn(own, ",");
		if (n == klen && strncmp(own, key, n) == 0)
			return 1;
		own += n;
		own += strspn(own, ", ");
	}
	return 0;
}

/*
 * Read the scope keys of a rules file object o (at where) into s; its
 * other keys must be the own ones ("path", or "regex, replace"), else -1
 * with *cause naming what is wrong.
 */
static int
rules_load_scope(struct rscope *s, const char *file, const char *where,
    json_t *o, const char *own, char **cause)
{
	const char	*k;
	json_t		*v;
	char		*why;

	json_object_foreach(o, k, v) {
		if (rules_own_key(own, k))
			continue;
		if (!rscope_is_key(k)) {
			xasprintf(cause, "rules file %s: unknown key \"%s\" in "
			    "%s (expected %s, " RSCOPE_KEYS ")", file, k,
			    where, own);
			return -1;
		}
		if (!json_is_string(v)) {
			xasprintf(cause, "rules file %s: %s.%s must be a "
			    "string", file, where, k);
			return -1;
		}
		if (rscope_set(s, k, json_string_value(v), &why) != 0) {
			xasprintf(cause, "rules file %s: %s: %s", file, where,
			    why);
			free(why);
			return -1;
		}
	}
	return 0;
}

/* Add one "ignore" entry: a path, or {"path", scope keys}. */
static int
rules_load_ignore(struct diff_rules *rules, const char *file, size_t i,
    json_t *e, char **cause)
{
	const char	*path;
	char		*where, *why, *origin;
	int		 r = -1;

	xasprintf(&where, "\"ignore\"[%zu]", i);
	if (json_is_string(e))
		path = json_string_value(e);
	else if (json_is_object(e) && json_is_string(json_object_get(e,
	    "path")))
		path = json_string_value(json_object_get(e, "path"));
	else {
		xasprintf(cause, "rules file %s: %s must be a path or an "
		    "object with \"path\" (and a scope: " RSCOPE_KEYS
		    ")", file, where);
		goto out;
	}
	xasprintf(&origin, "%s %s", file, where);
	r = rules_add_ignore_from(rules, path, origin, &why);
	free(origin);
	if (r != 0) {
		xasprintf(cause, "rules file %s: %s: %s", file, where, why);
		free(why);
		goto out;
	}
	r = -1;
	if (json_is_object(e) && rules_load_scope(&rules->ignore[
	    rules->nignore - 1].r.scope, file, where, e, "path", cause) != 0)
		goto out;
	r = 0;
out:
	free(where);
	return r;
}

/* Add one "normalize" entry ({"regex", "replace", scope keys}). */
static int
rules_load_subst(struct diff_rules *rules, const char *file, size_t i,
    json_t *o, char **cause)
{
	const char	*regex, *with = "";
	json_t		*v;
	char		*why, *where;
	int		 r = -1;

	xasprintf(&where, "\"normalize\"[%zu]", i);
	if (!json_is_object(o)) {
		xasprintf(cause, "rules file %s: %s must be an object with "
		    "\"regex\" and \"replace\"", file, where);
		goto out;
	}
	if ((v = json_object_get(o, "regex")) == NULL) {
		xasprintf(cause, "rules file %s: %s has no \"regex\"", file,
		    where);
		goto out;
	}
	if (!json_is_string(v)) {
		xasprintf(cause, "rules file %s: %s.regex must be a string",
		    file, where);
		goto out;
	}
	regex = json_string_value(v);
	if ((v = json_object_get(o, "replace")) != NULL) {
		if (!json_is_string(v)) {
			xasprintf(cause, "rules file %s: %s.replace must be a "
			    "string", file, where);
			goto out;
		}
		with = json_string_value(v);
	}
	if (rules_add_subst(rules, regex, with, &why) != 0) {
		xasprintf(cause, "rules file %s: %s: %s", file, where, why);
		free(why);
		goto out;
	}
	free(rules->subst[rules->nsubst - 1].r.origin);
	xasprintf(&rules->subst[rules->nsubst - 1].r.origin, "%s %s", file,
	    where);
	if (rules_load_scope(&rules->subst[rules->nsubst - 1].r.scope, file,
	    where, o, "regex, replace", cause) != 0)
		goto out;
	r = 0;
out:
	free(where);
	return r;
}

/* The "ignore_*" keys of a rules file and the scope key each takes. */
static const struct {
	const char	*file_key;
	const char	*scope_key;
} rules_skip_keys[] = {
	{ "ignore_methods",	"method" },
	{ "ignore_tools",	"tool" },
	{ "ignore_prompts",	"prompt" },
	{ "ignore_resources",	"resource" },
};
#define RULES_NSKIP_KEYS (sizeof rules_skip_keys / sizeof rules_skip_keys[0])

/* Add one "ignore_*" key's list of names (or globs). */
static int
rules_load_skips(struct diff_rules *rules, const char *file, size_t k,
    json_t *v, char **cause)
{
	json_t	*e;
	size_t	 i;
	char	*origin, *why;

	if (!json_is_array(v))
		goto fail;
	json_array_foreach(v, i, e) {
		if (!json_is_string(e))
			goto fail;
		xasprintf(&origin, "%s \"%s\"[%zu]", file,
		    rules_skip_keys[k].file_key, i);
		if (rules_add_skip(rules, rules_skip_keys[k].scope_key,
		    json_string_value(e), origin, &why) != 0) {
			xasprintf(cause, "rules file %s: \"%s\"[%zu]: %s",
			    file, rules_skip_keys[k].file_key, i, why);
			free(why);
			free(origin);
			return -1;
		}
		free(origin);
	}
	return 0;

fail:
	xasprintf(cause, "rules file %s: \"%s\" must be an array of strings",
	    file, rules_skip_keys[k].file_key);
	return -1;
}

/* Add what one rules file key holds to rules. */
static int
rules_load_key(struct diff_rules *rules, const char *file, const char *key,
    json_t *v, char **cause)
{
	json_t	*e;
	size_t	 i;

	for (i = 0; i < RULES_NSKIP_KEYS; i++) {
		if (strcmp(key, rules_skip_keys[i].file_key) == 0)
			return rules_load_skips(rules, file, i, v, cause);
	}
	if (strcmp(key, "ignore") == 0 || strcmp(key, "normalize") == 0) {
		if (!json_is_array(v)) {
			xasprintf(cause, "rules file %s: \"%s\" must be an "
			    "array", file, key);
			return -1;
		}
		json_array_foreach(v, i, e) {
			if ((*key == 'i' ? rules_load_ignore(rules, file, i,
			    e, cause) : rules_load_subst(rules, file, i, e,
			    cause)) != 0)
				return -1;
		}
	} else if (strcmp(key, "defaults") == 0) {
		if (!json_is_boolean(v)) {
			xasprintf(cause, "rules file %s: \"defaults\" must be "
			    "true or false", file);
			return -1;
		}
		rules->no_defaults = !json_is_true(v);
	} else {
		xasprintf(cause, "rules file %s: unknown key \"%s\" (expected "
		    RULES_FILE_KEYS ")", file, key);
		return -1;
	}
	return 0;
}

/*
 * Add the rules in a JSON file to rules: {"ignore": [path or {"path",
 * scope}], "ignore_methods" (and _tools, _prompts, _resources): [glob],
 * "normalize": [{"regex", "replace", scope}], "defaults": bool}, every
 * key optional.  All or nothing: on error rules are unchanged and *cause
 * names the file and what is wrong.
 */
int
rules_load(struct diff_rules *rules, const char *file, char **cause)
{
	struct diff_rules	 tmp;
	json_error_t		 err;
	json_t			*root, *v;
	const char		*key;
	FILE			*f;
	int			 no_defaults;

	if ((f = fopen(file, "re")) == NULL) {
		xasprintf(cause, "cannot open rules file %s: %s", file,
		    strerror(errno));
		return -1;
	}
	root = json_loadf(f, 0, &err);
	fclose(f);
	if (root == NULL) {
		xasprintf(cause, "rules file %s is not valid JSON: %s (line "
		    "%d, column %d)", file, err.text, err.line, err.column);
		return -1;
	}
	if (!json_is_object(root)) {
		xasprintf(cause, "rules file %s: expected a JSON object with "
		    RULES_FILE_KEYS, file);
		json_decref(root);
		return -1;
	}

	rules_init(&tmp);
	tmp.no_defaults = rules->no_defaults;
	json_object_foreach(root, key, v) {
		if (rules_load_key(&tmp, file, key, v, cause) != 0) {
			rules_clear(&tmp);
			json_decref(root);
			return -1;
		}
	}
	json_decref(root);

	no_defaults = tmp.no_defaults;
	rules_move(rules, &tmp);
	rules->no_defaults = no_defaults;
	return 0;
}

/*
 * Whether the answer to a request is not to be compared (a method, tool,
 * prompt or resource rule names it); every rule naming it counts as used.
 */
int
rules_skips(struct diff_rules *rules, const json_t *req)
{
	size_t	i;
	int	skip = 0;

	if (rules == NULL || req == NULL)
		return 0;
	for (i = 0; i < rules->nskip; i++) {
		if (rscope_match(&rules->skip[i].r.scope, req)) {
			rules->skip[i].r.used++;
			skip = 1;
		}
	}
	return skip;
}

/* Where the usage walk is, and the rules in scope still unused. */
struct rules_use {
	struct diff_rules	*rules;
	unsigned char		*ign;		/* in scope, unused */
	unsigned char		*sub;
	size_t			 left;		/* how many of them */
	struct jseg		*path;
	size_t			 npath;
	size_t			 path_size;
	int			 nest;
};

/* Step down into a key, an index or the JSON held by a string. */
static void
rules_use_push(struct rules_use *u, const char *key, size_t index, int json)
{
	struct jseg	*seg;

	if (u->npath == u->path_size) {
		u->path_size = u->path_size == 0 ? 16 : u->path_size * 2;
		u->path = xreallocarray(u->path, u->path_size,
		    sizeof *u->path);
	}
	seg = &u->path[u->npath++];
	seg->key = key;
	seg->index = index;
	seg->json = json;
}

/* Note the ignores naming this place and the regexes matching v. */
static void
rules_use_here(struct rules_use *u, const json_t *v)
{
	struct diff_rules	*rules = u->rules;
	regmatch_t		 m[1];
	const char		*s;
	size_t			 i;

	for (i = 0; i < rules->nignore && u->left > 0; i++) {
		if (u->ign[i] && jpath_match(rules->ignore[i].path, u->path,
		    u->npath)) {
			rules->ignore[i].r.used++;
			u->ign[i] = 0;
			u->left--;
		}
	}
	if (!json_is_string(v))
		return;
	s = json_string_value(v);
	if (strlen(s) != json_string_length(v))
		return;		/* never normalised: see diff_strings */
	for (i = 0; i < rules->nsubst && u->left > 0; i++) {
		if (u->sub[i] && regexec(rules->subst[i].compiled, s, 1, m,
		    0) == 0) {
			rules->subst[i].r.used++;
			u->sub[i] = 0;
			u->left--;
		}
	}
}

/* Walk v (absent: NULL) noting what the rules in scope match. */
static void
rules_use_walk(struct rules_use *u, const json_t *v)
{
	const char	*k;
	json_t		*e, *inner;
	size_t		 i;

	if (v == NULL || u->left == 0)
		return;
	if (json_is_string(v) && u->nest < DIFF_MAX_JSON_NEST &&
	    (inner = diff_string_json(v)) != NULL) {
		/* Regexes run on what the JSON text holds, not on it. */
		rules_use_push(u, NULL, 0, 1);
		u->nest++;
		rules_use_walk(u, inner);
		u->nest--;
		u->npath--;
		json_decref(inner);
		rules_use_here(u, NULL);
		return;
	}
	rules_use_here(u, v);
	if (json_is_object(v)) {
		json_object_foreach((json_t *)v, k, e) {
			rules_use_push(u, k, 0, 0);
			rules_use_walk(u, e);
			u->npath--;
		}
	} else if (json_is_array(v)) {
		json_array_foreach(v, i, e) {
			rules_use_push(u, NULL, i, 0);
			rules_use_walk(u, e);
			u->npath--;
		}
	}
}

/*
 * Note which ignore and normalize rules in the scope of request req
 * match something in either answer (rec, live; either may be NULL).
 */
void
rules_note_use(struct diff_rules *rules, const json_t *req,
    const json_t *rec, const json_t *live)
{
	struct rules_use	 u;
	size_t			 i;

	if (rules == NULL)
		return;
	memset(&u, 0, sizeof u);
	u.rules = rules;
	u.ign = xcalloc(rules->nignore + 1, 1);
	u.sub = xcalloc(rules->nsubst + 1, 1);
	for (i = 0; i < rules->nignore; i++) {
		if (rules->ignore[i].r.used == 0 &&
		    rscope_match(&rules->ignore[i].r.scope, req)) {
			u.ign[i] = 1;
			u.left++;
		}
	}
	for (i = 0; i < rules->nsubst; i++) {
		if (rules->subst[i].r.used == 0 &&
		    rscope_match(&rules->subst[i].r.scope, req)) {
			u.sub[i] = 1;
			u.left++;
		}
	}
	rules_use_walk(&u, rec);
	rules_use_walk(&u, live);
	free(u.ign);
	free(u.sub);
	free(u.path);
}

/* Append one unused rule to the list out. */
static void
rules_unused_add(json_t *out, const char *kind, const char *value,
    const struct diff_rule *r)
{
	json_t	*o, *scope;
	char	*text, *rule, *safe_rule, *safe_value;

	scope = rscope_json(&r->scope);
	/* A skipped answer's scope is its value: said once. */
	text = strcmp(kind, "skip") != 0 ? rscope_text(&r->scope) : NULL;
	xasprintf(&rule, "%s %s%s%s", r->origin, value, text ? " for " : "",
	    text ? text : "");
	/*
	 * An option or file name need not be UTF-8, and json_pack refuses
	 * what is not: invalid bytes are shown as \xNN, never dropped.
	 */
	safe_rule = scan_utf8_escape(rule);
	safe_value = scan_utf8_escape(value);
	o = json_pack("{s:s, s:s, s:s}", "rule", safe_rule, "kind", kind,
	    "value", safe_value);
	if (o == NULL)
		fatalx("unused rule %s: cannot make its JSON", safe_rule);
	if (scope != NULL)
		json_object_set_new(o, "scope", scope);
	json_array_append_new(out, o);
	free(safe_rule);
	free(safe_value);
	free(rule);
	free(text);
}

/*
 * The rules that matched nothing so far, as [{"rule": how it reads,
 * "kind": "ignore", "normalize" or "skip", "value", "scope"}].
 */
json_t *
rules_unused(const struct diff_rules *rules)
{
	json_t	*out = json_array();
	size_t	 i;

	if (rules == NULL)
		return out;
	for (i = 0; i < rules->nignore; i++) {
		if (rules->ignore[i].r.used == 0)
			rules_unused_add(out, "ignore",
			    jpath_text(rules->ignore[i].path),
			    &rules->ignore[i].r);
	}
	for (i = 0; i < rules->nsubst; i++) {
		if (rules->subst[i].r.used == 0)
			rules_unused_add(out, "normalize",
			    rules->subst[i].regex, &rules->subst[i].r);
	}
	for (i = 0; i < rules->nskip; i++) {
		if (rules->skip[i].r.used == 0)
			rules_unused_add(out, "skip", rules->skip[i].value,
			    &rules->skip[i].r);
	}
	return out;
}
