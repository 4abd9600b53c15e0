/*
 * Unit tests for the mock's matcher: canonical keys, repeats, strict
 * order, ignore paths, where the server's own messages are played, and
 * the errors that explain a live request nothing matches.
 */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include "replay.h"
#include "unit.h"

#define nitems(a)	(sizeof (a) / sizeof (a)[0])

/* Most items a list of the attribution test holds. */
#define MATCH_TEST_ITEMS	4

/* A recorded message; its JSON is written with ' for ". */
struct rec {
	enum dir	 dir;
	int64_t		 mono_ns;
	const char	*text;
};

/* JSON text written with ' for " made real (the caller frees it). */
static char *
match_test_text(const char *text)
{
	char	*s = xstrdup(text), *p;

	for (p = s; *p != '\0'; p++) {
		if (*p == '\'')
			*p = '"';
	}
	return s;
}

/* Parse JSON written with ' for ", failing the test if it is not JSON. */
static json_t *
match_test_json(const char *text)
{
	json_error_t	 err;
	json_t		*v;
	char		*s = match_test_text(text);

	v = json_loads(s, 0, &err);
	cr_assert_not_null(v, "bad test JSON %s: %s", s, err.text);
	free(s);
	return v;
}

/* Build a plan from recorded messages; seq is the position from 1. */
static void
match_test_plan(struct plan *p, const struct rec *recs, size_t n)
{
	size_t	 i;
	char	*s;

	memset(p, 0, sizeof *p);
	for (i = 0; i < n; i++) {
		s = match_test_text(recs[i].text);
		plan_add(p, (int64_t)i + 1, recs[i].dir, recs[i].mono_ns, s,
		    strlen(s));
		free(s);
	}
	plan_build(p);
}

/* Build a matcher that must build. */
static void
match_test_build(struct matcher *m, const struct plan *p, int strict,
    const char *const *ignore, size_t nignore)
{
	struct diff_rules	 rules;
	char			*cause = NULL;
	size_t			 i;

	rules_init(&rules);
	for (i = 0; i < nignore; i++)
		cr_assert_eq(rules_add_ignore(&rules, ignore[i], &cause),
		    0, "ignore %s: %s", ignore[i], cause);
	matcher_build(m, p, strict, &rules);
	cr_assert_eq(rules.nignore, 0, "the matcher took the rules over");
}

/* Find the entry for a live request written with ' for ". */
static const struct mentry *
match_test_find(struct matcher *m, const char *text)
{
	const struct mentry	*e;
	json_t			*msg = match_test_json(text);

	e = matcher_find(m, msg);
	json_decref(msg);
	return e;
}

/* The miss error for a live request written with ' for ". */
static json_t *
match_test_miss(const struct matcher *m, const char *text)
{
	json_t	*msg = match_test_json(text), *error;

	error = matcher_miss(m, msg);
	json_decref(msg);
	cr_assert_not_null(error);
	return error;
}

/* The entry of the differences list with this path, or NULL. */
static json_t *
match_test_difference(json_t *error, const char *path)
{
	json_t	*list, *one;
	size_t	 i;

	list = json_object_get(json_object_get(error, "data"), "differences");
	cr_assert(json_is_array(list), "data.differences is an array");
	json_array_foreach(list, i, one) {
		if (strcmp(json_string_value(json_object_get(one, "path")),
		    path) == 0)
			return one;
	}
	return NULL;
}

/* Whether a JSON value equals JSON written with ' for ". */
static int
match_test_equal(json_t *got, const char *want)
{
	json_t	*v = match_test_json(want);
	int	 same;

	same = got != NULL && json_equal(got, v);
	json_decref(v);
	return same;
}

#define REQ(id, m, params) \
	"{'jsonrpc':'2.0','id':" #id ",'method':'" m "','params':" params "}"
#define REQ0(id, m)	"{'jsonrpc':'2.0','id':" #id ",'method':'" m "'}"
#define RESP(id)	"{'jsonrpc':'2.0','id':" #id ",'result':{}}"
#define RESULT(id, r)	"{'jsonrpc':'2.0','id':" #id ",'result':" r "}"
#define NOTE(m)		"{'jsonrpc':'2.0','method':'" m "'}"
#define PROGRESS(tok)	"{'jsonrpc':'2.0'," \
			"'method':'notifications/progress'," \
			"'params':{'progressToken':" tok ",'progress':1}}"

/* One canonical-params case: recorded and live params (NULL: none). */
struct match_canon_case {
	const char	*recorded;
	const char	*live;
	int		 match;
	const char	*why;
};

Test(match, canonical_params, .timeout = UNIT_TIMEOUT)
{
	static const struct match_canon_case cases[] = {
		{ "{'b':1,'a':2}", "{'a':2,'b':1}", 1, "key order" },
		{ "{'x':{'b':[1,{'d':1,'c':2}],'a':null}}",
		  "{'x':{'a':null,'b':[1,{'c':2,'d':1}]}}", 1,
		  "nested key order" },
		{ "{'n':1}", "{'n':1.0}", 1, "1.0 is 1" },
		{ "{'n':1e0}", "{'n':1}", 1, "1e0 is 1" },
		{ "{'n':-0.0}", "{'n':0}", 1, "-0.0 is 0" },
		{ "{'n':1.5}", "{'n':15e-1}", 1, "1.5 spelled two ways" },
		{ "{'n':1.5}", "{'n':1.25}", 0, "other reals" },
		{ "{'n':1}", "{'n':2}", 0, "other integers" },
		{ "{'n':1}", "{'n':'1'}", 0, "a string is not a number" },
		{ "{'n':null}", "{'n':false}", 0, "null is not false" },
		{ "{'s':'x'}", "{'s':'X'}", 0, "strings are compared exactly" },
		{ "{'a':[1,2]}", "{'a':[2,1]}", 0, "array order counts" },
		{ "{'a':1}", "{'a':1,'b':2}", 0, "an extra key" },
		{ "{'a':1}", NULL, 0, "params against none" },
		{ "{'a':1,'_meta':{'progressToken':7}}",
		  "{'a':1,'_meta':{'progressToken':8}}", 1,
		  "progress tokens differ" },
		{ "{'a':1,'_meta':{'progressToken':7}}", "{'a':1}", 1,
		  "_meta on one side only" },
		{ "{'a':{'_meta':{'x':1},'b':[{'_meta':2,'c':3}]}}",
		  "{'a':{'b':[{'c':3}]}}", 1, "_meta at any depth" },
		{ NULL, "{}", 1, "no params is empty params" },
		{ NULL, "{'_meta':{'progressToken':1}}", 1,
		  "params with only _meta is none" },
		{ "null", NULL, 1, "null params is none" },
	};
	const struct match_canon_case	*c;
	struct plan			 p;
	struct matcher			 m;
	struct rec			 recs[2];
	char				*req, *live;
	size_t				 i;

	for (i = 0; i < nitems(cases); i++) {
		c = &cases[i];
		if (c->recorded != NULL)
			xasprintf(&req, REQ(1, "tools/call", "%s"),
			    c->recorded);
		else
			req = xstrdup(REQ0(1, "tools/call"));
		if (c->live != NULL)
			xasprintf(&live, REQ(99, "tools/call", "%s"), c->live);
		else
			live = xstrdup(REQ0(99, "tools/call"));
		recs[0] = (struct rec){ DIR_C2S, 100, req };
		recs[1] = (struct rec){ DIR_S2C, 200, RESP(1) };
		match_test_plan(&p, recs, 2);
		match_test_build(&m, &p, 0, NULL, 0);
		cr_assert_eq(m.n, 1);
		if (c->match)
			cr_assert_eq(match_test_find(&m, live), &m.e[0],
			    "%s: %s matches %s", c->why, live, req);
		else
			cr_assert_null(match_test_find(&m, live),
			    "%s: %s does not match %s", c->why, live, req);
		matcher_clear(&m);
		plan_clear(&p);
		free(req);
		free(live);
	}
}

Test(match, key_text, .timeout = UNIT_TIMEOUT)
{
	static const struct rec recs[] = {
		{ DIR_C2S, 100, REQ(1, "tools/call", "{'name':'x','arguments':"
		    "{'b':1.0,'a':[2.5,3]},'_meta':{'progressToken':1}}") },
		{ DIR_S2C, 200, RESP(1) },
		{ DIR_C2S, 300, REQ0(2, "tools/list") },
		{ DIR_S2C, 400, RESP(2) },
	};
	struct plan	p;
	struct matcher	m;

	match_test_plan(&p, recs, nitems(recs));
	match_test_build(&m, &p, 0, NULL, 0);
	cr_assert_eq(m.n, 2);
	cr_assert_str_eq(m.e[0].key, "tools/call\n{\"arguments\":{\"a\":"
	    "[2.5,3],\"b\":1},\"name\":\"x\"}");
	cr_assert_str_eq(m.e[1].key, "tools/list\n");
	cr_assert_eq(m.e[0].req, 0);
	cr_assert_eq(m.e[0].resp, 1);
	cr_assert_eq(m.e[1].req, 2);
	cr_assert_eq(m.e[1].resp, 3);
	cr_assert_eq(m.e[0].latency_ns, 100);
	matcher_clear(&m);
	plan_clear(&p);
}

Test(match, repeats_use_each_then_the_last, .timeout = UNIT_TIMEOUT)
{
	static const struct rec recs[] = {
		{ DIR_C2S, 100, REQ0(1, "tools/list") },
		{ DIR_S2C, 110, RESULT(1, "{'tools':[]}") },
		{ DIR_C2S, 200, REQ0(2, "tools/list") },
		{ DIR_S2C, 220, RESULT(2, "{'tools':[{'name':'a'}]}") },
		{ DIR_C2S, 300, REQ(3, "tools/list", "{}") },
		{ DIR_S2C, 330, RESULT(3, "{'tools':[{'name':'b'}]}") },
	};
	static const size_t	 want[] = { 0, 1, 2, 2, 2 };
	struct plan		 p;
	struct matcher		 m;
	size_t			 i;

	match_test_plan(&p, recs, nitems(recs));
	match_test_build(&m, &p, 0, NULL, 0);
	cr_assert_eq(m.n, 3);
	for (i = 0; i < nitems(want); i++)
		cr_assert_eq(match_test_find(&m, REQ0(7, "tools/list")),
		    &m.e[want[i]], "tools/list number %zu gets entry %zu", i,
		    want[i]);
	cr_assert_eq(m.e[2].latency_ns, 30);
	cr_assert_eq(json_integer_value(json_object_get(m.used,
	    "tools/list\n")), (json_int_t)nitems(want));
	matcher_clear(&m);
	plan_clear(&p);
}

Test(match, different_params_pick_different_entries, .timeout = UNIT_TIMEOUT)
{
	static const struct rec recs[] = {
		{ DIR_C2S, 100, REQ(1, "tools/call",
		    "{'name':'echo','arguments':{'text':'hi'}}") },
		{ DIR_S2C, 110, RESP(1) },
		{ DIR_C2S, 200, REQ(2, "tools/call",
		    "{'name':'get-sum','arguments':{'a':1,'b':2}}") },
		{ DIR_S2C, 210, RESP(2) },
		{ DIR_C2S, 300, REQ(3, "tools/call",
		    "{'name':'echo','arguments':{'text':'bye'}}") },
		{ DIR_S2C, 310, RESP(3) },
	};
	static const struct {
		const char	*live;
		size_t		 entry;
	} finds[] = {
		{ REQ(5, "tools/call", "{'name':'echo','arguments':"
		    "{'text':'bye'}}"), 2 },
		{ REQ(6, "tools/call", "{'arguments':{'b':2,'a':1},"
		    "'name':'get-sum'}"), 1 },
		{ REQ(7, "tools/call", "{'name':'echo','arguments':"
		    "{'text':'hi'}}"), 0 },
	};
	struct plan	p;
	struct matcher	m;
	size_t		i;

	match_test_plan(&p, recs, nitems(recs));
	match_test_build(&m, &p, 0, NULL, 0);
	for (i = 0; i < nitems(finds); i++)
		cr_assert_eq(match_test_find(&m, finds[i].live),
		    &m.e[finds[i].entry], "%s gets entry %zu", finds[i].live,
		    finds[i].entry);
	cr_assert_null(match_test_find(&m, REQ(8, "tools/call",
	    "{'name':'echo','arguments':{'text':'other'}}")));
	matcher_clear(&m);
	plan_clear(&p);
}

Test(match, lifecycle_by_method_alone, .timeout = UNIT_TIMEOUT)
{
	static const struct rec recs[] = {
		{ DIR_C2S, 100, REQ(0, "initialize", "{'protocolVersion':"
		    "'2025-06-18','capabilities':{},'clientInfo':{'name':'a',"
		    "'version':'1'}}") },
		{ DIR_S2C, 110, RESP(0) },
		{ DIR_C2S, 120, REQ(1, "server/discover", "{'x':1}") },
		{ DIR_S2C, 130, RESP(1) },
		{ DIR_C2S, 140, REQ(2, "ping", "{'x':1}") },
		{ DIR_S2C, 150, RESP(2) },
	};
	struct plan	p;
	struct matcher	m;

	match_test_plan(&p, recs, nitems(recs));
	match_test_build(&m, &p, 0, NULL, 0);
	cr_assert_str_eq(m.e[0].key, "initialize\n");
	cr_assert_str_eq(m.e[1].key, "server/discover\n");
	cr_assert_eq(match_test_find(&m, REQ(9, "initialize",
	    "{'protocolVersion':'2025-03-26','capabilities':{'roots':{}},"
	    "'clientInfo':{'name':'b','version':'2'}}")), &m.e[0]);
	cr_assert_eq(match_test_find(&m, REQ0(10, "server/discover")),
	    &m.e[1]);
	cr_assert_null(match_test_find(&m, REQ(11, "ping", "{'x':2}")),
	    "other methods key by params");
	matcher_clear(&m);
	plan_clear(&p);
}

/* The recording the strict tests use. */
static const struct rec match_strict_recs[] = {
	{ DIR_C2S, 100, REQ(0, "initialize", "{'protocolVersion':'1'}") },
	{ DIR_S2C, 110, RESP(0) },
	{ DIR_C2S, 120, REQ0(1, "tools/list") },
	{ DIR_S2C, 130, RESP(1) },
	{ DIR_C2S, 140, REQ(2, "tools/call", "{'name':'echo',"
	    "'arguments':{'text':'hi'}}") },
	{ DIR_S2C, 150, RESP(2) },
};

#define LIVE_INIT	REQ(1, "initialize", "{'protocolVersion':'2'}")
#define LIVE_LIST	REQ0(2, "tools/list")
#define LIVE_ECHO	REQ(3, "tools/call", "{'name':'echo'," \
			    "'arguments':{'text':'hi'}}")
#define LIVE_ECHO_BYE	REQ(4, "tools/call", "{'name':'echo'," \
			    "'arguments':{'text':'bye'}}")

/* Check a miss is -32602 with a message and the nearest entry's seq. */
static void
match_test_miss_32602(const struct matcher *m, const char *live,
    const char *message, int64_t seq)
{
	json_t	*error = match_test_miss(m, live), *nearest;

	cr_assert_eq(json_integer_value(json_object_get(error, "code")),
	    -32602, "%s: code -32602", live);
	cr_assert_str_eq(json_string_value(json_object_get(error, "message")),
	    message);
	nearest = json_object_get(json_object_get(error, "data"), "nearest");
	cr_assert_eq(json_integer_value(json_object_get(nearest, "seq")), seq,
	    "%s: nearest is seq %lld", live, (long long)seq);
	json_decref(error);
}

Test(match, strict_in_order, .timeout = UNIT_TIMEOUT)
{
	struct plan	p;
	struct matcher	m;

	match_test_plan(&p, match_strict_recs, nitems(match_strict_recs));
	match_test_build(&m, &p, 1, NULL, 0);
	cr_assert_eq(match_test_find(&m, LIVE_INIT), &m.e[0]);
	cr_assert_eq(match_test_find(&m, LIVE_LIST), &m.e[1]);
	cr_assert_null(match_test_find(&m, LIVE_ECHO_BYE));
	match_test_miss_32602(&m, LIVE_ECHO_BYE, "mcpreel mock: no recorded "
	    "tools/call request matches these params", 5);
	cr_assert_eq(match_test_find(&m, LIVE_ECHO), &m.e[2],
	    "a failed find does not move the order on");
	cr_assert_null(match_test_find(&m, LIVE_ECHO), "all used: no repeat");
	cr_assert_null(match_test_find(&m, LIVE_LIST));
	match_test_miss_32602(&m, LIVE_LIST, "mcpreel mock: tools/list "
	    "request out of the recorded order; every recorded request has "
	    "been answered", 3);
	matcher_clear(&m);
	plan_clear(&p);
}

Test(match, strict_out_of_order, .timeout = UNIT_TIMEOUT)
{
	struct plan	p;
	struct matcher	m;

	match_test_plan(&p, match_strict_recs, nitems(match_strict_recs));
	match_test_build(&m, &p, 1, NULL, 0);
	cr_assert_null(match_test_find(&m, LIVE_LIST));
	match_test_miss_32602(&m, LIVE_LIST, "mcpreel mock: tools/list "
	    "request out of the recorded order; expected initialize next", 1);
	cr_assert_eq(match_test_find(&m, LIVE_INIT), &m.e[0]);
	cr_assert_null(match_test_find(&m, LIVE_ECHO));
	match_test_miss_32602(&m, LIVE_ECHO, "mcpreel mock: tools/call "
	    "request out of the recorded order; expected tools/list next", 3);
	matcher_clear(&m);

	/* The same requests in the same order, not strict. */
	match_test_build(&m, &p, 0, NULL, 0);
	cr_assert_eq(match_test_find(&m, LIVE_LIST), &m.e[1]);
	cr_assert_eq(match_test_find(&m, LIVE_ECHO), &m.e[2]);
	cr_assert_eq(match_test_find(&m, LIVE_INIT), &m.e[0]);
	matcher_clear(&m);
	plan_clear(&p);
}

Test(match, ignore_paths, .timeout = UNIT_TIMEOUT)
{
	static const struct rec recs[] = {
		{ DIR_C2S, 100, REQ(1, "tools/call", "{'name':'clock',"
		    "'arguments':{'when':'2024-01-01','tz':'UTC'}}") },
		{ DIR_S2C, 110, RESP(1) },
		{ DIR_C2S, 200, REQ(2, "tools/call", "{'name':'clock',"
		    "'arguments':{'when':'2025-06-30','tz':'UTC'}}") },
		{ DIR_S2C, 210, RESP(2) },
	};
	static const char *const ignore[] = {
		"$.params.arguments.when",
		"$.result.content",	/* not under params: no effect */
	};
	static const char *const live = REQ(9, "tools/call", "{'name':"
	    "'clock','arguments':{'tz':'UTC','when':'2030-12-31'}}");
	struct plan	p;
	struct matcher	m;

	match_test_plan(&p, recs, nitems(recs));
	match_test_build(&m, &p, 0, NULL, 0);
	cr_assert_null(match_test_find(&m, live), "without the ignore path "
	    "the time counts");
	matcher_clear(&m);

	match_test_build(&m, &p, 0, ignore, nitems(ignore));
	cr_assert_str_eq(m.e[0].key, m.e[1].key);
	cr_assert_null(strstr(m.e[0].key, "when"), "key %s", m.e[0].key);
	cr_assert_eq(match_test_find(&m, live), &m.e[0]);
	cr_assert_eq(match_test_find(&m, live), &m.e[1]);
	cr_assert_null(match_test_find(&m, REQ(9, "tools/call", "{'name':"
	    "'clock','arguments':{'tz':'CET','when':'2030-12-31'}}")),
	    "the rest of the params still count");
	matcher_clear(&m);
	plan_clear(&p);
}

Test(match, bad_ignore_path, .timeout = UNIT_TIMEOUT)
{
	static const char *const bad[] = {
		"params.arguments.when",
		"$.params[",
		"$.params['when",
		"",
	};
	struct diff_rules rules;
	char		*cause;
	size_t		 i;

	rules_init(&rules);
	cr_assert_eq(rules_add_ignore(&rules, "$.params.ok", &cause), 0);
	for (i = 0; i < nitems(bad); i++) {
		cause = NULL;
		cr_assert_eq(rules_add_ignore(&rules, bad[i], &cause), -1,
		    "'%s' is refused", bad[i]);
		cr_assert_not_null(cause);
		cr_assert_eq(rules.nignore, 1, "the rules are unchanged");
		free(cause);
	}
	rules_clear(&rules);
}

/* Where an item is expected: the prelude, or an entry's before or after. */
enum match_where {
	MATCH_PRELUDE,
	MATCH_BEFORE,
	MATCH_AFTER,
};

/* The items one list should hold, in order. */
struct match_list_want {
	enum match_where	 where;
	size_t			 entry;
	size_t			 n;
	struct mitem		 items[MATCH_TEST_ITEMS];
};

Test(match, attribution, .timeout = UNIT_TIMEOUT)
{
	static const struct rec recs[] = {
		/* 0, 1: before any request. */
		{ DIR_S2C, 50, NOTE("notifications/message") },
		{ DIR_S2C, 70, NOTE("notifications/message") },
		/* 2, 3: two requests in flight, tokens 'A' and 2. */
		{ DIR_C2S, 100, REQ(1, "tools/call", "{'name':'slow',"
		    "'_meta':{'progressToken':'A'}}") },
		{ DIR_C2S, 110, REQ(2, "tools/call", "{'name':'slower',"
		    "'_meta':{'progressToken':2}}") },
		/* 4: progress for the first, though the second is later. */
		{ DIR_S2C, 130, PROGRESS("'A'") },
		/* 5: a log message: the latest in flight. */
		{ DIR_S2C, 140, NOTE("notifications/message") },
		/* 6, 7: a server request, and the client's answer. */
		{ DIR_S2C, 150, REQ(0, "sampling/createMessage", "{}") },
		{ DIR_C2S, 160, RESP(0) },
		/* 8: progress for the second. */
		{ DIR_S2C, 165, PROGRESS("2") },
		{ DIR_S2C, 170, RESP(2) },
		/* 10: a token no request in flight has: the latest. */
		{ DIR_S2C, 175, PROGRESS("2") },
		{ DIR_S2C, 200, RESP(1) },
		/* 12: unsolicited, after the last answer (request 1's). */
		{ DIR_S2C, 250, NOTE("notifications/tools/list_changed") },
		/* 13: the client's notifications are not played. */
		{ DIR_C2S, 260, NOTE("notifications/cancelled") },
		{ DIR_C2S, 300, REQ0(3, "ping") },
		{ DIR_S2C, 310, RESP(3) },
		/* 16: after ping's answer. */
		{ DIR_S2C, 400, NOTE("notifications/resources/updated") },
	};
	static const struct match_list_want want[] = {
		{ MATCH_PRELUDE, 0, 2, { { 0, 0 }, { 1, 20 } } },
		{ MATCH_BEFORE, 0, 2, { { 4, 30 }, { 10, 75 } } },
		{ MATCH_AFTER, 0, 1, { { 12, 150 } } },
		{ MATCH_BEFORE, 1, 3, { { 5, 30 }, { 6, 40 }, { 8, 55 } } },
		{ MATCH_AFTER, 1, 0, { { 0, 0 } } },
		{ MATCH_BEFORE, 2, 0, { { 0, 0 } } },
		{ MATCH_AFTER, 2, 1, { { 16, 100 } } },
	};
	static const struct {
		size_t	 req;
		size_t	 resp;
		int64_t	 latency_ns;
	} entries[] = {
		{ 2, 11, 100 },
		{ 3, 9, 60 },
		{ 14, 15, 10 },
	};
	static const char *const names[] = { "prelude", "before", "after" };
	const struct match_list_want	*w;
	const struct mitem		*items;
	struct plan			 p;
	struct matcher			 m;
	size_t				 i, j, n;

	match_test_plan(&p, recs, nitems(recs));
	match_test_build(&m, &p, 0, NULL, 0);
	cr_assert_eq(m.n, nitems(entries));
	for (i = 0; i < nitems(entries); i++) {
		cr_assert_eq(m.e[i].req, entries[i].req);
		cr_assert_eq(m.e[i].resp, entries[i].resp);
		cr_assert_eq(m.e[i].latency_ns, entries[i].latency_ns,
		    "entry %zu latency", i);
	}
	for (i = 0; i < nitems(want); i++) {
		w = &want[i];
		switch (w->where) {
		case MATCH_PRELUDE:
			items = m.prelude;
			n = m.nprelude;
			break;
		case MATCH_BEFORE:
			items = m.e[w->entry].before;
			n = m.e[w->entry].nbefore;
			break;
		default:
			items = m.e[w->entry].after;
			n = m.e[w->entry].nafter;
			break;
		}
		cr_assert_eq(n, w->n, "%s of entry %zu holds %zu items, not "
		    "%zu", names[w->where], w->entry, w->n, n);
		for (j = 0; j < n; j++) {
			cr_assert_eq(items[j].msg, w->items[j].msg,
			    "%s of entry %zu item %zu is message %zu, not %zu",
			    names[w->where], w->entry, j, w->items[j].msg,
			    items[j].msg);
			cr_assert_eq(items[j].offset_ns,
			    w->items[j].offset_ns, "%s of entry %zu item %zu "
			    "offset", names[w->where], w->entry, j);
		}
	}
	matcher_clear(&m);
	plan_clear(&p);
}

Test(match, miss_never_recorded, .timeout = UNIT_TIMEOUT)
{
	static const struct rec recs[] = {
		{ DIR_C2S, 100, REQ(0, "initialize", "{}") },
		{ DIR_S2C, 110, RESP(0) },
		{ DIR_C2S, 120, REQ0(1, "tools/list") },
		{ DIR_S2C, 130, RESP(1) },
		{ DIR_C2S, 140, REQ(2, "tools/call", "{'name':'echo'}") },
		{ DIR_S2C, 150, RESP(2) },
		{ DIR_C2S, 160, REQ0(3, "tools/list") },
		{ DIR_S2C, 170, RESP(3) },
		/* Never answered: no entry. */
		{ DIR_C2S, 180, REQ(4, "resources/read", "{'uri':'x'}") },
	};
	static const struct {
		const char	*live;
		int		 code;
		const char	*message;
		int		 listed;
	} cases[] = {
		{ REQ(9, "prompts/get", "{'name':'x'}"), -32601,
		  "mcpreel mock: method 'prompts/get' was never recorded", 1 },
		{ REQ(9, "resources/read", "{'uri':'x'}"), -32601,
		  "mcpreel mock: method 'resources/read' was recorded but "
		  "never answered", 1 },
		{ "{'jsonrpc':'2.0','id':9}", -32600,
		  "mcpreel mock: the request has no method", 0 },
	};
	struct plan	 p;
	struct matcher	 m;
	json_t		*error, *data, *live;
	size_t		 i;

	match_test_plan(&p, recs, nitems(recs));
	match_test_build(&m, &p, 0, NULL, 0);
	cr_assert_eq(m.n, 4, "the unanswered request is no entry");
	for (i = 0; i < nitems(cases); i++) {
		cr_assert_null(match_test_find(&m, cases[i].live));
		error = match_test_miss(&m, cases[i].live);
		cr_assert_eq(json_integer_value(json_object_get(error,
		    "code")), cases[i].code, "%s", cases[i].live);
		cr_assert_str_eq(json_string_value(json_object_get(error,
		    "message")), cases[i].message);
		data = json_object_get(error, "data");
		if (cases[i].listed) {
			cr_assert(match_test_equal(json_object_get(data,
			    "recorded_methods"), "['initialize','tools/call',"
			    "'tools/list']"), "sorted distinct methods");
			live = match_test_json(cases[i].live);
			cr_assert_str_eq(json_string_value(
			    json_object_get(data, "method")),
			    json_string_value(json_object_get(live,
			    "method")));
			json_decref(live);
		} else
			cr_assert_null(data);
		json_decref(error);
	}
	matcher_clear(&m);
	plan_clear(&p);
}

/* One nearest-entry case: the live params and what the error says. */
struct match_near_case {
	const char	*live;
	int64_t		 seq;
	size_t		 ndiff;
	const char	*recorded_name;	/* at $.params.name */
	const char	*why;
};

Test(match, miss_nearest, .timeout = UNIT_TIMEOUT)
{
	static const struct rec recs[] = {
		{ DIR_C2S, 100, REQ(1, "tools/call", "{'name':'echo',"
		    "'arguments':{'text':'hi'}}") },
		{ DIR_S2C, 110, RESP(1) },
		{ DIR_C2S, 120, REQ(2, "tools/call", "{'name':'get-sum',"
		    "'arguments':{'a':1,'b':2}}") },
		{ DIR_S2C, 130, RESP(2) },
	};
	static const struct match_near_case cases[] = {
		{ "{'name':'nope','arguments':{'a':1,'b':3}}", 3, 2, "get-sum",
		  "get-sum differs in name and b; echo in four places" },
		{ "{'name':'nope','arguments':{'text':'hi'}}", 1, 1, "echo",
		  "echo differs in the name alone" },
		{ "{'name':'nope'}", 1, 2, "echo",
		  "a tie goes to the earliest" },
	};
	const struct match_near_case	*c;
	struct plan			 p;
	struct matcher			 m;
	json_t				*error, *data, *one, *rec;
	char				*live;
	size_t				 i;

	match_test_plan(&p, recs, nitems(recs));
	match_test_build(&m, &p, 0, NULL, 0);
	for (i = 0; i < nitems(cases); i++) {
		c = &cases[i];
		xasprintf(&live, REQ(9, "tools/call", "%s"), c->live);
		cr_assert_null(match_test_find(&m, live));
		error = match_test_miss(&m, live);
		cr_assert_eq(json_integer_value(json_object_get(error,
		    "code")), -32602);
		cr_assert_str_eq(json_string_value(json_object_get(error,
		    "message")), "mcpreel mock: no recorded tools/call "
		    "request matches these params");
		data = json_object_get(error, "data");
		cr_assert_str_eq(json_string_value(json_object_get(data,
		    "method")), "tools/call");
		cr_assert_eq(json_integer_value(json_object_get(
		    json_object_get(data, "nearest"), "seq")), c->seq,
		    "%s: %s", c->live, c->why);
		rec = json_object_get(plan_json(&p.m[c->seq - 1]), "params");
		cr_assert(json_equal(json_object_get(json_object_get(data,
		    "nearest"), "params"), rec), "nearest carries its params");
		cr_assert_eq(json_array_size(json_object_get(data,
		    "differences")), c->ndiff, "%s: %zu differences", c->live,
		    c->ndiff);
		one = match_test_difference(error, "$.params.name");
		cr_assert_not_null(one, "%s: $.params.name differs", c->live);
		cr_assert_str_eq(json_string_value(json_object_get(one,
		    "recorded")), c->recorded_name);
		cr_assert_str_eq(json_string_value(json_object_get(one,
		    "live")), "nope");
		json_decref(error);
		free(live);
	}

	/* A place the live request lacks has no "live" member. */
	error = match_test_miss(&m, REQ(9, "tools/call", "{'name':'nope'}"));
	one = match_test_difference(error, "$.params.arguments");
	cr_assert_not_null(one);
	cr_assert(match_test_equal(json_object_get(one, "recorded"),
	    "{'text':'hi'}"));
	cr_assert_null(json_object_get(one, "live"));
	json_decref(error);
	matcher_clear(&m);
	plan_clear(&p);
}

Test(match, miss_skips_meta_and_ignored_places, .timeout = UNIT_TIMEOUT)
{
	static const struct rec recs[] = {
		{ DIR_C2S, 100, REQ(1, "tools/call", "{'name':'clock',"
		    "'arguments':{'when':'x','tz':'UTC'},"
		    "'_meta':{'progressToken':1}}") },
		{ DIR_S2C, 110, RESP(1) },
	};
	static const char *const ignore[] = { "$.params.arguments.when" };
	struct plan	 p;
	struct matcher	 m;
	json_t		*error, *list, *one;

	match_test_plan(&p, recs, nitems(recs));
	match_test_build(&m, &p, 0, ignore, nitems(ignore));
	error = match_test_miss(&m, REQ(9, "tools/call", "{'name':'clock',"
	    "'arguments':{'when':'y','tz':'CET'},'_meta':{'progressToken':"
	    "'z','other':1}}"));
	list = json_object_get(json_object_get(error, "data"), "differences");
	cr_assert_eq(json_array_size(list), 1, "only tz differs");
	one = json_array_get(list, 0);
	cr_assert_str_eq(json_string_value(json_object_get(one, "path")),
	    "$.params.arguments.tz");
	cr_assert_str_eq(json_string_value(json_object_get(one, "recorded")),
	    "UTC");
	cr_assert_str_eq(json_string_value(json_object_get(one, "live")),
	    "CET");
	json_decref(error);
	matcher_clear(&m);
	plan_clear(&p);
}

Test(match, miss_differences_bounded, .timeout = UNIT_TIMEOUT)
{
	struct plan	 p;
	struct matcher	 m;
	struct rec	 recs[2];
	json_t		*rec_params, *live_params, *live, *error, *data;
	char		*text, *req, name[16];
	size_t		 i, nkeys = 40;

	rec_params = json_object();
	live_params = json_object();
	for (i = 0; i < nkeys; i++) {
		snprintf(name, sizeof name, "k%zu", i);
		json_object_set_new(rec_params, name, json_integer(0));
		json_object_set_new(live_params, name, json_integer(1));
	}
	text = json_dumps(rec_params, JSON_COMPACT);
	xasprintf(&req, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"m\","
	    "\"params\":%s}", text);
	free(text);
	recs[0] = (struct rec){ DIR_C2S, 100, req };
	recs[1] = (struct rec){ DIR_S2C, 110, RESP(1) };
	match_test_plan(&p, recs, 2);
	match_test_build(&m, &p, 0, NULL, 0);

	live = json_pack("{sssiss}", "jsonrpc", "2.0", "id", 9, "method", "m");
	json_object_set(live, "params", live_params);
	error = matcher_miss(&m, live);
	data = json_object_get(error, "data");
	cr_assert_eq(json_array_size(json_object_get(data, "differences")),
	    32, "the list stops at 32");
	cr_assert_eq(json_integer_value(json_object_get(data,
	    "differences_omitted")), (json_int_t)nkeys - 32);
	json_decref(error);
	json_decref(live);
	json_decref(rec_params);
	json_decref(live_params);
	matcher_clear(&m);
	plan_clear(&p);
	free(req);
}

/*
 * The key's text is what jansson writes of the canonical params (sorted,
 * compact): escapes, non-ASCII, reals, nested _meta left out, integral
 * reals as integers, with no copy of the tree made.
 */
Test(match, key_text_as_jansson_writes_it, .timeout = UNIT_TIMEOUT)
{
	json_t	*msg, *canon;
	char	*key, *text, *want;

	msg = json_loads("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"m/x\","
	    "\"params\":{\"s\":\"a\\\"b\\\\c\\n\\t\\b\\f\\r\\u0001\\u001f "
	    "\\u00e9\\u20ac/\\u007f\",\"r\":0.1,\"big\":1e300,\"i\":-5,"
	    "\"z\":{\"_meta\":{\"x\":1},\"y\":[true,false,null,1.0,-2.5e-7]},"
	    "\"_meta\":{\"progressToken\":3}}}", 0, NULL);
	cr_assert_not_null(msg);
	canon = json_loads("{\"s\":\"a\\\"b\\\\c\\n\\t\\b\\f\\r\\u0001\\u001f "
	    "\\u00e9\\u20ac/\\u007f\",\"r\":0.1,\"big\":1e300,\"i\":-5,"
	    "\"z\":{\"y\":[true,false,null,1,-2.5e-7]}}", 0, NULL);
	cr_assert_not_null(canon);
	text = json_dumps(canon, JSON_SORT_KEYS | JSON_COMPACT |
	    JSON_ENCODE_ANY);
	xasprintf(&want, "m/x\n%s", text);
	key = match_request_key(msg, NULL);
	cr_assert_str_eq(key, want);
	free(key);
	free(want);
	free(text);
	json_decref(canon);
	json_decref(msg);
}

Test(match, miss_parses_no_dropped_request, .timeout = UNIT_TIMEOUT)
{
	static const struct rec recs[] = {
		{ DIR_C2S, 100, REQ(1, "tools/call", "{'name':'a'}") },
		{ DIR_S2C, 110, RESP(1) },
		{ DIR_C2S, 120, REQ(2, "resources/read", "{'uri':'x'}") },
		{ DIR_S2C, 130, RESP(2) },
	};
	struct plan	 p;
	struct matcher	 m;
	json_t		*error;

	match_test_plan(&p, recs, nitems(recs));
	match_test_build(&m, &p, 0, NULL, 0);
	cr_assert_null(p.m[0].jcache, "keyed, then dropped");
	cr_assert_null(p.m[2].jcache, "keyed, then dropped");
	/* A method never recorded: the recorded methods are listed. */
	error = match_test_miss(&m, REQ(9, "prompts/get", "{'name':'x'}"));
	cr_assert(match_test_equal(json_object_get(json_object_get(error,
	    "data"), "recorded_methods"), "['resources/read','tools/call']"));
	json_decref(error);
	cr_assert_null(p.m[0].jcache, "a miss parses no request again");
	cr_assert_null(p.m[2].jcache, "a miss parses no request again");
	/* A recorded method: only its own entries are looked at. */
	error = match_test_miss(&m, REQ(9, "tools/call", "{'name':'b'}"));
	json_decref(error);
	cr_assert_not_null(p.m[0].jcache, "the nearest search parses it");
	cr_assert_null(p.m[2].jcache, "another method's is not parsed");
	matcher_clear(&m);
	plan_clear(&p);
}
