/*
 * Unit tests for the mock's index on disk (mdisk.c, mfind.c): for each
 * recording and sequence of live requests, it must choose what the
 * in-memory matcher (match.c) chooses: the same entry, latency and items
 * for each request, the same error for each miss, the same prelude.
 */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include "replay.h"
#include "unit.h"

#define nitems(a)	(sizeof (a) / sizeof (a)[0])

/* Most messages a case records, and live requests it sends. */
#define MDISK_TEST_RECS		12
#define MDISK_TEST_LIVE		8

/* A recorded message; JSON written with ' for ". */
struct mdisk_rec {
	enum dir	 dir;
	int64_t		 mono_ns;
	const char	*text;
};

/* A recording, the live requests sent to it, and how it is matched. */
struct mdisk_case {
	const char		*name;
	int			 strict;
	const char		*ignore;	/* an --ignore path, or NULL */
	struct mdisk_rec	 recs[MDISK_TEST_RECS];
	const char		*live[MDISK_TEST_LIVE];
};

#define REQ(id, m, params) \
	"{'jsonrpc':'2.0','id':" #id ",'method':'" m "','params':" params "}"
#define REQ0(id, m)	"{'jsonrpc':'2.0','id':" #id ",'method':'" m "'}"
#define RESULT(id, r)	"{'jsonrpc':'2.0','id':" #id ",'result':" r "}"
#define NOTE(m)		"{'jsonrpc':'2.0','method':'" m "'}"
#define PROGRESS(tok)	"{'jsonrpc':'2.0'," \
			"'method':'notifications/progress'," \
			"'params':{'progressToken':" tok ",'progress':1}}"
#define SRVREQ(id, m)	"{'jsonrpc':'2.0','id':'s" #id "','method':'" m "'}"
#define RED		"'[REDACTED]'"

static const struct mdisk_case mdisk_cases[] = {
	{ "repeats: each in order, then the last", 0, NULL, {
		{ DIR_C2S, 100, REQ0(1, "tools/list") },
		{ DIR_S2C, 110, RESULT(1, "{'n':1}") },
		{ DIR_C2S, 120, REQ0(2, "tools/list") },
		{ DIR_S2C, 150, RESULT(2, "{'n':2}") },
		{ DIR_C2S, 160, REQ(3, "tools/call", "{'name':'a'}") },
		{ DIR_S2C, 170, RESULT(3, "{'n':3}") },
	}, { REQ0(7, "tools/list"), REQ(8, "tools/call", "{'name':'a'}"),
	    REQ0(9, "tools/list"), REQ0(10, "tools/list"),
	    REQ(11, "tools/call", "{'name':'b'}"),
	    REQ(12, "prompts/get", "{'name':'x'}"), "{'jsonrpc':'2.0',"
	    "'id':13}" } },
	{ "strict: in order, then out of it", 1, NULL, {
		{ DIR_C2S, 100, REQ(1, "initialize", "{'protocolVersion':'1'}") },
		{ DIR_S2C, 110, RESULT(1, "{'protocolVersion':'1'}") },
		{ DIR_C2S, 120, REQ0(2, "tools/list") },
		{ DIR_S2C, 130, RESULT(2, "{}") },
		{ DIR_C2S, 140, REQ(3, "tools/call", "{'name':'echo'}") },
		{ DIR_S2C, 150, RESULT(3, "{}") },
	}, { REQ(1, "initialize", "{'protocolVersion':'2'}"),
	    REQ(2, "tools/call", "{'name':'echo'}"), REQ0(3, "tools/list"),
	    REQ(4, "tools/call", "{'name':'other'}"),
	    REQ(5, "tools/call", "{'name':'echo'}"), REQ0(6, "tools/list") } },
	{ "ignore paths leave places out of keys", 0,
	    "$.params.arguments.when", {
		{ DIR_C2S, 100, REQ(1, "tools/call",
		    "{'name':'t','arguments':{'when':1,'x':1}}") },
		{ DIR_S2C, 110, RESULT(1, "{'a':1}") },
		{ DIR_C2S, 120, REQ(2, "tools/call",
		    "{'name':'t','arguments':{'when':2,'x':1}}") },
		{ DIR_S2C, 130, RESULT(2, "{'a':2}") },
	}, { REQ(5, "tools/call", "{'name':'t','arguments':{'when':9,'x':1}}"),
	    REQ(6, "tools/call", "{'name':'t','arguments':{'x':1}}"),
	    REQ(7, "tools/call", "{'name':'t','arguments':{'x':2}}") } },
	{ "the server's messages: before, after, prelude, by token", 0,
	    NULL, {
		{ DIR_S2C, 50, NOTE("notifications/tools/list_changed") },
		{ DIR_C2S, 100, REQ(1, "tools/call",
		    "{'name':'a','_meta':{'progressToken':'A'}}") },
		{ DIR_C2S, 110, REQ(2, "tools/call",
		    "{'name':'b','_meta':{'progressToken':'B'}}") },
		{ DIR_S2C, 120, PROGRESS("'A'") },
		{ DIR_S2C, 125, SRVREQ(1, "roots/list") },
		{ DIR_C2S, 126, "{'jsonrpc':'2.0','id':'s1','result':{}}" },
		{ DIR_S2C, 130, PROGRESS("'B'") },
		{ DIR_S2C, 140, RESULT(1, "{}") },
		{ DIR_S2C, 150, RESULT(2, "{}") },
		{ DIR_S2C, 160, NOTE("notifications/message") },
		{ DIR_C2S, 170, REQ0(3, "ping") },
	}, { REQ(1, "tools/call", "{'name':'b'}"),
	    REQ(2, "tools/call", "{'name':'a'}"), REQ0(3, "ping") } },
	{ "redacted params match as wildcards", 0, NULL, {
		{ DIR_C2S, 100, REQ(1, "tools/call",
		    "{'name':'login','arguments':{'token':" RED "}}") },
		{ DIR_S2C, 110, RESULT(1, "{'ok':1}") },
		{ DIR_C2S, 120, REQ(2, "tools/call",
		    "{'name':'login','arguments':{'token':" RED "}}") },
		{ DIR_S2C, 130, RESULT(2, "{'ok':2}") },
		{ DIR_C2S, 140, REQ(3, "tools/call", "{'name':'x'}") },
	}, { REQ(5, "tools/call", "{'name':'login','arguments':"
	    "{'token':'s3cret'}}"), REQ(6, "tools/call", "{'name':'login',"
	    "'arguments':{'token':'other'}}"), REQ(7, "tools/call",
	    "{'name':'login','arguments':{'token':'t','more':1}}"),
	    REQ(8, "tools/call", "{'name':'x'}") } },
	{ "redacted in two shapes: a key's redacted entries in turn", 0, NULL, {
		{ DIR_C2S, 100, REQ0(1, "tools/list") },
		{ DIR_S2C, 110, RESULT(1, "{}") },
		{ DIR_C2S, 120, REQ(2, "tools/call",
		    "{'name':'t','arguments':{'a':" RED ",'b':'u'}}") },
		{ DIR_S2C, 130, RESULT(2, "{'ok':1}") },
		{ DIR_C2S, 140, REQ(3, "tools/call",
		    "{'name':'t','arguments':{'a':'k','b':" RED "}}") },
		{ DIR_S2C, 150, RESULT(3, "{'ok':2}") },
		{ DIR_C2S, 160, REQ(4, "tools/call",
		    "{'name':'t','arguments':{'a':" RED ",'b':'u'}}") },
		{ DIR_S2C, 170, RESULT(4, "{'ok':3}") },
	}, { REQ(5, "tools/call", "{'name':'t','arguments':{'a':'k',"
	    "'b':'u'}}"), REQ(6, "tools/call", "{'name':'t','arguments':"
	    "{'a':'k','b':'u'}}"), REQ(7, "tools/call", "{'name':'t',"
	    "'arguments':{'a':'k','b':'u'}}"), REQ(8, "tools/call",
	    "{'name':'t','arguments':{'a':'z','b':'w'}}"), REQ(9,
	    "tools/call", "{'name':'t','arguments':{'a':'k','b':'w'}}"),
	    REQ(10, "tools/call", "{'name':'t','arguments':{'a':'k',"
	    "'b':'w'}}") } },
	{ "unanswered, answered twice, ids reused, not JSON", 0, NULL, {
		{ DIR_C2S, 100, REQ(1, "tools/call", "{'name':'u'}") },
		{ DIR_C2S, 110, REQ0(2, "tools/list") },
		{ DIR_S2C, 120, RESULT(2, "{'n':1}") },
		{ DIR_S2C, 125, RESULT(2, "{'n':99}") },
		{ DIR_C2S, 130, REQ0(2, "tools/list") },
		{ DIR_S2C, 140, RESULT(2, "{'n':2}") },
		{ DIR_C2S, 150, "{'jsonrpc':'2.0','id':9,'method':'tools/call',"
		    "'params':{'name':" },
		{ DIR_S2C, 160, RESULT(9, "{}") },
		{ DIR_C2S, 170, REQ(3, "tools/call", "{'name':'w'}") },
		{ DIR_C2S, 175, REQ(3, "tools/call", "{'name':'v'}") },
		{ DIR_S2C, 180, RESULT(3, "{}") },
	}, { REQ(7, "tools/call", "{'name':'u'}"), REQ0(8, "tools/list"),
	    REQ0(9, "tools/list"), REQ0(10, "tools/list"),
	    REQ(11, "tools/call", "{'name':'w'}"),
	    REQ(12, "tools/call", "{'name':'v'}") } },
	{ "progress tokens compared as JSON values", 0, NULL, {
		{ DIR_C2S, 100, REQ(1, "tools/call",
		    "{'name':'a','_meta':{'progressToken':1}}") },
		{ DIR_C2S, 110, REQ(2, "tools/call",
		    "{'name':'b','_meta':{'progressToken':{'x':1,'y':[2]}}}") },
		{ DIR_C2S, 115, REQ(3, "tools/call", "{'name':'c'}") },
		{ DIR_S2C, 120, PROGRESS("1") },
		{ DIR_S2C, 121, PROGRESS("1.0") },
		{ DIR_S2C, 122, PROGRESS("{'y':[2],'x':1}") },
		{ DIR_S2C, 123, PROGRESS("'1'") },
		{ DIR_S2C, 130, RESULT(1, "{}") },
		{ DIR_S2C, 140, RESULT(2, "{}") },
		{ DIR_S2C, 150, RESULT(3, "{}") },
	}, { REQ(5, "tools/call", "{'name':'a'}"),
	    REQ(6, "tools/call", "{'name':'b'}"),
	    REQ(7, "tools/call", "{'name':'c'}") } },
};

/* JSON text written with ' for " made real (the caller frees it). */
static char *
mdisk_test_text(const char *text)
{
	char	*s = xstrdup(text), *p;

	for (p = s; *p != '\0'; p++) {
		if (*p == '\'')
			*p = '"';
	}
	return s;
}

/* The rules of a case: its one ignore path, if any. */
static void
mdisk_test_rules(const struct mdisk_case *c, struct diff_rules *rules)
{
	char	*cause = NULL;

	rules_init(rules);
	if (c->ignore != NULL)
		cr_assert_eq(rules_add_ignore(rules, c->ignore, &cause), 0,
		    "%s", cause);
}

/* Whether two lists of items are the same. */
static void
mdisk_test_items(const char *what, const struct mitem *a, size_t na,
    const struct mitem *b, size_t nb, const char *name, size_t k)
{
	size_t	i;

	cr_assert_eq(na, nb, "%s: live %zu: %s: %zu items, on disk %zu",
	    name, k, what, na, nb);
	for (i = 0; i < na; i++) {
		cr_assert_eq(a[i].msg, b[i].msg, "%s: live %zu: %s[%zu]",
		    name, k, what, i);
		cr_assert_eq(a[i].offset_ns, b[i].offset_ns,
		    "%s: live %zu: %s[%zu] offset", name, k, what, i);
	}
}

/* Run one case through both and compare every answer. */
static void
mdisk_test_case(const struct mdisk_case *c)
{
	struct plan		 p;
	struct matcher		 m;
	struct mdisk		*md;
	struct diff_rules	 rules;
	const struct mentry	*e;
	struct mdent		*d;
	struct mitem		*prelude;
	json_t			*live, *ea, *eb;
	char			*s, *cause = NULL;
	size_t			 i, n;

	memset(&p, 0, sizeof p);
	for (i = 0; i < MDISK_TEST_RECS && c->recs[i].text != NULL; i++) {
		s = mdisk_test_text(c->recs[i].text);
		plan_add(&p, (int64_t)i + 1, c->recs[i].dir,
		    c->recs[i].mono_ns, s, strlen(s));
		free(s);
	}
	plan_build(&p);
	mdisk_test_rules(c, &rules);
	matcher_build(&m, &p, c->strict, &rules);
	mdisk_test_rules(c, &rules);
	md = mdisk_from_plan(&p, c->strict, &rules, &cause);
	cr_assert_not_null(md, "%s: %s", c->name, cause);
	cr_assert_eq(rules.nignore, 0, "the index took the rules over");
	cr_assert_eq(mdisk_entries(md), (int64_t)m.n, "%s: entries",
	    c->name);

	n = mfind_prelude(md, &prelude);
	mdisk_test_items("prelude", m.prelude, m.nprelude, prelude, n,
	    c->name, 0);
	free(prelude);

	for (i = 0; i < MDISK_TEST_LIVE && c->live[i] != NULL; i++) {
		s = mdisk_test_text(c->live[i]);
		live = json_loads(s, 0, NULL);
		cr_assert_not_null(live, "%s: bad JSON %s", c->name, s);
		free(s);
		e = matcher_find(&m, live);
		d = mfind_find(md, live);
		if (e == NULL) {
			cr_assert_null(d, "%s: live %zu: a miss in memory, "
			    "entry %lld on disk", c->name, i,
			    d != NULL ? (long long)d->n : -1LL);
			ea = matcher_miss(&m, live);
			eb = mfind_miss(md, live);
			s = json_dumps(eb, JSON_SORT_KEYS | JSON_COMPACT);
			cr_assert(json_equal(ea, eb), "%s: live %zu: the miss "
			    "on disk says %s", c->name, i, s);
			free(s);
			json_decref(ea);
			json_decref(eb);
		} else {
			cr_assert_not_null(d, "%s: live %zu: entry %zu in "
			    "memory, a miss on disk", c->name, i,
			    (size_t)(e - m.e));
			cr_assert_eq(d->n, (int64_t)(e - m.e),
			    "%s: live %zu: entry", c->name, i);
			cr_assert_eq(d->req, e->req);
			cr_assert_eq(d->resp, e->resp);
			cr_assert_str_eq(d->key, e->key);
			cr_assert_eq(d->latency_ns, e->latency_ns);
			cr_assert_eq(d->repeats, matcher_repeats(&m, e),
			    "%s: live %zu: repeats", c->name, i);
			cr_assert(json_equal(d->answer,
			    plan_json(&p.m[e->resp])), "%s: live %zu: answer",
			    c->name, i);
			mdisk_test_items("before", e->before, e->nbefore,
			    d->before, d->nbefore, c->name, i);
			mdisk_test_items("after", e->after, e->nafter,
			    d->after, d->nafter, c->name, i);
		}
		mfind_entry_free(d);
		json_decref(live);
	}
	mdisk_free(md);
	matcher_clear(&m);
	plan_clear(&p);
}

Test(mdisk, same_as_the_matcher, .timeout = UNIT_TIMEOUT)
{
	size_t	i;

	for (i = 0; i < nitems(mdisk_cases); i++)
		mdisk_test_case(&mdisk_cases[i]);
}

/*
 * Many entries of one key: each is used once in recorded order (a find
 * is a look-up by rank, not a walk), then the last again and again.
 */
Test(mdisk, one_key_many_entries, .timeout = UNIT_TIMEOUT)
{
	struct mdisk	*md;
	struct mdent	*d;
	json_t		*live;
	char		 buf[128], *cause = NULL;
	const size_t	 n = 2000;
	size_t		 i;

	md = mdisk_new(0, NULL, &cause);
	cr_assert_not_null(md, "%s", cause);
	for (i = 0; i < n; i++) {
		snprintf(buf, sizeof buf, "{\"jsonrpc\":\"2.0\",\"id\":%zu,"
		    "\"method\":\"ping\"}", i);
		mdisk_add(md, (int64_t)(2 * i + 1), DIR_C2S, (int64_t)i * 10,
		    buf, strlen(buf), 0, KIND_INVALID, NULL, NULL);
		snprintf(buf, sizeof buf, "{\"jsonrpc\":\"2.0\",\"id\":%zu,"
		    "\"result\":{\"n\":%zu}}", i, i);
		mdisk_add(md, (int64_t)(2 * i + 2), DIR_S2C,
		    (int64_t)i * 10 + 3, buf, strlen(buf), 0, KIND_INVALID,
		    NULL, NULL);
	}
	cr_assert_eq(mdisk_finish(md, &cause), 0, "%s", cause);
	cr_assert_eq(mdisk_entries(md), (int64_t)n);
	live = json_pack("{sssiss}", "jsonrpc", "2.0", "id", 1, "method",
	    "ping");
	for (i = 0; i < n + 3; i++) {
		d = mfind_find(md, live);
		cr_assert_not_null(d, "find %zu", i);
		cr_assert_eq(d->n, (int64_t)(i < n ? i : n - 1), "find %zu", i);
		cr_assert_eq(json_integer_value(json_object_get(
		    json_object_get(d->answer, "result"), "n")),
		    (json_int_t)(i < n ? i : n - 1));
		cr_assert_eq(d->latency_ns, 3);
		cr_assert_eq(d->repeats, i >= n - 1, "find %zu", i);
		mfind_entry_free(d);
	}
	json_decref(live);
	mdisk_free(md);
}

/* An answer cut at the record cap is no entry; the miss says why. */
Test(mdisk, truncated_answer_is_no_entry, .timeout = UNIT_TIMEOUT)
{
	static const char req[] = "{\"jsonrpc\":\"2.0\",\"id\":1,"
	    "\"method\":\"tools/call\",\"params\":{\"name\":\"big\"}}";
	static const char cut[] = "{\"jsonrpc\":\"2.0\",\"id\":1,\"res";
	struct mdisk	*md;
	json_t		*live, *error;
	char		*cause = NULL;

	md = mdisk_new(0, NULL, &cause);
	cr_assert_not_null(md, "%s", cause);
	mdisk_add(md, 1, DIR_C2S, 100, req, strlen(req), 0, KIND_INVALID,
	    NULL, NULL);
	mdisk_add(md, 2, DIR_S2C, 110, cut, strlen(cut), 1, KIND_RESPONSE,
	    NULL, "1");
	cr_assert_eq(mdisk_finish(md, &cause), 0, "%s", cause);
	cr_assert_eq(mdisk_entries(md), 0);
	live = json_loads(req, 0, NULL);
	cr_assert_null(mfind_find(md, live));
	error = mfind_miss(md, live);
	cr_assert_not_null(strstr(json_string_value(json_object_get(error,
	    "message")), "--max-record-size"), "the miss names the cap");
	json_decref(error);
	json_decref(live);
	mdisk_free(md);
}
