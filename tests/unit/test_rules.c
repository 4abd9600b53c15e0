/* Unit tests for replay/rules.c: scopes, scoped rules, unused rules. */

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include "replay.h"
#include "unit.h"

#define nitems(a)	(sizeof (a) / sizeof (a)[0])

/* Parse JSON text written with ' for ", failing the test if it is bad. */
static json_t *
rules_test_json(const char *text)
{
	json_error_t	 err;
	json_t		*v;
	char		*s = xstrdup(text), *p;

	for (p = s; *p != '\0'; p++) {
		if (*p == '\'')
			*p = '"';
	}
	v = json_loads(s, JSON_DECODE_ANY, &err);
	cr_assert_not_null(v, "bad test JSON %s: %s", s, err.text);
	free(s);
	return v;
}

struct scope_case {
	const char	*kv[2];		/* --for arguments, in order */
	const char	*req;		/* a request, ' for " */
	int		 match;
};

/* Scopes as data: what each --for holds, and which requests are in it. */
static const struct scope_case scope_cases[] = {
	{ { NULL }, "{'method':'ping'}", 1 },
	{ { "tool=get_weather" }, "{'method':'tools/call','params':"
	    "{'name':'get_weather','arguments':{}}}", 1 },
	{ { "tool=get_weather" }, "{'method':'tools/call','params':"
	    "{'name':'get_time'}}", 0 },
	{ { "tool=get_*" }, "{'method':'tools/call','params':"
	    "{'name':'get_time'}}", 1 },
	{ { "tool=get_weather" }, "{'method':'prompts/get','params':"
	    "{'name':'get_weather'}}", 0 },
	{ { "tool=get_weather" }, "{'method':'tools/call'}", 0 },
	{ { "tool=get_weather" }, "{'method':'tools/call','params':"
	    "{'name':7}}", 0 },
	{ { "prompt=greet" }, "{'method':'prompts/get','params':"
	    "{'name':'greet'}}", 1 },
	{ { "prompt=greet" }, "{'method':'tools/call','params':"
	    "{'name':'greet'}}", 0 },
	{ { "resource=file:///tmp/*" }, "{'method':'resources/read',"
	    "'params':{'uri':'file:///tmp/a/b.txt'}}", 1 },
	{ { "resource=file:///tmp/*" }, "{'method':'resources/read',"
	    "'params':{'uri':'file:///etc/passwd'}}", 0 },
	{ { "resource=file:///tmp/*" }, "{'method':'resources/subscribe',"
	    "'params':{'uri':'file:///tmp/a'}}", 0 },
	{ { "method=tools/*" }, "{'method':'tools/list'}", 1 },
	{ { "method=tools/*" }, "{'method':'prompts/list'}", 0 },
	{ { "method=tools/call", "tool=echo" }, "{'method':'tools/call',"
	    "'params':{'name':'echo'}}", 1 },
	{ { "tool=echo", "method=tools/*" }, "{'method':'tools/call',"
	    "'params':{'name':'echo'}}", 1 },
	{ { "method=tools/list" }, "{'result':{}}", 0 },
};

/* Each scope holds the requests it names and no others. */
Test(rules, scope_match, .timeout = UNIT_TIMEOUT)
{
	const struct scope_case	*c;
	struct rscope		 s;
	json_t			*req;
	char			*cause = NULL;
	size_t			 i, j;

	for (i = 0; i < nitems(scope_cases); i++) {
		c = &scope_cases[i];
		memset(&s, 0, sizeof s);
		for (j = 0; j < 2 && c->kv[j] != NULL; j++)
			cr_assert_eq(rscope_parse(&s, c->kv[j], &cause), 0,
			    "case %zu: %s", i, cause);
		req = rules_test_json(c->req);
		cr_expect_eq(rscope_match(&s, req), c->match,
		    "case %zu: %s in scope: %d", i, c->req, !c->match);
		json_decref(req);
		rscope_clear(&s);
	}
}

struct scope_bad {
	const char	*kv[2];
	const char	*want;		/* a fragment of the error */
};

static const struct scope_bad scope_bads[] = {
	{ { "tool" }, "write KEY=VALUE" },
	{ { "=x" }, "write KEY=VALUE" },
	{ { "tools=x" }, "unknown scope 'tools' (expected method, tool, "
	    "prompt, resource)" },
	{ { "tool=" }, "scope tool= needs a value" },
	{ { "tool=a", "prompt=b" }, "scope prompt= cannot go with tool=" },
	{ { "tool=a", "tool=b" }, "cannot go with tool=" },
	{ { "method=a", "method=b" }, "method= given twice" },
	{ { "method=prompts/get", "tool=a" }, "method=prompts/get cannot go "
	    "with tool= (which is for tools/call requests)" },
	{ { "resource=x", "method=tools/call" }, "cannot go with resource=" },
};

/* A bad scope is refused with what is wrong and how to write it. */
Test(rules, scope_errors, .timeout = UNIT_TIMEOUT)
{
	const struct scope_bad	*c;
	struct rscope		 s;
	char			*cause;
	size_t			 i;
	int			 r;

	for (i = 0; i < nitems(scope_bads); i++) {
		c = &scope_bads[i];
		memset(&s, 0, sizeof s);
		cause = NULL;
		r = rscope_parse(&s, c->kv[0], &cause);
		if (r == 0 && c->kv[1] != NULL)
			r = rscope_parse(&s, c->kv[1], &cause);
		cr_expect_eq(r, -1, "case %zu accepted", i);
		cr_assert_not_null(cause, "case %zu", i);
		cr_expect(strstr(cause, c->want) != NULL,
		    "case %zu: cause \"%s\" lacks \"%s\"", i, cause, c->want);
		free(cause);
		rscope_clear(&s);
	}
}

/* --for narrows the last ignore, and needs one. */
Test(rules, scope_last, .timeout = UNIT_TIMEOUT)
{
	struct diff_rules	 rules;
	char			*cause = NULL, *text;

	rules_init(&rules);
	cr_expect_eq(rules_scope_last(&rules, "tool=a", &cause), -1);
	cr_assert_not_null(cause);
	cr_expect(strstr(cause, "give --ignore PATH first") != NULL, "%s",
	    cause);
	free(cause);
	cr_assert_eq(rules_add_ignore(&rules, "$.a", &cause), 0);
	cr_assert_eq(rules_add_ignore(&rules, "$.b", &cause), 0);
	cr_assert_eq(rules_scope_last(&rules, "tool=x*", &cause), 0);
	cr_assert_eq(rules_scope_last(&rules, "method=tools/call",
	    &cause), 0);
	cr_expect(rscope_empty(&rules.ignore[0].r.scope));
	text = rscope_text(&rules.ignore[1].r.scope);
	cr_expect_str_eq(text, "method=tools/call tool=x*");
	free(text);
	rules_clear(&rules);
}

/*
 * A scoped ignore hides a difference in its tool's answers only; an
 * unscoped one everywhere; diff_messages (no request) applies unscoped
 * rules only.
 */
Test(rules, scoped_diff, .timeout = UNIT_TIMEOUT)
{
	struct diff_rules	 rules;
	struct diff		 d = { NULL, 0, NULL, 0 };
	json_t			*weather, *time, *a, *b;
	char			*cause = NULL;

	rules_init(&rules);
	cr_assert_eq(rules_add_ignore(&rules, "$.result.t", &cause), 0);
	cr_assert_eq(rules_scope_last(&rules, "tool=get_weather",
	    &cause), 0);
	cr_assert_eq(rules_add_subst(&rules, "[0-9]+", "N", &cause), 0);
	cr_assert_eq(rscope_parse(&rules.subst[0].r.scope, "tool=get_time",
	    &cause), 0);
	weather = rules_test_json("{'method':'tools/call','params':"
	    "{'name':'get_weather'}}");
	time = rules_test_json("{'method':'tools/call','params':"
	    "{'name':'get_time'}}");
	a = rules_test_json("{'result':{'t':1,'s':'at 10'}}");
	b = rules_test_json("{'result':{'t':2,'s':'at 11'}}");

	cr_expect_eq(diff_messages_for(weather, a, b, &rules, &d), 1);
	cr_assert_eq(d.n, 1);
	cr_expect_str_eq(d.v[0].path, "$.result.s", "the regex is "
	    "get_time's only");
	diff_clear(&d);
	cr_expect_eq(diff_messages_for(time, a, b, &rules, &d), 1);
	cr_assert_eq(d.n, 1);
	cr_expect_str_eq(d.v[0].path, "$.result.t", "the ignore is "
	    "get_weather's only");
	diff_clear(&d);
	cr_expect_eq(diff_messages(a, b, &rules, &d), 2);
	diff_clear(&d);

	json_decref(weather);
	json_decref(time);
	json_decref(a);
	json_decref(b);
	rules_clear(&rules);
}

/*
 * A rule is used when its path names a place or its regex matches a
 * string in an answer in its scope, even when both sides are the same
 * (inside JSON text too); one that never does is listed as unused, with
 * how it was written and its scope.
 */
Test(rules, unused, .timeout = UNIT_TIMEOUT)
{
	struct diff_rules	 rules;
	json_t			*req, *other, *ans, *unused, *o;
	char			*cause = NULL;

	rules_init(&rules);
	/* 0: inside JSON text; 1: never there; 2: another tool's. */
	cr_assert_eq(rules_add_ignore(&rules,
	    "$.result.content[0].text{json}.id", &cause), 0);
	cr_assert_eq(rules_add_ignore(&rules, "$.result.nope", &cause),
	    0);
	cr_assert_eq(rules_add_ignore(&rules, "$.result", &cause), 0);
	cr_assert_eq(rules_scope_last(&rules, "tool=other", &cause), 0);
	/* 0: a decoded value; 1: the raw JSON text, never matched. */
	cr_assert_eq(rules_add_subst(&rules, "^a[0-9]+$", "A", &cause),
	    0);
	cr_assert_eq(rules_add_subst(&rules, "\"id\":\"a[0-9]+\"", "",
	    &cause), 0);
	cr_assert_eq(rules_add_skip(&rules, "method", "ping",
	    "--ignore-method", &cause), 0);

	req = rules_test_json("{'method':'tools/call','params':"
	    "{'name':'echo'}}");
	ans = json_pack("{s:{s:[{s:s, s:s}]}}", "result", "content", "type",
	    "text", "text", "{\"id\":\"a17\",\"n\":1}");
	rules_note_use(&rules, req, ans, ans);
	cr_expect_eq(rules.ignore[0].r.used, 1);
	cr_expect_eq(rules.ignore[1].r.used, 0);
	cr_expect_eq(rules.ignore[2].r.used, 0, "out of its scope");
	cr_expect_eq(rules.subst[0].r.used, 1);
	cr_expect_eq(rules.subst[1].r.used, 0, "never the JSON text");

	unused = rules_unused(&rules);
	cr_assert_eq(json_array_size(unused), 4);
	o = json_array_get(unused, 0);
	cr_expect_str_eq(json_string_value(json_object_get(o, "rule")),
	    "--ignore $.result.nope");
	cr_expect_str_eq(json_string_value(json_object_get(o, "kind")),
	    "ignore");
	cr_expect_null(json_object_get(o, "scope"));
	o = json_array_get(unused, 1);
	cr_expect_str_eq(json_string_value(json_object_get(o, "rule")),
	    "--ignore $.result for tool=other");
	cr_expect_str_eq(json_string_value(json_object_get(json_object_get(o,
	    "scope"), "tool")), "other");
	o = json_array_get(unused, 2);
	cr_expect_str_eq(json_string_value(json_object_get(o, "kind")),
	    "normalize");
	o = json_array_get(unused, 3);
	cr_expect_str_eq(json_string_value(json_object_get(o, "rule")),
	    "--ignore-method ping");
	json_decref(unused);

	/* In its scope, the other tool's ignore is used. */
	other = rules_test_json("{'method':'tools/call','params':"
	    "{'name':'other'}}");
	rules_note_use(&rules, other, ans, NULL);
	cr_expect_eq(rules.ignore[2].r.used, 1);
	unused = rules_unused(&rules);
	cr_expect_eq(json_array_size(unused), 3);
	json_decref(unused);

	json_decref(req);
	json_decref(other);
	json_decref(ans);
	rules_clear(&rules);
}

/* Mock keys leave out a scoped ignore's place only in its scope. */
Test(rules, scoped_keys, .timeout = UNIT_TIMEOUT)
{
	struct diff_rules	 rules;
	json_t			*a, *b;
	char			*cause = NULL, *ka, *kb;

	rules_init(&rules);
	cr_assert_eq(rules_add_ignore(&rules, "$.params.arguments.when",
	    &cause), 0);
	cr_assert_eq(rules_scope_last(&rules, "tool=clock", &cause), 0);
	a = rules_test_json("{'method':'tools/call','params':{'name':'clock',"
	    "'arguments':{'when':1}}}");
	b = rules_test_json("{'method':'tools/call','params':{'name':'clock',"
	    "'arguments':{'when':2}}}");
	ka = match_request_key(a, &rules);
	kb = match_request_key(b, &rules);
	cr_expect_str_eq(ka, kb);
	free(ka);
	free(kb);
	json_decref(a);
	json_decref(b);

	a = rules_test_json("{'method':'tools/call','params':{'name':'cal',"
	    "'arguments':{'when':1}}}");
	b = rules_test_json("{'method':'tools/call','params':{'name':'cal',"
	    "'arguments':{'when':2}}}");
	ka = match_request_key(a, &rules);
	kb = match_request_key(b, &rules);
	cr_expect_str_neq(ka, kb, "another tool's when still counts");
	free(ka);
	free(kb);
	json_decref(a);
	json_decref(b);
	rules_clear(&rules);
}

/* A rules file's scoped entries load with their scope and origin. */
Test(rules, load_scoped, .timeout = UNIT_TIMEOUT)
{
	struct diff_rules	 rules;
	char			 path[] = "/tmp/mcpreel-rules-XXXXXX";
	char			*cause = NULL, *text;
	FILE			*f;
	int			 fd;
	json_t			*u;

	cr_assert_neq(fd = mkstemp(path), -1);
	cr_assert_not_null(f = fdopen(fd, "w"));
	fputs("{\"ignore\": [\"$.a\", {\"path\": \"$.b\", \"method\": "
	    "\"tools/call\", \"tool\": \"get_weather\"}],\n"
	    " \"ignore_tools\": [\"slow_*\"], \"ignore_prompts\": [\"p\"],\n"
	    " \"ignore_resources\": [\"file:///tmp/*\"],\n"
	    " \"normalize\": [{\"regex\": \"x\", \"replace\": \"y\", "
	    "\"prompt\": \"greet\"}]}\n", f);
	fclose(f);
	rules_init(&rules);
	cr_assert_eq(rules_load(&rules, path, &cause), 0, "%s", cause);
	unlink(path);
	cr_assert_eq(rules.nignore, 2);
	cr_expect(rscope_empty(&rules.ignore[0].r.scope));
	text = rscope_text(&rules.ignore[1].r.scope);
	cr_expect_str_eq(text, "method=tools/call tool=get_weather");
	free(text);
	cr_assert_eq(rules.nskip, 3);
	cr_expect_eq(rules.skip[0].r.scope.kind, RSCOPE_TOOL);
	cr_expect_eq(rules.skip[1].r.scope.kind, RSCOPE_PROMPT);
	cr_expect_eq(rules.skip[2].r.scope.kind, RSCOPE_RESOURCE);
	cr_assert_eq(rules.nsubst, 1);
	cr_expect_eq(rules.subst[0].r.scope.kind, RSCOPE_PROMPT);
	u = rules_unused(&rules);
	cr_assert_eq(json_array_size(u), 6);
	cr_expect(strstr(json_string_value(json_object_get(json_array_get(u,
	    1), "rule")), "\"ignore\"[1] $.b for method=tools/call "
	    "tool=get_weather") != NULL, "%s", json_string_value(
	    json_object_get(json_array_get(u, 1), "rule")));
	json_decref(u);
	rules_clear(&rules);
}

/*
 * The use check steps into JSON text as deep as the diff does and no
 * deeper: a path one {json} step past DIFF_MAX_JSON_NEST stays unused.
 */
Test(rules, use_nest_bound, .timeout = UNIT_TIMEOUT)
{
	struct diff_rules	 rules;
	json_t			*v, *req;
	char			*cause = NULL, *text, path[256];
	size_t			 i, j, len;

	/* {"x": "{\"x\": ... {\"x\": 1}"}, DIFF_MAX_JSON_NEST + 1 levels in. */
	v = json_pack("{s:i}", "x", 1);
	for (i = 0; i < DIFF_MAX_JSON_NEST + 1; i++) {
		text = json_dumps(v, JSON_COMPACT);
		json_decref(v);
		v = json_pack("{s:s}", "x", text);
		free(text);
	}
	rules_init(&rules);
	for (i = 1; i <= DIFF_MAX_JSON_NEST + 1; i++) {
		len = (size_t)snprintf(path, sizeof path, "$");
		for (j = 0; j < i; j++)
			len += (size_t)snprintf(path + len, sizeof path - len,
			    ".x{json}");
		snprintf(path + len, sizeof path - len, ".x");
		cr_assert_eq(rules_add_ignore(&rules, path, &cause), 0,
		    "%s: %s", path, cause);
	}
	req = json_pack("{s:s}", "method", "tools/call");
	rules_note_use(&rules, req, v, NULL);
	for (i = 0; i < DIFF_MAX_JSON_NEST; i++)
		cr_expect_eq(rules.ignore[i].r.used, 1, "%zu {json} steps in",
		    i + 1);
	cr_expect_eq(rules.ignore[DIFF_MAX_JSON_NEST].r.used, 0,
	    "past the bound the text is a string");
	json_decref(req);
	json_decref(v);
	rules_clear(&rules);
}

/*
 * An unused rule whose value, scope or origin is not UTF-8 is still
 * listed, its bad bytes written \xNN (jansson refuses such a string).
 */
Test(rules, unused_not_utf8, .timeout = UNIT_TIMEOUT)
{
	struct diff_rules	 rules;
	json_t			*u, *e;
	char			*cause = NULL;

	rules_init(&rules);
	cr_assert_eq(rules_add_skip(&rules, "tool", "zz\xff", "--ignore-tool",
	    &cause), 0);
	cr_assert_eq(rules_add_ignore_from(&rules, "$.result.a",
	    "rules file r\xc3.json \"ignore\"[0]", &cause), 0);
	cr_assert_eq(rules_scope_last(&rules, "tool=t\xfe", &cause), 0);
	u = rules_unused(&rules);
	cr_assert_eq(json_array_size(u), 2, "every unused rule is listed");
	e = json_array_get(u, 0);
	cr_expect_str_eq(json_string_value(json_object_get(e, "rule")),
	    "rules file r\\xc3.json \"ignore\"[0] $.result.a for tool=t\\xfe");
	cr_expect_str_eq(json_string_value(json_object_get(json_object_get(e,
	    "scope"), "tool")), "t\\xfe");
	e = json_array_get(u, 1);
	cr_expect_str_eq(json_string_value(json_object_get(e, "value")),
	    "zz\\xff");
	cr_expect_str_eq(json_string_value(json_object_get(e, "rule")),
	    "--ignore-tool zz\\xff");
	json_decref(u);
	rules_clear(&rules);
}

/* A bad "ignore_*" entry is named as every rules file error is: "FILE: ". */
Test(rules, load_skip_error_message, .timeout = UNIT_TIMEOUT)
{
	struct diff_rules	 rules;
	char			 path[] = "/tmp/mcpreel-rules-XXXXXX";
	char			*cause = NULL, *want;
	FILE			*f;
	int			 fd;

	cr_assert_neq(fd = mkstemp(path), -1);
	cr_assert_not_null(f = fdopen(fd, "w"));
	fputs("{\"ignore_tools\": [\"ok\", \"\"]}\n", f);
	fclose(f);
	rules_init(&rules);
	cr_assert_eq(rules_load(&rules, path, &cause), -1);
	unlink(path);
	xasprintf(&want, "rules file %s: \"ignore_tools\"[1]: ", path);
	cr_expect(strncmp(cause, want, strlen(want)) == 0, "%s", cause);
	free(want);
	free(cause);
	rules_clear(&rules);
}
