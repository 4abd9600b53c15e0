/*
 * The definitions two recordings list, and mcpreel diff's alignment:
 * tools added, removed and changed (which fields, with the paths from
 * the definition), the same for prompts and resources, rules applied to
 * definitions, every page of a list collected; and requests paired as
 * mock matches them, repeats in order, the extra ones only on one side.
 */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include "replay.h"
#include "unit.h"

#define nitems(a)	(sizeof (a) / sizeof (a)[0])

/* Parse JSON text, failing the test if it is not JSON. */
static json_t *
defs_test_json(const char *text)
{
	json_error_t	 err;
	json_t		*v;

	v = json_loads(text, JSON_DECODE_ANY, &err);
	cr_assert_not_null(v, "not JSON: %s: %s", text, err.text);
	return v;
}

/* The change named name, or NULL. */
static const struct defs_change *
defs_test_find(const struct defs_diff *d, const char *name)
{
	size_t	i;

	for (i = 0; i < d->n; i++) {
		if (strcmp(d->v[i].name, name) == 0)
			return &d->v[i];
	}
	return NULL;
}

/* The fields of a change as "a,b". */
static char *
defs_test_fields(const struct defs_change *c)
{
	char	*s = xstrdup(""), *n;
	size_t	 i;

	for (i = 0; i < json_array_size(c->fields); i++) {
		xasprintf(&n, "%s%s%s", s, i ? "," : "",
		    json_string_value(json_array_get(c->fields, i)));
		free(s);
		s = n;
	}
	return s;
}

/* One case: two sets of tool definitions, and the changes wanted. */
struct defs_case {
	const char	*a;		/* name -> definition, JSON */
	const char	*b;
	const char	*added;		/* names, comma-separated, sorted */
	const char	*removed;
	const char	*changed;	/* "name:field,field;..." */
};

static const struct defs_case defs_cases[] = {
	/* The same, key order aside. */
	{ "{\"t\": {\"name\": \"t\", \"description\": \"d\", "
	  "\"inputSchema\": {\"type\": \"object\", \"properties\": {}}}}",
	  "{\"t\": {\"inputSchema\": {\"properties\": {}, \"type\": "
	  "\"object\"}, \"description\": \"d\", \"name\": \"t\"}}",
	  "", "", "" },
	/* Added and removed. */
	{ "{\"a\": {\"name\": \"a\"}, \"b\": {\"name\": \"b\"}}",
	  "{\"b\": {\"name\": \"b\"}, \"c\": {\"name\": \"c\"}}",
	  "c", "a", "" },
	/* Each field the brief names, alone. */
	{ "{\"t\": {\"name\": \"t\", \"description\": \"old\"}}",
	  "{\"t\": {\"name\": \"t\", \"description\": \"new\"}}",
	  "", "", "t:description" },
	{ "{\"t\": {\"name\": \"t\", \"inputSchema\": {\"type\": \"object\", "
	  "\"properties\": {\"x\": {\"type\": \"string\"}}}}}",
	  "{\"t\": {\"name\": \"t\", \"inputSchema\": {\"type\": \"object\", "
	  "\"properties\": {\"x\": {\"type\": \"number\"}}}}}",
	  "", "", "t:inputSchema" },
	{ "{\"t\": {\"name\": \"t\"}}",
	  "{\"t\": {\"name\": \"t\", \"outputSchema\": {\"type\": "
	  "\"object\"}}}",
	  "", "", "t:outputSchema" },
	{ "{\"t\": {\"name\": \"t\", \"annotations\": {\"readOnlyHint\": "
	  "true}}}",
	  "{\"t\": {\"name\": \"t\", \"annotations\": {\"readOnlyHint\": "
	  "false}}}",
	  "", "", "t:annotations" },
	{ "{\"t\": {\"name\": \"t\", \"title\": \"T\"}}",
	  "{\"t\": {\"name\": \"t\"}}",
	  "", "", "t:title" },
	/* Several fields of one, and several tools. */
	{ "{\"t\": {\"name\": \"t\", \"title\": \"T\", \"description\": "
	  "\"d\"}, \"u\": {\"name\": \"u\", \"annotations\": {}}}",
	  "{\"t\": {\"name\": \"t\", \"title\": \"T2\", \"description\": "
	  "\"d2\"}, \"u\": {\"name\": \"u\", \"annotations\": "
	  "{\"idempotentHint\": true}}}",
	  "", "", "t:title,description;u:annotations" },
	/* Fields whose names are no identifiers: named whole. */
	{ "{\"t\": {\"name\": \"t\", \"x-vendor.ext\": {\"a\": 1}, "
	  "\"it's\": 1}}",
	  "{\"t\": {\"name\": \"t\", \"x-vendor.ext\": {\"a\": 2}, "
	  "\"it's\": 2}}",
	  "", "", "t:x-vendor.ext,it's" },
	/* Number spelling is no change, as in the diff. */
	{ "{\"t\": {\"name\": \"t\", \"inputSchema\": {\"maximum\": 1}}}",
	  "{\"t\": {\"name\": \"t\", \"inputSchema\": {\"maximum\": 1.0}}}",
	  "", "", "" },
};

/* The names of changes of one kind, sorted as found, comma-separated. */
static char *
defs_test_names(const struct defs_diff *d, enum defs_how how)
{
	char	*s = xstrdup(""), *n;
	size_t	 i;

	for (i = 0; i < d->n; i++) {
		if (d->v[i].how != how)
			continue;
		xasprintf(&n, "%s%s%s", s, *s ? "," : "", d->v[i].name);
		free(s);
		s = n;
	}
	return s;
}

/* The changed ones as "name:field,field;...", fields as found. */
static char *
defs_test_changed(const struct defs_diff *d)
{
	char	*s = xstrdup(""), *n, *f;
	size_t	 i;

	for (i = 0; i < d->n; i++) {
		if (d->v[i].how != DEFS_CHANGED)
			continue;
		f = defs_test_fields(&d->v[i]);
		xasprintf(&n, "%s%s%s:%s", s, *s ? ";" : "", d->v[i].name, f);
		free(f);
		free(s);
		s = n;
	}
	return s;
}

Test(defs, added_removed_changed_fields, .timeout = UNIT_TIMEOUT)
{
	const struct defs_case	*c;
	struct defs_diff	 d;
	json_t			*a, *b;
	char			*s;
	size_t			 i;

	for (i = 0; i < nitems(defs_cases); i++) {
		c = &defs_cases[i];
		a = defs_test_json(c->a);
		b = defs_test_json(c->b);
		memset(&d, 0, sizeof d);
		defs_compare(DEFS_TOOLS, a, b, NULL, &d);
		s = defs_test_names(&d, DEFS_ADDED);
		cr_expect_str_eq(s, c->added, "case %zu: added", i);
		free(s);
		s = defs_test_names(&d, DEFS_REMOVED);
		cr_expect_str_eq(s, c->removed, "case %zu: removed", i);
		free(s);
		s = defs_test_changed(&d);
		cr_expect_str_eq(s, c->changed, "case %zu: changed", i);
		free(s);
		defs_clear(&d);
		json_decref(a);
		json_decref(b);
	}
}

Test(defs, paths_from_the_definition, .timeout = UNIT_TIMEOUT)
{
	struct defs_diff	 d;
	const struct defs_change *c;
	json_t			*a, *b;

	a = defs_test_json("{\"t\": {\"name\": \"t\", \"inputSchema\": "
	    "{\"properties\": {\"x\": {\"type\": \"string\"}}}}}");
	b = defs_test_json("{\"t\": {\"name\": \"t\", \"inputSchema\": "
	    "{\"properties\": {\"x\": {\"type\": \"integer\"}}}}}");
	memset(&d, 0, sizeof d);
	defs_compare(DEFS_TOOLS, a, b, NULL, &d);
	cr_assert_eq(d.n, 1);
	c = defs_test_find(&d, "t");
	cr_assert_not_null(c);
	cr_assert_eq(c->diff.n, 1);
	cr_expect_str_eq(c->diff.v[0].path, "$.inputSchema.properties.x.type");
	cr_expect_str_eq(json_string_value(c->diff.v[0].recorded), "string");
	cr_expect_str_eq(json_string_value(c->diff.v[0].replayed), "integer");
	defs_clear(&d);
	json_decref(a);
	json_decref(b);
}

Test(defs, rules_apply_as_to_the_list_answer, .timeout = UNIT_TIMEOUT)
{
	struct diff_rules	 rules;
	struct defs_diff	 d;
	json_t			*a, *b;
	char			*cause = NULL;

	a = defs_test_json("{\"t\": {\"name\": \"t\", \"description\": "
	    "\"built at 10:00:01\", \"title\": \"one\"}}");
	b = defs_test_json("{\"t\": {\"name\": \"t\", \"description\": "
	    "\"built at 11:02:03\", \"title\": \"two\"}}");

	/* No rules: both fields. */
	memset(&d, 0, sizeof d);
	defs_compare(DEFS_TOOLS, a, b, NULL, &d);
	cr_assert_eq(d.n, 1);
	cr_expect_eq(json_array_size(d.v[0].fields), 2);
	defs_clear(&d);

	/* A normalize for the time, an ignore written for tools/list. */
	rules_init(&rules);
	cr_assert_eq(rules_add_subst(&rules, "[0-9]+:[0-9]+:[0-9]+", "<T>",
	    &cause), 0, "%s", cause);
	cr_assert_eq(rules_add_ignore(&rules, "$.result.tools[*].title",
	    &cause), 0, "%s", cause);
	memset(&d, 0, sizeof d);
	defs_compare(DEFS_TOOLS, a, b, &rules, &d);
	cr_expect_eq(d.n, 0, "normalized and ignored: no change");
	defs_clear(&d);
	rules_clear(&rules);

	/* Scoped to another method, the ignore does not apply. */
	rules_init(&rules);
	cr_assert_eq(rules_add_ignore(&rules, "$.result.tools[*].title",
	    &cause), 0, "%s", cause);
	cr_assert_eq(rules_scope_last(&rules, "method=prompts/list", &cause),
	    0, "%s", cause);
	memset(&d, 0, sizeof d);
	defs_compare(DEFS_TOOLS, a, b, &rules, &d);
	cr_assert_eq(d.n, 1);
	cr_expect_eq(json_array_size(d.v[0].fields), 2);
	defs_clear(&d);
	rules_clear(&rules);
	json_decref(a);
	json_decref(b);
}

/* A recorded message for a test plan. */
struct defs_rec {
	enum dir	 dir;
	const char	*text;
};

/* Build plan p from messages, seq 1, 2, ... */
static void
defs_test_plan(struct plan *p, const struct defs_rec *recs, size_t n)
{
	size_t	i;

	memset(p, 0, sizeof *p);
	for (i = 0; i < n; i++)
		plan_add(p, (int64_t)i + 1, recs[i].dir, (int64_t)i * 1000,
		    recs[i].text, strlen(recs[i].text));
	plan_build(p);
}

#define C2S(t)	{ DIR_C2S, (t) }
#define S2C(t)	{ DIR_S2C, (t) }

Test(defs, collect_every_page_by_kind_key, .timeout = UNIT_TIMEOUT)
{
	static const struct defs_rec recs[] = {
		C2S("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\"}"),
		S2C("{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"tools\":"
		    "[{\"name\":\"a\"},{\"name\":\"b\"}],\"nextCursor\":\"c\"}}"),
		C2S("{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/list\","
		    "\"params\":{\"cursor\":\"c\"}}"),
		S2C("{\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{\"tools\":"
		    "[{\"name\":\"c\"},{\"nameless\":1}]}}"),
		C2S("{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":"
		    "\"resources/templates/list\"}"),
		S2C("{\"jsonrpc\":\"2.0\",\"id\":3,\"result\":"
		    "{\"resourceTemplates\":[{\"uriTemplate\":\"x://{id}\"}]}}"),
	};
	struct plan	 p;
	json_t		*t;

	defs_test_plan(&p, recs, nitems(recs));
	t = defs_collect(&p, DEFS_TOOLS);
	cr_assert_not_null(t);
	cr_expect_eq(json_object_size(t), 3, "both pages, the nameless left");
	cr_expect_not_null(json_object_get(t, "c"));
	json_decref(t);
	t = defs_collect(&p, DEFS_TEMPLATES);
	cr_assert_not_null(t);
	cr_expect_not_null(json_object_get(t, "x://{id}"));
	json_decref(t);
	cr_expect_null(defs_collect(&p, DEFS_PROMPTS), "never listed");
	cr_expect_null(defs_collect(&p, DEFS_RESOURCES), "never listed");
	plan_clear(&p);
}

Test(defs, sdiff_pairs_repeats_in_order_and_says_what_one_side_has,
    .timeout = UNIT_TIMEOUT)
{
	/* A calls x, y, x; B calls x, z, x, x (its third x is extra). */
	static const struct defs_rec ra[] = {
		C2S("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\","
		    "\"params\":{\"name\":\"x\"}}"),
		S2C("{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"n\":1}}"),
		C2S("{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\","
		    "\"params\":{\"name\":\"y\"}}"),
		S2C("{\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{}}"),
		C2S("{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/call\","
		    "\"params\":{\"name\":\"x\"}}"),
		S2C("{\"jsonrpc\":\"2.0\",\"id\":3,\"result\":{\"n\":2}}"),
	};
	static const struct defs_rec rb[] = {
		C2S("{\"jsonrpc\":\"2.0\",\"id\":\"a\",\"method\":\"tools/call\","
		    "\"params\":{\"name\":\"x\",\"_meta\":{\"progressToken\":9}}}"),
		S2C("{\"jsonrpc\":\"2.0\",\"id\":\"a\",\"result\":{\"n\":1}}"),
		C2S("{\"jsonrpc\":\"2.0\",\"id\":\"b\",\"method\":\"tools/call\","
		    "\"params\":{\"name\":\"z\"}}"),
		S2C("{\"jsonrpc\":\"2.0\",\"id\":\"b\",\"result\":{}}"),
		C2S("{\"jsonrpc\":\"2.0\",\"id\":\"c\",\"method\":\"tools/call\","
		    "\"params\":{\"name\":\"x\"}}"),
		S2C("{\"jsonrpc\":\"2.0\",\"id\":\"c\",\"result\":{\"n\":3}}"),
		C2S("{\"jsonrpc\":\"2.0\",\"id\":\"d\",\"method\":\"tools/call\","
		    "\"params\":{\"name\":\"x\"}}"),
		S2C("{\"jsonrpc\":\"2.0\",\"id\":\"d\",\"result\":{\"n\":2}}"),
	};
	struct plan		 a, b;
	struct diff_rules	 rules;
	struct sdiff_report	 rep;

	defs_test_plan(&a, ra, nitems(ra));
	defs_test_plan(&b, rb, nitems(rb));
	rules_init(&rules);
	memset(&rep, 0, sizeof rep);
	sdiff_run(&a, &b, &rules, &rep);
	cr_expect_eq(rep.requests_a, 3);
	cr_expect_eq(rep.requests_b, 4);
	cr_assert_eq(rep.nonly_a, 1);
	cr_expect_eq(rep.only_a[0].seq, 3, "y only in A");
	cr_assert_eq(rep.nonly_b, 2);
	cr_expect_eq(rep.only_b[0].seq, 3, "z only in B");
	cr_expect_eq(rep.only_b[1].seq, 7, "the third x only in B");
	/* x #1 with x #1 (_meta aside): same; x #2 with B's second x. */
	cr_assert_eq(rep.ex.n, 2);
	cr_expect_eq(rep.ex.r[0].seq, 1);
	cr_expect_eq(rep.ex.r[0].seq_b, 1);
	cr_expect_eq(rep.ex.r[0].status, RSTATUS_SAME);
	cr_expect_eq(rep.ex.r[1].seq, 5);
	cr_expect_eq(rep.ex.r[1].seq_b, 5);
	cr_expect_eq(rep.ex.r[1].status, RSTATUS_DIFFERENT);
	cr_assert_eq(rep.ex.r[1].diff.n, 1);
	cr_expect_str_eq(rep.ex.r[1].diff.v[0].path, "$.result.n");
	cr_expect_eq(sdiff_exit_status(&rep), 1);
	sdiff_clear(&rep);

	/* A against itself: nothing. */
	rules_init(&rules);
	sdiff_run(&a, &a, &rules, &rep);
	cr_expect_eq(rep.nonly_a + rep.nonly_b, 0);
	cr_expect_eq(rep.ex.count[RSTATUS_SAME], 3);
	cr_expect_eq(sdiff_exit_status(&rep), 0);
	sdiff_clear(&rep);
	plan_clear(&a);
	plan_clear(&b);
}

Test(defs, sdiff_list_b_did_not_answer_is_a_difference,
    .timeout = UNIT_TIMEOUT)
{
	/* A lists its tools; B's tools/list went unanswered. */
	static const struct defs_rec ra[] = {
		C2S("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\"}"),
		S2C("{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"tools\":"
		    "[{\"name\":\"a\"}]}}"),
	};
	static const struct defs_rec rb[] = {
		C2S("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\"}"),
	};
	struct plan		 a, b;
	struct diff_rules	 rules;
	struct sdiff_report	 rep;

	defs_test_plan(&a, ra, nitems(ra));
	defs_test_plan(&b, rb, nitems(rb));
	rules_init(&rules);
	memset(&rep, 0, sizeof rep);
	sdiff_run(&a, &b, &rules, &rep);
	cr_expect_eq(rep.lists, 0, "not compared as definitions");
	cr_assert_eq(rep.ex.n, 1);
	cr_expect_eq(rep.ex.r[0].status, RSTATUS_MISSING);
	cr_expect_eq(rep.defs[DEFS_TOOLS].listed, 1);
	cr_expect_eq(sdiff_defs_one_sided(&rep), 1);
	cr_expect_eq(sdiff_exit_status(&rep), 1);
	sdiff_clear(&rep);
	plan_clear(&a);
	plan_clear(&b);
}

Test(defs, sdiff_retry_pairs_with_the_answered_time, .timeout = UNIT_TIMEOUT)
{
	/* A answered x once; B gave x up, sent it again, got the answer. */
	static const struct defs_rec ra[] = {
		C2S("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\","
		    "\"params\":{\"name\":\"x\"}}"),
		S2C("{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"n\":1}}"),
	};
	static const struct defs_rec rb[] = {
		C2S("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\","
		    "\"params\":{\"name\":\"x\"}}"),
		C2S("{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\","
		    "\"params\":{\"name\":\"x\"}}"),
		S2C("{\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{\"n\":1}}"),
	};
	struct plan		 a, b;
	struct diff_rules	 rules;
	struct sdiff_report	 rep;

	defs_test_plan(&a, ra, nitems(ra));
	defs_test_plan(&b, rb, nitems(rb));
	rules_init(&rules);
	memset(&rep, 0, sizeof rep);
	sdiff_run(&a, &b, &rules, &rep);
	cr_expect_eq(rep.nonly_a + rep.nonly_b, 0);
	cr_assert_eq(rep.ex.n, 1);
	cr_expect_eq(rep.ex.r[0].seq_b, 2);
	cr_expect_eq(rep.ex.r[0].status, RSTATUS_SAME);
	cr_expect_eq(sdiff_exit_status(&rep), 0);
	sdiff_clear(&rep);
	plan_clear(&a);
	plan_clear(&b);
}

Test(defs, params_cut_before_a_character, .timeout = UNIT_TIMEOUT)
{
	json_t	*msg, *s;
	char	*p;
	size_t	 i;
	char	 name[128] = "a";

	/* "a" then 30 two-byte characters: the cut falls inside one. */
	for (i = 0; i < 30; i++)
		strcat(name, "\xc3\xa9");
	msg = json_pack("{s:s, s:{s:s}}", "method", "tools/call", "params",
	    "name", name);
	cr_assert_not_null(msg);
	p = compare_params(msg);
	cr_expect_lt(strlen(p), 61);
	s = json_string(p);
	cr_expect_not_null(s, "valid UTF-8: %s", p);
	json_decref(s);
	free(p);
	json_decref(msg);
}

/* A fill per entry (3000 x 3000) took minutes; a fill per shape, ms. */
Test(defs, sdiff_redacted_requests_cost_a_fill_per_shape, .timeout = 30)
{
	struct plan		 a, b;
	struct diff_rules	 rules;
	struct sdiff_report	 rep;
	char			*t;
	size_t			 i, n = 3000;

	/* Every call redacted alike, an i that differs on each side. */
	memset(&a, 0, sizeof a);
	memset(&b, 0, sizeof b);
	for (i = 0; i < n; i++) {
		xasprintf(&t, "{\"jsonrpc\":\"2.0\",\"id\":%zu,\"method\":"
		    "\"tools/call\",\"params\":{\"name\":\"x\",\"arguments\":"
		    "{\"token\":\"[REDACTED]\",\"i\":%zu}}}", i, i);
		plan_add(&a, (int64_t)(2 * i + 1), DIR_C2S, 0, t, strlen(t));
		free(t);
		xasprintf(&t, "{\"jsonrpc\":\"2.0\",\"id\":%zu,\"result\":{}}",
		    i);
		plan_add(&a, (int64_t)(2 * i + 2), DIR_S2C, 0, t, strlen(t));
		free(t);
		xasprintf(&t, "{\"jsonrpc\":\"2.0\",\"id\":%zu,\"method\":"
		    "\"tools/call\",\"params\":{\"name\":\"x\",\"arguments\":"
		    "{\"token\":\"s3cret\",\"i\":%zu}}}", i, i + n);
		plan_add(&b, (int64_t)(2 * i + 1), DIR_C2S, 0, t, strlen(t));
		free(t);
		xasprintf(&t, "{\"jsonrpc\":\"2.0\",\"id\":%zu,\"result\":{}}",
		    i);
		plan_add(&b, (int64_t)(2 * i + 2), DIR_S2C, 0, t, strlen(t));
		free(t);
	}
	/* And one that matches with the token as a wildcard. */
	t = "{\"jsonrpc\":\"2.0\",\"id\":\"z\",\"method\":\"tools/call\","
	    "\"params\":{\"name\":\"x\",\"arguments\":{\"token\":\"t\","
	    "\"i\":7}}}";
	plan_add(&b, (int64_t)(2 * n + 1), DIR_C2S, 0, t, strlen(t));
	t = "{\"jsonrpc\":\"2.0\",\"id\":\"z\",\"result\":{}}";
	plan_add(&b, (int64_t)(2 * n + 2), DIR_S2C, 0, t, strlen(t));
	plan_build(&a);
	plan_build(&b);
	rules_init(&rules);
	memset(&rep, 0, sizeof rep);
	sdiff_run(&a, &b, &rules, &rep);
	cr_expect_eq(rep.nonly_b, n);
	cr_expect_eq(rep.nonly_a, n - 1);
	cr_assert_eq(rep.ex.n, 1);
	cr_expect_eq(rep.ex.r[0].seq, 15, "A's i=7");
	cr_expect_eq(rep.ex.r[0].seq_b, (int64_t)(2 * n + 1));
	sdiff_clear(&rep);
	plan_clear(&a);
	plan_clear(&b);
}

Test(defs, sdiff_cursors_b_issued_read_as_a_s, .timeout = UNIT_TIMEOUT)
{
	/* Each server issues its own random cursor for the second page. */
	static const struct defs_rec ra[] = {
		C2S("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\"}"),
		S2C("{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"tools\":"
		    "[{\"name\":\"a\"}],\"nextCursor\":\"ca\"}}"),
		C2S("{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/list\","
		    "\"params\":{\"cursor\":\"ca\"}}"),
		S2C("{\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{\"tools\":"
		    "[{\"name\":\"b\"}]}}"),
	};
	static const struct defs_rec rb[] = {
		C2S("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\"}"),
		S2C("{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"tools\":"
		    "[{\"name\":\"a\"}],\"nextCursor\":\"cb\"}}"),
		C2S("{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/list\","
		    "\"params\":{\"cursor\":\"cb\"}}"),
		S2C("{\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{\"tools\":"
		    "[{\"name\":\"b\"}]}}"),
	};
	struct plan		 a, b;
	struct diff_rules	 rules;
	struct sdiff_report	 rep;

	defs_test_plan(&a, ra, nitems(ra));
	defs_test_plan(&b, rb, nitems(rb));
	rules_init(&rules);
	memset(&rep, 0, sizeof rep);
	sdiff_run(&a, &b, &rules, &rep);
	cr_expect_eq(rep.nonly_a + rep.nonly_b, 0, "page 2 paired");
	cr_expect_eq(rep.lists, 2);
	cr_expect_eq(rep.defs[DEFS_TOOLS].n, 0);
	cr_expect_eq(sdiff_exit_status(&rep), 0);
	sdiff_clear(&rep);
	plan_clear(&a);
	plan_clear(&b);
}
