/*
 * The structural diff: what counts as the same (key order, number
 * spelling, JSON held in strings), what is reported and where (missing
 * keys, extra elements, other types), and the rules that skip places,
 * rewrite strings and come from a rules file.
 */

#include <sys/stat.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include "replay.h"
#include "unit.h"

#define nitems(a)	(sizeof (a) / sizeof (a)[0])

/* Most differences, and ignore patterns, one case has. */
#define DIFF_TEST_WANT		4
#define DIFF_TEST_IGNORE	3

/* One expected difference; the values are JSON text, NULL for absent. */
struct diff_want {
	const char	*path;
	const char	*recorded;
	const char	*replayed;
};

struct diff_case {
	const char		*recorded;
	const char		*replayed;
	const char		*ignore[DIFF_TEST_IGNORE];
	size_t			 nwant;
	struct diff_want	 want[DIFF_TEST_WANT];
};

/* No differences wanted; two messages that are the same by any rules. */
#define DIFF_NONE	{ { NULL, NULL, NULL } }
#define DIFF_SAME(a, b)	{ (a), (b), { NULL }, 0, DIFF_NONE }

/* Parse JSON text of any kind, failing the test if it is not JSON. */
static json_t *
diff_test_json(const char *text)
{
	json_error_t	 err;
	json_t		*v;

	v = json_loads(text, JSON_DECODE_ANY | JSON_ALLOW_NUL, &err);
	cr_assert_not_null(v, "bad test JSON %s: %s", text, err.text);
	return v;
}

/*
 * A request message of method with params (JSON text, or NULL), freed
 * by diff_test_reqs_free(); each test runs in its own process.
 */
#define DIFF_TEST_MAX_REQS	8
static json_t	*diff_reqs[DIFF_TEST_MAX_REQS];
static size_t	 diff_nreqs;

static json_t *
diff_test_req(const char *method, const char *params)
{
	json_t	*req;

	cr_assert_lt(diff_nreqs, DIFF_TEST_MAX_REQS);
	req = json_pack("{s:s, s:i, s:s}", "jsonrpc", "2.0", "id", 1,
	    "method", method);
	if (params != NULL)
		json_object_set_new(req, "params", diff_test_json(params));
	diff_reqs[diff_nreqs++] = req;
	return req;
}

/* Free what diff_test_req made. */
static void
diff_test_reqs_free(void)
{
	while (diff_nreqs > 0)
		json_decref(diff_reqs[--diff_nreqs]);
}

/* Check one entry's value against JSON text (NULL: absent). */
static void
diff_test_value(const char *what, const char *ctx, json_t *got,
    const char *want)
{
	json_t	*w;
	char	*g;

	if (want == NULL) {
		cr_expect_null(got, "%s: %s should be absent", ctx, what);
		return;
	}
	cr_assert_not_null(got, "%s: %s absent, want %s", ctx, what, want);
	w = diff_test_json(want);
	g = json_dumps(got, JSON_ENCODE_ANY);
	cr_expect(json_equal(got, w), "%s: %s is %s, want %s", ctx, what, g,
	    want);
	free(g);
	json_decref(w);
}

/*
 * Diff the case's messages by rules (plus its own ignores) and check the
 * entries, in order.  The inputs are freed before the entries are looked
 * at, so the entries must hold their own references.
 */
static void
diff_test_case(const struct diff_case *c, const struct diff_rules *base,
    const char *ctx)
{
	struct diff_rules	 rules;
	struct diff		 d = { NULL, 0, NULL, 0 };
	json_t			*a, *b;
	char			*cause = NULL;
	size_t			 i, n;

	rules_init(&rules);
	if (base != NULL)
		rules.no_defaults = base->no_defaults;
	for (i = 0; i < DIFF_TEST_IGNORE && c->ignore[i] != NULL; i++) {
		cr_assert_eq(rules_add_ignore(&rules, c->ignore[i],
		    &cause), 0, "%s: %s", ctx, cause);
	}
	a = diff_test_json(c->recorded);
	b = diff_test_json(c->replayed);
	n = diff_messages(a, b, &rules, &d);
	json_decref(a);
	json_decref(b);

	cr_expect_eq(n, d.n, "%s: returned %zu, added %zu", ctx, n, d.n);
	cr_expect_eq(d.n, c->nwant, "%s: %zu differences, want %zu%s%s", ctx,
	    d.n, c->nwant, d.n > 0 ? "; first at " : "",
	    d.n > 0 ? d.v[0].path : "");
	for (i = 0; i < d.n && i < c->nwant; i++) {
		cr_expect_str_eq(d.v[i].path, c->want[i].path,
		    "%s: difference %zu", ctx, i);
		diff_test_value("recorded", ctx, d.v[i].recorded,
		    c->want[i].recorded);
		diff_test_value("replayed", ctx, d.v[i].replayed,
		    c->want[i].replayed);
	}
	diff_clear(&d);
	cr_expect_eq(d.n, 0);
	cr_expect_null(d.v);
	rules_clear(&rules);
}

/* Run a table of cases, each named by its index in the table. */
static void
diff_test_table(const char *name, const struct diff_case *cases, size_t n,
    const struct diff_rules *rules)
{
	char	ctx[64];
	size_t	i;

	for (i = 0; i < n; i++) {
		snprintf(ctx, sizeof ctx, "%s case %zu", name, i);
		diff_test_case(&cases[i], rules, ctx);
	}
}

static const struct diff_case diff_same_cases[] = {
	/* Key order never counts, at any depth. */
	DIFF_SAME("{\"a\":1,\"b\":2}", "{\"b\":2,\"a\":1}"),
	DIFF_SAME("{\"r\":{\"x\":[{\"p\":1,\"q\":2}],\"y\":null}}",
	    "{\"r\":{\"y\":null,\"x\":[{\"q\":2,\"p\":1}]}}"),
	DIFF_SAME("{}", "{}"),
	DIFF_SAME("[]", "[]"),
	/* Nor does whitespace. */
	DIFF_SAME("{ \"a\" : [ 1 , 2 ] }", "{\"a\":[1,2]}"),
	/* Nor number spelling. */
	DIFF_SAME("{\"n\":1}", "{\"n\":1.0}"),
	DIFF_SAME("{\"n\":1}", "{\"n\":1e0}"),
	DIFF_SAME("{\"n\":10}", "{\"n\":1e1}"),
	DIFF_SAME("{\"n\":100}", "{\"n\":1E+2}"),
	DIFF_SAME("{\"n\":-0}", "{\"n\":0}"),
	DIFF_SAME("{\"n\":-0.0}", "{\"n\":0}"),
	DIFF_SAME("{\"n\":0.5}", "{\"n\":5e-1}"),
	DIFF_SAME("{\"n\":-2.50}", "{\"n\":-25e-1}"),
	DIFF_SAME("[true,false,null,\"s\"]", "[true,false,null,\"s\"]"),
	/* Strings holding JSON are compared as the JSON they hold. */
	DIFF_SAME("{\"text\":\"{\\\"a\\\":1,\\\"b\\\":[1,2]}\"}",
	    "{\"text\":\" {\\n \\\"b\\\" : [1, 2.0],\\t\\\"a\\\": 1e0 }\\n\"}"),
	DIFF_SAME("{\"text\":\"[{\\\"x\\\":\\\"y\\\",\\\"z\\\":0}]\"}",
	    "{\"text\":\"[ {\\\"z\\\":0, \\\"x\\\":\\\"y\\\"} ]\"}"),
	/* ... and the JSON in that JSON too. */
	DIFF_SAME("{\"t\":\"{\\\"u\\\":"
	    "\\\"{\\\\\\\"a\\\\\\\":1,\\\\\\\"b\\\\\\\":2}\\\"}\"}",
	    "{\"t\":\"{\\\"u\\\":"
	    "\\\"{\\\\\\\"b\\\\\\\":2,\\\\\\\"a\\\\\\\":1}\\\"}\"}"),
};

/* Messages that mean the same JSON have no differences. */
Test(diff, same, .timeout = UNIT_TIMEOUT)
{
	diff_test_table("same", diff_same_cases, nitems(diff_same_cases),
	    NULL);
}

static const struct diff_case diff_differ_cases[] = {
	/* Values. */
	{ "{\"n\":1}", "{\"n\":2}", { NULL }, 1, { { "$.n", "1", "2" } } },
	{ "{\"n\":1}", "{\"n\":1.5}", { NULL }, 1, {
	    { "$.n", "1", "1.5" } } },
	{ "{\"n\":0.1}", "{\"n\":0.10000001}", { NULL }, 1, {
	    { "$.n", "0.1", "0.10000001" } } },
	/* Two integers compare exactly, beyond what a double holds. */
	{ "{\"n\":9007199254740993}", "{\"n\":9007199254740992}", { NULL }, 1,
	    { { "$.n", "9007199254740993", "9007199254740992" } } },
	{ "{\"s\":\"a\"}", "{\"s\":\"b\"}", { NULL }, 1, {
	    { "$.s", "\"a\"", "\"b\"" } } },
	{ "{\"s\":\"a\"}", "{\"s\":\"a \"}", { NULL }, 1, {
	    { "$.s", "\"a\"", "\"a \"" } } },
	{ "{\"b\":true}", "{\"b\":false}", { NULL }, 1, {
	    { "$.b", "true", "false" } } },
	{ "1", "2", { NULL }, 1, { { "$", "1", "2" } } },

	/* Types: one difference at the place, with both values. */
	{ "{\"a\":\"1\"}", "{\"a\":1}", { NULL }, 1, {
	    { "$.a", "\"1\"", "1" } } },
	{ "{\"a\":{}}", "{\"a\":[]}", { NULL }, 1, { { "$.a", "{}", "[]" } } },
	{ "{\"a\":{\"x\":1,\"y\":2}}", "{\"a\":[1,2]}", { NULL }, 1, {
	    { "$.a", "{\"x\":1,\"y\":2}", "[1,2]" } } },
	{ "{\"a\":null}", "{\"a\":0}", { NULL }, 1, {
	    { "$.a", "null", "0" } } },
	{ "{\"a\":{\"b\":1}}", "{\"a\":null}", { NULL }, 1, {
	    { "$.a", "{\"b\":1}", "null" } } },
	{ "{\"a\":true}", "{\"a\":\"true\"}", { NULL }, 1, {
	    { "$.a", "true", "\"true\"" } } },
	{ "{\"a\":[0]}", "{\"a\":[false]}", { NULL }, 1, {
	    { "$.a[0]", "0", "false" } } },
	{ "{}", "[]", { NULL }, 1, { { "$", "{}", "[]" } } },

	/* Keys missing on either side, each its own difference. */
	{ "{\"a\":1,\"b\":2}", "{\"a\":1,\"c\":3}", { NULL }, 2, {
	    { "$.b", "2", NULL }, { "$.c", NULL, "3" } } },
	{ "{\"r\":{\"x\":{\"deep\":[1]}}}", "{\"r\":{}}", { NULL }, 1, {
	    { "$.r.x", "{\"deep\":[1]}", NULL } } },
	{ "{\"r\":{}}", "{\"r\":{\"y\":null}}", { NULL }, 1, {
	    { "$.r.y", NULL, "null" } } },
	{ "{\"x-y\":1,\"a b\":[1]}", "{\"x-y\":2,\"a b\":[2]}", { NULL }, 2, {
	    { "$['x-y']", "1", "2" }, { "$['a b'][0]", "1", "2" } } },

	/* Arrays: the common prefix, then each extra element. */
	{ "{\"a\":[1,2,3]}", "{\"a\":[1,2]}", { NULL }, 1, {
	    { "$.a[2]", "3", NULL } } },
	{ "{\"a\":[1]}", "{\"a\":[1,2,{\"x\":1}]}", { NULL }, 2, {
	    { "$.a[1]", NULL, "2" }, { "$.a[2]", NULL, "{\"x\":1}" } } },
	{ "{\"a\":[1,2,3]}", "{\"a\":[1,5]}", { NULL }, 2, {
	    { "$.a[1]", "2", "5" }, { "$.a[2]", "3", NULL } } },
	{ "{\"a\":[]}", "{\"a\":[[]]}", { NULL }, 1, {
	    { "$.a[0]", NULL, "[]" } } },
	{ "[[1,[2,3]]]", "[[1,[2,4]]]", { NULL }, 1, {
	    { "$[0][1][1]", "3", "4" } } },

	/* Inside JSON held by strings: the path goes on through {json}. */
	{ "{\"result\":{\"content\":[{\"type\":\"text\","
	    "\"text\":\"{\\\"temperature\\\":21,\\\"unit\\\":\\\"C\\\"}\"}]}}",
	  "{\"result\":{\"content\":[{\"type\":\"text\","
	    "\"text\":\"{\\\"unit\\\":\\\"C\\\", \\\"temperature\\\":22}\"}]}}",
	  { NULL }, 1, {
	    { "$.result.content[0].text{json}.temperature", "21", "22" } } },
	{ "{\"t\":\"[1,2]\"}", "{\"t\":\"[1]\"}", { NULL }, 1, {
	    { "$.t{json}[1]", "2", NULL } } },
	{ "{\"t\":\"{\\\"a\\\":1}\"}", "{\"t\":\"[1]\"}", { NULL }, 1, {
	    { "$.t{json}", "{\"a\":1}", "[1]" } } },
	{ "{\"t\":\"{\\\"u\\\":\\\"[1,{\\\\\\\"k\\\\\\\":true}]\\\"}\"}",
	  "{\"t\":\"{\\\"u\\\":\\\"[1,{\\\\\\\"k\\\\\\\":false}]\\\"}\"}",
	  { NULL }, 1, { { "$.t{json}.u{json}[1].k", "true", "false" } } },
	/* JSON on one side only, or not JSON: compared as strings. */
	{ "{\"t\":\"{\\\"a\\\":1}\"}", "{\"t\":\"not json\"}", { NULL }, 1, {
	    { "$.t", "\"{\\\"a\\\":1}\"", "\"not json\"" } } },
	{ "{\"t\":\"{abc\"}", "{\"t\":\"{abd\"}", { NULL }, 1, {
	    { "$.t", "\"{abc\"", "\"{abd\"" } } },
	{ "{\"t\":\"{\\\"a\\\":1} trailing\"}", "{\"t\":\"{\\\"a\\\":1}\"}",
	  { NULL }, 1, {
	    { "$.t", "\"{\\\"a\\\":1} trailing\"", "\"{\\\"a\\\":1}\"" } } },
	/* Scalars held as text are text, not JSON: "1" is not "1.0". */
	{ "{\"t\":\"1\"}", "{\"t\":\"1.0\"}", { NULL }, 1, {
	    { "$.t", "\"1\"", "\"1.0\"" } } },
	/* Strings with NUL bytes compare by every byte. */
	{ "{\"t\":\"a\\u0000b\"}", "{\"t\":\"a\\u0000c\"}", { NULL }, 1, {
	    { "$.t", "\"a\\u0000b\"", "\"a\\u0000c\"" } } },
};

/* Each difference is reported once, where the sides part, with both. */
Test(diff, differ, .timeout = UNIT_TIMEOUT)
{
	diff_test_table("differ", diff_differ_cases,
	    nitems(diff_differ_cases), NULL);
}

/* Differences are appended to what out holds, and counted alone. */
Test(diff, appends, .timeout = UNIT_TIMEOUT)
{
	struct diff	 d = { NULL, 0, NULL, 0 };
	json_t		*a = diff_test_json("{\"a\":1,\"b\":2}");
	json_t		*b = diff_test_json("{\"a\":2,\"b\":3}");

	cr_assert_eq(diff_messages(a, b, NULL, &d), 2);
	cr_assert_eq(diff_messages(a, a, NULL, &d), 0);
	cr_assert_eq(diff_messages(b, a, NULL, &d), 2);
	cr_assert_eq(d.n, 4);
	cr_expect_str_eq(d.v[2].path, "$.a");
	cr_expect_eq(json_integer_value(d.v[2].recorded), 2);

	/* An absent message differs whole. */
	cr_assert_eq(diff_messages(a, NULL, NULL, &d), 1);
	cr_expect_str_eq(d.v[4].path, "$");
	cr_expect_null(d.v[4].replayed);
	cr_expect(json_equal(d.v[4].recorded, a));
	cr_assert_eq(diff_messages(NULL, NULL, NULL, &d), 0);
	json_decref(a);
	json_decref(b);
	diff_clear(&d);
}

static const struct diff_case diff_ignore_cases[] = {
	/* A key path. */
	{ "{\"a\":{\"b\":1,\"c\":1}}", "{\"a\":{\"b\":2,\"c\":1}}",
	    { "$.a.b" }, 0, DIFF_NONE },
	{ "{\"a\":{\"b\":1,\"c\":1}}", "{\"a\":{\"b\":2,\"c\":2}}",
	    { "$.a.b" }, 1, { { "$.a.c", "1", "2" } } },
	/* A missing key is skipped too, on either side. */
	{ "{\"a\":{\"b\":1}}", "{\"a\":{}}", { "$.a.b" }, 0, DIFF_NONE },
	{ "{\"a\":{}}", "{\"a\":{\"b\":1}}", { "$.a.b" }, 0, DIFF_NONE },
	/* Any index. */
	{ "{\"items\":[{\"ts\":1,\"v\":1},{\"ts\":2,\"v\":2}]}",
	    "{\"items\":[{\"ts\":8,\"v\":1},{\"ts\":9,\"v\":2}]}",
	    { "$.items[*].ts" }, 0, DIFF_NONE },
	{ "{\"items\":[{\"ts\":1,\"v\":1},{\"ts\":2,\"v\":2}]}",
	    "{\"items\":[{\"ts\":8,\"v\":1},{\"ts\":9,\"v\":3}]}",
	    { "$.items[*].ts" }, 1, { { "$.items[1].v", "2", "3" } } },
	/* One index only. */
	{ "{\"items\":[1,2,3]}", "{\"items\":[5,6,3]}", { "$.items[1]" }, 1,
	    { { "$.items[0]", "1", "5" } } },
	/* An extra element that is ignored is no difference. */
	{ "{\"items\":[1,2]}", "{\"items\":[1,2,3]}", { "$.items[2]" }, 0,
	    DIFF_NONE },
	/* Descendants, at any depth. */
	{ "{\"ts\":1,\"a\":{\"ts\":2,\"b\":[{\"ts\":3}]}}",
	    "{\"ts\":4,\"a\":{\"ts\":5,\"b\":[{\"ts\":6}]}}", { "$..ts" }, 0,
	    DIFF_NONE },
	{ "{\"ts\":1,\"a\":{\"ts\":2,\"b\":[{\"ts\":3,\"x\":1}]}}",
	    "{\"ts\":4,\"a\":{\"ts\":5,\"b\":[{\"ts\":6,\"x\":2}]}}",
	    { "$..ts" }, 1, { { "$.a.b[0].x", "1", "2" } } },
	/* Any key. */
	{ "{\"result\":{\"p\":{\"ts\":1},\"q\":{\"ts\":2},\"r\":1}}",
	    "{\"result\":{\"p\":{\"ts\":3},\"q\":{\"ts\":4},\"r\":2}}",
	    { "$.result.*.ts" }, 1, { { "$.result.r", "1", "2" } } },
	/* An ancestor skips everything below it. */
	{ "{\"result\":{\"a\":1,\"b\":[1,2],\"c\":{\"d\":\"x\"}},\"k\":1}",
	    "{\"result\":{\"a\":2,\"b\":[3],\"e\":1},\"k\":1}",
	    { "$.result" }, 0, DIFF_NONE },
	{ "{\"a\":[{\"b\":1},{\"b\":2}]}", "{\"a\":[{\"b\":5},{\"b\":6,"
	    "\"c\":1}]}", { "$.a[*]" }, 0, DIFF_NONE },
	/* "$" skips it all. */
	{ "{\"a\":1}", "[2]", { "$" }, 0, DIFF_NONE },
	/* A pattern that matches nothing changes nothing. */
	{ "{\"a\":{\"b\":1}}", "{\"a\":{\"b\":2}}",
	    { "$.nope", "$.a.b.c", "$.a[*]" }, 1, { { "$.a.b", "1", "2" } } },
	{ "{\"a\":[1]}", "{\"a\":[2]}", { "$.a.*", "$.a[1]" }, 1, {
	    { "$.a[0]", "1", "2" } } },
	/* Inside JSON held by a string. */
	{ "{\"text\":\"{\\\"ts\\\":1,\\\"v\\\":1}\"}",
	    "{\"text\":\"{\\\"ts\\\":2,\\\"v\\\":1}\"}",
	    { "$.text{json}.ts" }, 0, DIFF_NONE },
	{ "{\"text\":\"{\\\"ts\\\":1,\\\"v\\\":1}\"}",
	    "{\"text\":\"{\\\"ts\\\":2,\\\"v\\\":2}\"}",
	    { "$..ts" }, 1, { { "$.text{json}.v", "1", "2" } } },
	/* Ignoring the string ignores the JSON in it. */
	{ "{\"text\":\"{\\\"ts\\\":1}\"}", "{\"text\":\"{\\\"ts\\\":2}\"}",
	    { "$.text" }, 0, DIFF_NONE },
	/* Several patterns together. */
	{ "{\"a\":1,\"b\":2,\"c\":3}", "{\"a\":4,\"b\":5,\"c\":6}",
	    { "$.a", "$['c']" }, 1, { { "$.b", "2", "5" } } },
};

/* Ignored places are skipped with everything under them. */
Test(diff, ignore, .timeout = UNIT_TIMEOUT)
{
	diff_test_table("ignore", diff_ignore_cases,
	    nitems(diff_ignore_cases), NULL);
}

static const struct diff_case diff_default_cases[] = {
	/* The id: replay sends its own. */
	{ "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}",
	    "{\"jsonrpc\":\"2.0\",\"id\":\"abc\",\"result\":{}}", { NULL }, 0,
	    DIFF_NONE },
	/* Progress tokens and trace context at any depth. */
	{ "{\"id\":1,\"params\":{\"_meta\":{\"progressToken\":7}},"
	    "\"result\":{\"content\":[{\"_meta\":{\"progressToken\":\"p1\","
	    "\"traceparent\":\"00-a-b-01\",\"tracestate\":\"x=1\","
	    "\"baggage\":\"k=v\"}}]}}",
	  "{\"id\":2,\"params\":{\"_meta\":{\"progressToken\":8}},"
	    "\"result\":{\"content\":[{\"_meta\":{\"progressToken\":\"p2\","
	    "\"traceparent\":\"00-c-d-01\",\"tracestate\":\"x=2\","
	    "\"baggage\":\"k=w\"}}]}}", { NULL }, 0, DIFF_NONE },
	/* Not other _meta keys, not the version, not progressToken alone. */
	{ "{\"jsonrpc\":\"2.0\",\"params\":{\"_meta\":{\"other\":1},"
	    "\"progressToken\":1}}",
	  "{\"jsonrpc\":\"1.0\",\"params\":{\"_meta\":{\"other\":2},"
	    "\"progressToken\":2}}", { NULL }, 3, {
	    { "$.jsonrpc", "\"2.0\"", "\"1.0\"" },
	    { "$.params._meta.other", "1", "2" },
	    { "$.params.progressToken", "1", "2" } } },
	/* Only the top-level id. */
	{ "{\"id\":1,\"result\":{\"id\":1}}",
	    "{\"id\":2,\"result\":{\"id\":2}}",
	    { NULL }, 1, { { "$.result.id", "1", "2" } } },
};

static const struct diff_case diff_no_default_cases[] = {
	{ "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}",
	    "{\"jsonrpc\":\"2.0\",\"id\":\"abc\",\"result\":{}}", { NULL }, 1, {
	    { "$.id", "1", "\"abc\"" } } },
	{ "{\"params\":{\"_meta\":{\"progressToken\":7}},"
	    "\"result\":{\"content\":[{\"_meta\":{\"progressToken\":\"p1\","
	    "\"traceparent\":\"00-a-b-01\",\"baggage\":\"k=v\"}}]}}",
	  "{\"params\":{\"_meta\":{\"progressToken\":8}},"
	    "\"result\":{\"content\":[{\"_meta\":{\"progressToken\":\"p2\","
	    "\"traceparent\":\"00-c-d-01\",\"baggage\":\"k=w\"}}]}}",
	  { NULL }, 4, {
	    { "$.params._meta.progressToken", "7", "8" },
	    { "$.result.content[0]._meta.progressToken", "\"p1\"", "\"p2\"" },
	    { "$.result.content[0]._meta.traceparent", "\"00-a-b-01\"",
	      "\"00-c-d-01\"" },
	    { "$.result.content[0]._meta.baggage", "\"k=v\"", "\"k=w\"" } } },
	/* The user's own ignores still apply. */
	{ "{\"id\":1,\"a\":1}", "{\"id\":2,\"a\":2}", { "$.a" }, 1, {
	    { "$.id", "1", "2" } } },
};

/* The default ignores apply unless the rules drop them. */
Test(diff, defaults, .timeout = UNIT_TIMEOUT)
{
	struct diff_rules	rules;

	rules_init(&rules);
	diff_test_table("defaults", diff_default_cases,
	    nitems(diff_default_cases), &rules);
	rules.no_defaults = 1;
	diff_test_table("no_defaults", diff_no_default_cases,
	    nitems(diff_no_default_cases), &rules);
	rules_clear(&rules);
}

/* No rules at all means the defaults. */
Test(diff, null_rules, .timeout = UNIT_TIMEOUT)
{
	struct diff	 d = { NULL, 0, NULL, 0 };
	json_t		*a, *b;

	a = diff_test_json("{\"id\":1,\"params\":{\"_meta\":"
	    "{\"progressToken\":1}}}");
	b = diff_test_json("{\"id\":2,\"params\":{\"_meta\":"
	    "{\"progressToken\":2}}}");

	cr_expect_eq(diff_messages(a, b, NULL, &d), 0);
	cr_expect_eq(d.n, 0);
	json_decref(a);
	json_decref(b);
	diff_clear(&d);
}

/* A substitution rule: regex, replacement. */
struct diff_subst_rule {
	const char	*regex;
	const char	*with;
};

struct diff_subst_case {
	struct diff_subst_rule	 rule[2];
	const char		*recorded;
	const char		*replayed;
	size_t			 want;		/* differences */
};

#define DIFF_TIME_RE	"[0-9]{1,2}:[0-9]{2}:[0-9]{2} (AM|PM)"

static const struct diff_subst_case diff_subst_cases[] = {
	/* A clock time, normalised, no longer differs... */
	{ { { DIFF_TIME_RE, "<time>" } },
	    "{\"result\":{\"content\":[{\"type\":\"text\","
	    "\"text\":\"The time is 4:19:05 PM.\"}]}}",
	    "{\"result\":{\"content\":[{\"type\":\"text\","
	    "\"text\":\"The time is 11:02:59 AM.\"}]}}", 0 },
	/* ... but did without the rule, */
	{ { { NULL } },
	    "{\"text\":\"The time is 4:19:05 PM.\"}",
	    "{\"text\":\"The time is 11:02:59 AM.\"}", 1 },
	/* and what is around it still counts. */
	{ { { DIFF_TIME_RE, "<time>" } },
	    "{\"text\":\"The time is 4:19:05 PM.\"}",
	    "{\"text\":\"The time was 4:19:06 PM.\"}", 1 },
	/* Every match is replaced, not only the first. */
	{ { { DIFF_TIME_RE, "<time>" } },
	    "{\"text\":\"from 1:00:00 PM to 2:00:00 PM\"}",
	    "{\"text\":\"from 3:00:00 AM to 4:30:00 AM\"}", 0 },
	/* Strings inside JSON held by a string are normalised too. */
	{ { { DIFF_TIME_RE, "<time>" } },
	    "{\"text\":\"{\\\"now\\\":\\\"4:19:05 PM\\\",\\\"n\\\":1}\"}",
	    "{\"text\":\"{\\\"n\\\":1,\\\"now\\\":\\\"9:00:00 AM\\\"}\"}", 0 },
	/* Rules apply in order, each to what the last made. */
	{ { { "a", "b" }, { "b", "c" } }, "{\"s\":\"a\"}", "{\"s\":\"c\"}", 0 },
	{ { { "b", "c" }, { "a", "b" } }, "{\"s\":\"a\"}", "{\"s\":\"c\"}", 1 },
	/* Groups in the replacement. */
	{ { { "([0-9]+)ms", "\\1 ms" } },
	    "{\"s\":\"took 15ms\"}", "{\"s\":\"took 15 ms\"}", 0 },
	{ { { "([0-9]+)ms", "\\1 ms" } },
	    "{\"s\":\"took 15ms\"}", "{\"s\":\"took 16 ms\"}", 1 },
	{ { { "^([0-9]+)(s)?", "n\\0:\\2:\\1" } },
	    "{\"s\":\"12s a\"}", "{\"s\":\"n12s:s:12 a\"}", 0 },
	{ { { "^([0-9]+)(s)?", "n\\0:\\2:\\1" } },
	    "{\"s\":\"12 a\"}", "{\"s\":\"n12::12 a\"}", 0 },
	{ { { "^([0-9]+)(s)?", "n\\0:\\2:\\1" } },
	    "{\"s\":\"12 a\"}", "{\"s\":\"n12:12 a\"}", 1 },
	/* \\ in a replacement is one backslash. */
	{ { { "/", "\\\\" } },
	    "{\"s\":\"a\\\\b\"}", "{\"s\":\"a/b\"}", 0 },
	/* Empty matches neither hang nor eat text. */
	{ { { "z*", "" } }, "{\"s\":\"azzbz\"}", "{\"s\":\"ab\"}", 0 },
	{ { { "z*", "" } }, "{\"s\":\"azzbz\"}", "{\"s\":\"abc\"}", 1 },
	{ { { "z*", "-" } }, "{\"s\":\"\"}", "{\"s\":\"q\"}", 1 },
	/* ... and, as in sed, none is taken right after a match. */
	{ { { "b*", "-" } }, "{\"s\":\"abc\"}", "{\"s\":\"ac\"}", 0 },
	/* ^ is the start of the string only. */
	{ { { "^x", "" } }, "{\"s\":\"xxa\"}", "{\"s\":\"xa\"}", 1 },
	{ { { "^x", "" } }, "{\"s\":\"xa\"}", "{\"s\":\"a\"}", 0 },
	/* Numbers and keys are not strings to rewrite. */
	{ { { "[0-9]", "N" } }, "{\"n\":1,\"k1\":\"a\"}",
	    "{\"n\":2,\"k2\":\"a\"}", 3 },
};

/* Substitutions rewrite both sides' strings before they are compared. */
Test(diff, subst, .timeout = UNIT_TIMEOUT)
{
	const struct diff_subst_case	*c;
	struct diff_rules		 rules;
	struct diff			 d = { NULL, 0, NULL, 0 };
	json_t				*a, *b;
	char				*cause = NULL;
	size_t				 i, j;

	for (i = 0; i < nitems(diff_subst_cases); i++) {
		c = &diff_subst_cases[i];
		rules_init(&rules);
		for (j = 0; j < nitems(c->rule) && c->rule[j].regex != NULL;
		    j++) {
			cr_assert_eq(rules_add_subst(&rules,
			    c->rule[j].regex, c->rule[j].with, &cause), 0,
			    "case %zu: %s", i, cause);
		}
		a = diff_test_json(c->recorded);
		b = diff_test_json(c->replayed);
		cr_expect_eq(diff_messages(a, b, &rules, &d), c->want,
		    "case %zu: %zu differences, want %zu%s%s", i, d.n, c->want,
		    d.n > 0 ? "; first at " : "", d.n > 0 ? d.v[0].path : "");
		diff_clear(&d);
		json_decref(a);
		json_decref(b);
		rules_clear(&rules);
	}
}

/* An entry holds the strings as they were, not as normalised. */
Test(diff, subst_keeps_originals, .timeout = UNIT_TIMEOUT)
{
	struct diff_rules	 rules;
	struct diff		 d = { NULL, 0, NULL, 0 };
	json_t			*a, *b;
	char			*cause = NULL;

	rules_init(&rules);
	cr_assert_eq(rules_add_subst(&rules, DIFF_TIME_RE, "<time>",
	    &cause), 0, "%s", cause);
	a = diff_test_json("{\"t\":\"at 4:19:05 PM: ok\"}");
	b = diff_test_json("{\"t\":\"at 5:00:00 PM: fail\"}");
	cr_assert_eq(diff_messages(a, b, &rules, &d), 1);
	cr_expect_str_eq(json_string_value(d.v[0].recorded),
	    "at 4:19:05 PM: ok");
	cr_expect_str_eq(json_string_value(d.v[0].replayed),
	    "at 5:00:00 PM: fail");
	diff_clear(&d);
	json_decref(a);
	json_decref(b);
	rules_clear(&rules);
}

struct diff_bad_subst {
	const char	*regex;
	const char	*with;
	const char	*want;		/* fragments of the error */
	const char	*want2;
};

static const struct diff_bad_subst diff_bad_substs[] = {
	{ "(", "", "bad regex '(': ", "(" },
	{ "a{2,1}", "", "bad regex 'a{2,1}': ", "" },
	{ "[z-a]", "", "bad regex '[z-a]': ", "" },
	{ "(a)", "\\2", "bad replacement '\\2' for regex '(a)'",
	    "\\2 but the regex has 1 group" },
	{ "a", "\\1", "bad replacement", "\\1 but the regex has 0 groups" },
	{ "a", "\\q", "bad replacement '\\q'", "must be followed by a digit" },
	{ "a", "x\\", "bad replacement 'x\\'", "must be followed by a digit" },
};

/* A bad regex or replacement is refused with what regcomp said. */
Test(diff, subst_errors, .timeout = UNIT_TIMEOUT)
{
	const struct diff_bad_subst	*c;
	struct diff_rules		 rules;
	char				*cause;
	size_t				 i;

	rules_init(&rules);
	for (i = 0; i < nitems(diff_bad_substs); i++) {
		c = &diff_bad_substs[i];
		cause = NULL;
		cr_assert_eq(rules_add_subst(&rules, c->regex, c->with,
		    &cause), -1, "'%s' -> '%s' accepted", c->regex, c->with);
		cr_assert_not_null(cause);
		cr_expect(strstr(cause, c->want) != NULL,
		    "cause \"%s\" lacks \"%s\"", cause, c->want);
		cr_expect(strstr(cause, c->want2) != NULL,
		    "cause \"%s\" lacks \"%s\"", cause, c->want2);
		/* regerror said something after the colon. */
		cr_expect(strlen(cause) > strlen(c->want) + 2, "%s", cause);
		free(cause);
	}
	cr_expect_eq(rules.nsubst, 0);
	rules_clear(&rules);
}

/* A bad ignore pattern is refused and leaves the rules as they were. */
Test(diff, ignore_errors, .timeout = UNIT_TIMEOUT)
{
	struct diff_rules	 rules;
	char			*cause = NULL;

	rules_init(&rules);
	cr_assert_eq(rules_add_ignore(&rules, "$.a", &cause), 0);
	cr_assert_eq(rules_add_ignore(&rules, "$.a[", &cause), -1);
	cr_assert_not_null(cause);
	cr_expect(strstr(cause, "bad JSONPath '$.a[': unclosed [ at 3") !=
	    NULL, "%s", cause);
	free(cause);
	cr_expect_eq(rules.nignore, 1);
	rules_clear(&rules);
	cr_expect_eq(rules.nignore, 0);
	cr_expect_null(rules.ignore);
}

/* Methods named in the rules (globs) are the ones skipped. */
Test(diff, methods, .timeout = UNIT_TIMEOUT)
{
	struct diff_rules	rules;
	char			*cause = NULL;

	rules_init(&rules);
	cr_expect(!rules_skips(&rules, diff_test_req("ping", NULL)));
	cr_assert_eq(rules_add_skip(&rules, "method", "ping",
	    "--ignore-method", &cause), 0);
	cr_assert_eq(rules_add_skip(&rules, "method", "tools/list",
	    "--ignore-method", &cause), 0);
	cr_assert_eq(rules_add_skip(&rules, "method",
	    "resources/templates/*", "--ignore-method", &cause), 0);
	cr_expect(rules_skips(&rules, diff_test_req("ping", NULL)));
	cr_expect(rules_skips(&rules, diff_test_req("tools/list",
	    NULL)));
	cr_expect(rules_skips(&rules, diff_test_req(
	    "resources/templates/list", NULL)));
	cr_expect(!rules_skips(&rules, diff_test_req("tools/call",
	    "{\"name\":\"ping\"}")));
	cr_expect(!rules_skips(&rules, diff_test_req("pin", NULL)));
	cr_expect(!rules_skips(&rules, NULL));
	cr_expect(!rules_skips(NULL, diff_test_req("ping", NULL)));
	cr_expect_eq(rules.skip[0].r.used, 1, "a skipped answer is a use");
	cr_expect_eq(rules.skip[1].r.used, 1);
	cr_expect_eq(rules.skip[2].r.used, 1);
	rules_clear(&rules);
	cr_expect(!rules_skips(&rules, diff_test_req("ping", NULL)));
	diff_test_reqs_free();
}

/* The directory of a rules-file test, removed after it. */
static char	diff_dir[64];

/* Make a fresh private directory for one test. */
static void
diff_dir_setup(void)
{
	snprintf(diff_dir, sizeof diff_dir, "/tmp/mcpreel-unit-XXXXXX");
	cr_assert_not_null(mkdtemp(diff_dir), "mkdtemp failed");
}

/* Remove the test's directory and the rules files in it. */
static void
diff_dir_teardown(void)
{
	char	path[128];
	int	i;

	if (diff_dir[0] == '\0')
		return;
	for (i = 0; i < 32; i++) {
		snprintf(path, sizeof path, "%s/rules%d.json", diff_dir, i);
		unlink(path);
	}
	rmdir(diff_dir);
}

/* Write a rules file numbered n; the caller frees the path. */
static char *
diff_test_file(int n, const char *text)
{
	char	*path;
	FILE	*f;

	xasprintf(&path, "%s/rules%d.json", diff_dir, n);
	cr_assert_not_null(f = fopen(path, "w"), "cannot write %s", path);
	cr_assert_eq(fputs(text, f) >= 0, 1);
	cr_assert_eq(fclose(f), 0);
	return path;
}

/* A good rules file adds every kind of rule, and they take effect. */
Test(diff, load_good, .init = diff_dir_setup, .fini = diff_dir_teardown,
    .timeout = UNIT_TIMEOUT)
{
	struct diff_rules	 rules;
	struct diff		 d = { NULL, 0, NULL, 0 };
	json_t			*a, *b;
	char			*path, *path2, *cause = NULL;

	path = diff_test_file(0, "{\n"
	    "  \"ignore\": [\"$.result.ts\", \"$..nonce\"],\n"
	    "  \"ignore_methods\": [\"ping\"],\n"
	    "  \"normalize\": [{\"regex\": \"[0-9]+\", \"replace\": \"N\"},\n"
	    "                {\"regex\": \"-+\"}],\n"
	    "  \"defaults\": false\n"
	    "}\n");
	rules_init(&rules);
	cr_assert_eq(rules_load(&rules, path, &cause), 0, "%s", cause);
	cr_expect_eq(rules.nignore, 2);
	cr_expect_str_eq(jpath_text(rules.ignore[1].path), "$..nonce");
	cr_expect_eq(rules.nskip, 1);
	cr_expect(rules_skips(&rules, diff_test_req("ping", NULL)));
	cr_assert_eq(rules.nsubst, 2);
	cr_expect_str_eq(rules.subst[0].regex, "[0-9]+");
	cr_expect_str_eq(rules.subst[0].with, "N");
	cr_expect_str_eq(rules.subst[1].with, "");
	cr_expect_eq(rules.no_defaults, 1);

	/* The file's ignores and substitutions apply; the defaults do not. */
	a = diff_test_json("{\"id\":1,\"result\":{\"ts\":1,\"nonce\":\"a\","
	    "\"msg\":\"run 12 -- ok\"}}");
	b = diff_test_json("{\"id\":2,\"result\":{\"ts\":2,\"nonce\":\"b\","
	    "\"msg\":\"run 345 - ok\"}}");
	cr_expect_eq(diff_messages(a, b, &rules, &d), 1);
	cr_assert_eq(d.n, 1);
	cr_expect_str_eq(d.v[0].path, "$.id");
	diff_clear(&d);
	json_decref(a);
	json_decref(b);

	/* A second file adds to the first, and can turn defaults back on. */
	path2 = diff_test_file(1,
	    "{\"ignore\": [\"$.x\"], \"defaults\": true}");
	cr_assert_eq(rules_load(&rules, path2, &cause), 0, "%s", cause);
	cr_expect_eq(rules.nignore, 3);
	cr_expect_eq(rules.nsubst, 2);
	cr_expect_eq(rules.no_defaults, 0);

	/* An empty object changes nothing. */
	free(path2);
	path2 = diff_test_file(2, "{}");
	cr_assert_eq(rules_load(&rules, path2, &cause), 0, "%s", cause);
	cr_expect_eq(rules.nignore, 3);
	cr_expect_eq(rules.no_defaults, 0);

	rules_clear(&rules);
	diff_test_reqs_free();
	free(path);
	free(path2);
}

struct diff_bad_file {
	const char	*text;
	const char	*want;		/* a fragment of the error */
};

static const struct diff_bad_file diff_bad_files[] = {
	{ "{\"ignores\": []}", "unknown key \"ignores\"" },
	{ "{\"ignore\": [\"$.a\"], \"defaults\": true, \"extra\": 1}",
	    "unknown key \"extra\" (expected ignore, ignore_methods, "
	    "ignore_tools, ignore_prompts, ignore_resources, normalize, "
	    "defaults)" },
	{ "{\"ignore\": \"$.a\"}", "\"ignore\" must be an array" },
	{ "{\"ignore\": [\"$.a\", 1]}",
	    "\"ignore\"[1] must be a path or an object with \"path\"" },
	{ "{\"ignore\": [{\"path\": \"$.a\", \"tol\": \"x\"}]}",
	    "unknown key \"tol\" in \"ignore\"[0] (expected path, method, "
	    "tool, prompt, resource)" },
	{ "{\"ignore\": [{\"path\": \"$.a\", \"tool\": 1}]}",
	    "\"ignore\"[0].tool must be a string" },
	{ "{\"ignore\": [{\"path\": \"$.a\", \"tool\": \"a\", "
	    "\"prompt\": \"b\"}]}", "cannot go with" },
	{ "{\"ignore\": [{\"path\": \"$.a\", \"method\": \"prompts/*\", "
	    "\"tool\": \"a\"}]}",
	    "method=prompts/* cannot go with tool= (which is for tools/call" },
	{ "{\"ignore\": [{\"tool\": \"a\"}]}",
	    "\"ignore\"[0] must be a path or an object with \"path\"" },
	{ "{\"ignore_tools\": [\"\"]}", "scope tool= needs a value" },
	{ "{\"ignore\": [{\"path\": \"$.a\", \"\": \"x\"}]}",
	    "unknown key \"\" in \"ignore\"[0]" },
	{ "{\"normalize\": [{\"regex\": \"a\", \"replac\": \"x\"}]}",
	    "unknown key \"replac\" in \"normalize\"[0]" },
	{ "{\"ignore_prompts\": \"a\"}",
	    "\"ignore_prompts\" must be an array of strings" },
	{ "{\"normalize\": [{\"regex\": \"a\", \"uri\": \"b\"}]}",
	    "unknown key \"uri\" in \"normalize\"[0] (expected regex, "
	    "replace, method" },
	{ "{\"ignore_methods\": {}}",
	    "\"ignore_methods\" must be an array of strings" },
	{ "{\"ignore_methods\": [null]}",
	    "\"ignore_methods\" must be an array of strings" },
	{ "{\"normalize\": {}}", "\"normalize\" must be an array" },
	{ "{\"normalize\": [\"x\"]}", "\"normalize\"[0] must be an object" },
	{ "{\"normalize\": [{\"regex\": 1}]}",
	    "\"normalize\"[0].regex must be a string" },
	{ "{\"normalize\": [{\"regex\": \"a\"}, {\"regex\": \"b\", "
	    "\"replace\": false}]}",
	    "\"normalize\"[1].replace must be a string" },
	{ "{\"normalize\": [{\"replace\": \"x\"}]}",
	    "\"normalize\"[0] has no \"regex\"" },
	{ "{\"normalize\": [{\"regex\": \"a\", \"with\": \"b\"}]}",
	    "unknown key \"with\" in \"normalize\"[0]" },
	{ "{\"normalize\": [{\"regex\": \"(\"}]}",
	    "\"normalize\"[0]: bad regex '('" },
	{ "{\"defaults\": \"yes\"}", "\"defaults\" must be true or false" },
	{ "{\"defaults\": 0}", "\"defaults\" must be true or false" },
	{ "{\"ignore\": [\"$.a\", \"$.b[\"]}",
	    "\"ignore\"[1]: bad JSONPath '$.b[': unclosed [ at 3" },
	{ "[]", "expected a JSON object" },
	{ "\"ignore\"", "is not valid JSON" },
	{ "{\n  \"ignore\": [1,,]\n}\n", "(line 2, column " },
	{ "{\"ignore\": []", "is not valid JSON" },
	{ "", "is not valid JSON" },
};

/*
 * A bad rules file is refused with its path and what is wrong in it, and
 * leaves the rules as they were, even when part of it was good.
 */
Test(diff, load_errors, .init = diff_dir_setup, .fini = diff_dir_teardown,
    .timeout = UNIT_TIMEOUT)
{
	const struct diff_bad_file	*c;
	struct diff_rules		 rules;
	char				*path, *cause;
	size_t				 i;

	rules_init(&rules);
	for (i = 0; i < nitems(diff_bad_files); i++) {
		c = &diff_bad_files[i];
		path = diff_test_file((int)i, c->text);
		cause = NULL;
		cr_assert_eq(rules_load(&rules, path, &cause), -1,
		    "case %zu accepted", i);
		cr_assert_not_null(cause);
		cr_expect(strstr(cause, c->want) != NULL,
		    "case %zu: cause \"%s\" lacks \"%s\"", i, cause, c->want);
		cr_expect(strstr(cause, path) != NULL,
		    "case %zu: cause \"%s\" lacks the path", i, cause);
		free(cause);
		free(path);
		cr_expect_eq(rules.nignore, 0, "case %zu", i);
		cr_expect_eq(rules.nskip, 0, "case %zu", i);
		cr_expect_eq(rules.nsubst, 0, "case %zu", i);
		cr_expect_eq(rules.no_defaults, 0, "case %zu", i);
	}
	rules_clear(&rules);
}

/* A rules file that is not there is named with the system's reason. */
Test(diff, load_missing, .init = diff_dir_setup, .fini = diff_dir_teardown,
    .timeout = UNIT_TIMEOUT)
{
	struct diff_rules	 rules;
	char			*path, *cause = NULL;

	xasprintf(&path, "%s/no-such-rules.json", diff_dir);
	rules_init(&rules);
	cr_assert_eq(rules_load(&rules, path, &cause), -1);
	cr_assert_not_null(cause);
	cr_expect(strstr(cause, path) != NULL, "%s", cause);
	cr_expect(strstr(cause, "No such file or directory") != NULL, "%s",
	    cause);
	free(cause);
	free(path);
	rules_clear(&rules);
}
