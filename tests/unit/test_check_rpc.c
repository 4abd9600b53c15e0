/* check/: JSON-RPC across messages, a passing and a failing session per
   rule, per revision where the rule differs. */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include "check_util.h"

#define V3 "2025-06-18"
#define V2 "2025-03-26"
#define V1 "2024-11-05"
#define V4 "2025-11-25"

static const struct check_case rpc_cases[] = {
	{ "distinct ids, all answered", "", 1, {
	    T_HS(V3, "{}", "{\"tools\":{}}"),
	    { T_REQ("C", "1", "tools/list", "{}"), NULL },
	    { T_REQ("C", "2", "tools/list", "{}"), NULL },
	    { T_RES("S", "1", T_TOOLS), NULL },
	    { T_RES("S", "2", T_TOOLS), NULL } } },
	{ "an id reused while pending", "jsonrpc.duplicate-id", 0, {
	    T_HS(V3, "{}", "{\"tools\":{}}"),
	    { T_REQ("C", "1", "tools/list", "{}"), NULL },
	    { T_REQ("C", "1", "tools/list", "{}"), NULL } } },
	/* Each legacy revision forbids an id used before in the session;
	   2026-07-28 only one still pending. */
	{ "2024-11-05: an id reused once answered", "jsonrpc.id-reused", 1, {
	    T_HS(V1, "{}", "{\"tools\":{}}"),
	    { T_REQ("C", "1", "tools/list", "{}"), NULL },
	    { T_RES("S", "1", T_TOOLS), NULL },
	    { T_REQ("C", "1", "tools/list", "{}"), NULL },
	    { T_RES("S", "1", T_TOOLS), NULL } } },
	{ "2025-03-26: an id reused once answered", "jsonrpc.id-reused", 1, {
	    T_HS(V2, "{}", "{\"tools\":{}}"),
	    { T_REQ("C", "1", "tools/list", "{}"), NULL },
	    { T_RES("S", "1", T_TOOLS), NULL },
	    { T_REQ("C", "1", "tools/list", "{}"), NULL },
	    { T_RES("S", "1", T_TOOLS), NULL } } },
	{ "2025-06-18: an id reused once answered", "jsonrpc.id-reused", 1, {
	    T_HS(V3, "{}", "{\"tools\":{}}"),
	    { T_REQ("C", "1", "tools/list", "{}"), NULL },
	    { T_RES("S", "1", T_TOOLS), NULL },
	    { T_REQ("C", "1", "tools/list", "{}"), NULL },
	    { T_RES("S", "1", T_TOOLS), NULL } } },
	{ "2025-11-25: a server reuses its id once answered",
	  "jsonrpc.id-reused", 1, {
	    T_HS(V4, "{\"roots\":{}}", "{}"),
	    { T_REQ("S", "\"r\"", "roots/list", "{}"), NULL },
	    { T_RES("C", "\"r\"", "{\"roots\":[]}"), NULL },
	    { T_REQ("S", "\"r\"", "roots/list", "{}"), NULL },
	    { T_RES("C", "\"r\"", "{\"roots\":[]}"), NULL } } },
	{ "2025-11-25: distinct ids after an answer", "", 1, {
	    T_HS(V4, "{}", "{\"tools\":{}}"),
	    { T_REQ("C", "1", "tools/list", "{}"), NULL },
	    { T_RES("S", "1", T_TOOLS), NULL },
	    { T_REQ("C", "2", "tools/list", "{}"), NULL },
	    { T_RES("S", "2", T_TOOLS), NULL } } },
	{ "2026-07-28: an id reused once answered", "", 1, {
	    { T_REQ("C", "1", "tools/list", "{" T_META "}"), NULL },
	    { T_RES("S", "1", "{\"resultType\":\"complete\",\"ttlMs\":0,"
	      "\"cacheScope\":\"private\",\"tools\":[]}"),
	      NULL },
	    { T_REQ("C", "1", "tools/list", "{" T_META "}"), NULL },
	    { T_RES("S", "1", "{\"resultType\":\"complete\",\"ttlMs\":0,"
	      "\"cacheScope\":\"private\",\"tools\":[]}"),
	      NULL } } },
	{ "the same id from each side", "", 1, {
	    T_HS(V3, "{\"roots\":{}}", "{\"tools\":{}}"),
	    { T_REQ("C", "7", "tools/list", "{}"), NULL },
	    { T_REQ("S", "7", "roots/list", "{}"), NULL },
	    { T_RES("C", "7", "{\"roots\":[]}"), NULL },
	    { T_RES("S", "7", T_TOOLS), NULL } } },
	{ "a response to an id never sent", "jsonrpc.unknown-id", 0, {
	    T_HS(V3, "{}", "{}"),
	    { T_RES("S", "9", "{}"), NULL } } },
	{ "a response to a string id never sent", "jsonrpc.unknown-id", 0, {
	    T_HS(V3, "{}", "{}"),
	    { T_REQ("C", "1", "ping", "{}"), NULL },
	    { T_RES("S", "\"1\"", "{}"), NULL } } },
	{ "a request answered twice", "jsonrpc.answered-twice", 0, {
	    T_HS(V3, "{}", "{}"),
	    { T_REQ("C", "1", "ping", "{}"), NULL },
	    { T_RES("S", "1", "{}"), NULL },
	    { T_RES("S", "1", "{}"), NULL } } },
	{ "a request never answered", "jsonrpc.unanswered", 1, {
	    T_HS(V3, "{}", "{}"),
	    { T_REQ("C", "1", "ping", "{}"), NULL } } },
	{ "a cancelled request needs no answer", "", 1, {
	    T_HS(V3, "{}", "{}"),
	    { T_REQ("C", "1", "ping", "{}"), NULL },
	    { T_NOTE("C", "notifications/cancelled",
	      "{\"requestId\":1}"), NULL } } },
	{ "an error answers as well as a result", "", 1, {
	    T_HS(V3, "{}", "{}"),
	    { T_REQ("C", "1", "ping", "{}"), NULL },
	    { "S:{\"jsonrpc\":\"2.0\",\"id\":1,\"error\":{\"code\":-32601,"
	      "\"message\":\"no\"}}", NULL } } },
	{ "a batch in 2025-03-26", "", 1, {
	    T_HS(V2, "{}", "{\"tools\":{}}"),
	    { "C:[" T_REQB("1", "tools/list", "{}") ","
	      T_REQB("2", "ping", "{}") "]", NULL },
	    { "S:[" T_RESB("2", "{}") "," T_RESB("1", T_TOOLS) "]", NULL } } },
	{ "a batch in 2025-06-18", "jsonrpc.batch", 0, {
	    T_HS(V3, "{}", "{}"),
	    { "C:[" T_REQB("2", "ping", "{}") "]", NULL },
	    { T_RES("S", "2", "{}"), NULL } } },
	{ "a duplicate id inside a batch", "jsonrpc.duplicate-id", 0, {
	    T_HS(V2, "{}", "{}"),
	    { "C:[" T_REQB("2", "ping", "{}") ","
	      T_REQB("2", "ping", "{}") "]", NULL } } },
	{ "not JSON", "json.parse", 0, {
	    T_HS(V3, "{}", "{}"),
	    { "C:{\"jsonrpc\":\"2.0\",", NULL } } },
	{ "a member twice", "json.duplicate-member", 0, {
	    T_HS(V3, "{}", "{}"),
	    { "C:{\"jsonrpc\":\"2.0\",\"id\":5,\"id\":5,\"method\":"
	      "\"ping\"}", NULL } } },
	{ "a result checked against its request's method", "shape.required",
	  0, {
	    T_HS(V3, "{}", "{\"tools\":{}}"),
	    { T_REQ("C", "1", "tools/list", "{}"), NULL },
	    { T_RES("S", "1", "{}"), NULL } } },
};

Test(check_rpc, table)
{
	check_run_table(rpc_cases, sizeof rpc_cases / sizeof rpc_cases[0]);
}

/* Findings counted by rule: the rules these tests look for, and the rest. */
struct tally {
	size_t	limit, unanswered, truncated, big, other;
};

static void
tally_cb(const struct check_finding *cf, void *arg)
{
	static const struct {
		const char	*rule;
		size_t		 off;
	} rules[] = {
		{ "check.pending-limit", offsetof(struct tally, limit) },
		{ "jsonrpc.unanswered", offsetof(struct tally, unanswered) },
		{ "check.truncated", offsetof(struct tally, truncated) },
		{ "check.too-big", offsetof(struct tally, big) },
	};
	struct tally	*t = arg;
	size_t		 i;

	for (i = 0; i < sizeof rules / sizeof rules[0]; i++) {
		if (strcmp(cf->f->rule, rules[i].rule) == 0) {
			(*(size_t *)((char *)t + rules[i].off))++;
			return;
		}
	}
	t->other++;
}

/* A flood of requests never answered: tracked up to the limit, one note,
   and the end lists a bounded number. */
Test(check_rpc, pending_bounded)
{
	struct tally		 cnt = { 0, 0, 0, 0, 0 };
	struct check		*chk;
	char			 buf[128];
	const char		*hs[] = { T_INIT(V3, "{}") + 2,
				    T_INITR(V3, "{}") + 2, T_INITD + 2 };
	int			 i;

	chk = check_new(tally_cb, &cnt);
	for (i = 0; i < 3; i++)
		check_feed(chk, i + 1, i == 1 ? 'S' : 'C', hs[i]);
	for (i = 0; i < CHECK_PENDING_MAX + 500; i++) {
		snprintf(buf, sizeof buf, "{\"jsonrpc\":\"2.0\",\"id\":%d,"
		    "\"method\":\"ping\"}", i + 1);
		check_feed(chk, i + 4, 'C', buf);
	}
	check_end(chk, CHECK_END_CLEAN);
	check_free(chk);
	cr_assert_eq(cnt.limit, 1);
	cr_assert_eq(cnt.other + cnt.truncated + cnt.big, 0);
	/* 100 listed and one line for the rest. */
	cr_assert_eq(cnt.unanswered, 101);
}

/* A request cut at the record cap: a note, and its response still pairs
   by the recorder's identity (no unknown-id, nothing unanswered). */
Test(check_rpc, truncated_pairs)
{
	const char		*hs[] = { T_INIT(V3, "{}") + 2,
				    T_INITR(V3, "{\"tools\":{}}") + 2,
				    T_INITD + 2 };
	const char		*cut = "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":"
				    "\"tools/call\",\"params\":{\"name\":\"ec";
	const char		*res = T_RESB("4", T_CALLR);
	struct tally		 r = { 0, 0, 0, 0, 0 };
	struct check		*chk;
	struct check_msg	 m;
	int			 i;

	chk = check_new(tally_cb, &r);
	for (i = 0; i < 3; i++)
		check_feed(chk, i + 1, i == 1 ? 'S' : 'C', hs[i]);
	memset(&m, 0, sizeof m);
	m.seq = 4;
	m.dir = DIR_C2S;
	m.raw = cut;
	m.len = strlen(cut);
	m.truncated = 1;
	m.kind = KIND_REQUEST;
	m.method = "tools/call";
	m.rpc_id = "4";
	check_message(chk, &m);
	check_feed(chk, 5, 'S', res);
	check_end(chk, CHECK_END_CLEAN);
	check_free(chk);
	cr_assert_eq(r.truncated, 1);
	cr_assert_eq(r.other + r.limit + r.unanswered, 0);
}

/* A response cut at the record cap: the recorder gives it its request's
   method, yet it is a response (its kind), so it pairs with the request
   and is no request of the server's left unanswered. */
Test(check_rpc, truncated_response_pairs)
{
	static const struct {
		enum msg_kind	 kind;
		const char	*cut;
	} rows[] = {
		{ KIND_RESPONSE, "{\"jsonrpc\":\"2.0\",\"id\":4,\"result\":"
		    "{\"contents\":[{\"text\":\"AAAA" },
		{ KIND_ERROR, "{\"jsonrpc\":\"2.0\",\"id\":4,\"error\":"
		    "{\"code\":-32603,\"message\":\"AAAA" },
	};
	const char		*hs[] = { T_INIT(V3, "{}") + 2,
				    T_INITR(V3, "{\"resources\":{}}") + 2,
				    T_INITD + 2, T_REQB("4", "resources/read",
				    "{\"uri\":\"file:///a\"}") };
	struct tally		 r;
	struct check		*chk;
	struct check_msg	 m;
	size_t			 k;
	int			 i;

	for (k = 0; k < sizeof rows / sizeof rows[0]; k++) {
		memset(&r, 0, sizeof r);
		chk = check_new(tally_cb, &r);
		for (i = 0; i < 4; i++)
			check_feed(chk, i + 1, i == 1 ? 'S' : 'C',
			    hs[i]);
		memset(&m, 0, sizeof m);
		m.seq = 5;
		m.dir = DIR_S2C;
		m.raw = rows[k].cut;
		m.len = strlen(rows[k].cut);
		m.truncated = 1;
		m.kind = rows[k].kind;
		m.method = "resources/read";
		m.rpc_id = "4";
		check_message(chk, &m);
		check_end(chk, CHECK_END_CLEAN);
		check_free(chk);
		cr_expect_eq(r.truncated, 1, "row %zu", k);
		cr_expect_eq(r.other + r.limit + r.unanswered, 0,
		    "row %zu: %zu other findings", k, r.other);
	}
}

/*
 * A whole response holding more values than CHECK_PARSE_VALUES_MAX (a
 * small message of empty objects would parse to 80 times its size): not
 * parsed, one note, and it still answers its request by the recorder's
 * identity.
 */
Test(check_rpc, too_many_values)
{
	const char		*hs[] = { T_INIT(V3, "{}") + 2,
				    T_INITR(V3, "{\"resources\":{}}") + 2,
				    T_INITD + 2, T_REQB("4", "resources/read",
				    "{\"uri\":\"file:///a\"}") };
	static const char	 head[] = "{\"jsonrpc\":\"2.0\",\"id\":4,"
				    "\"result\":{\"contents\":[";
	struct tally		 r;
	struct check		*chk;
	struct check_msg	 m;
	char			*big, *p;
	size_t			 i, n = CHECK_PARSE_VALUES_MAX / 2 + 1;

	big = malloc(sizeof head + n * 3 + 8);
	cr_assert_not_null(big);
	p = big + strlen(strcpy(big, head));
	for (i = 0; i < n; i++) {
		memcpy(p, i ? ",{}" : "{} ", 3);
		p += 3;
	}
	strcpy(p, "]}}");
	memset(&r, 0, sizeof r);
	chk = check_new(tally_cb, &r);
	for (i = 0; i < 4; i++)
		check_feed(chk, (int64_t)i + 1, i == 1 ? 'S' : 'C',
		    hs[i]);
	memset(&m, 0, sizeof m);
	m.seq = 5;
	m.dir = DIR_S2C;
	m.raw = big;
	m.len = strlen(big);
	m.kind = KIND_RESPONSE;
	m.method = "resources/read";
	m.rpc_id = "4";
	check_message(chk, &m);
	check_end(chk, CHECK_END_CLEAN);
	check_free(chk);
	free(big);
	cr_expect_eq(r.big, 1);
	cr_expect_eq(r.truncated, 0);
	cr_expect_eq(r.other + r.limit + r.unanswered, 0,
	    "%zu other findings", r.other);
}

/* Findings of a session fed piece by piece: rules counted, ids measured. */
struct seen {
	char	rules[4096];	/* "rule rule ...", in order */
	size_t	unanswered_text;	/* the longest jsonrpc.unanswered */
	size_t	longest;		/* the longest id or text, any */
};

static void
seen_cb(const struct check_finding *cf, void *arg)
{
	struct seen	*s = arg;
	size_t		 n = strlen(s->rules);

	if (n + strlen(cf->f->rule) + 2 < sizeof s->rules)
		snprintf(s->rules + n, sizeof s->rules - n, "%s ",
		    cf->f->rule);
	if (strcmp(cf->f->rule, "jsonrpc.unanswered") == 0 &&
	    strlen(cf->f->text) > s->unanswered_text)
		s->unanswered_text = strlen(cf->f->text);
	if (strlen(cf->f->text) > s->longest)
		s->longest = strlen(cf->f->text);
	if (cf->id != NULL && strlen(cf->id) > s->longest)
		s->longest = strlen(cf->id);
}

/* The legacy handshake of V3. */
static int64_t
feed_hs(struct check *chk, const char *caps)
{
	check_feed(chk, 1, 'C', T_INIT(V3, "{}") + 2);
	check_feed(chk, 2, 'S', caps);
	check_feed(chk, 3, 'C', T_INITD + 2);
	return (4);
}

#define LONG_ID_LEN	(256 * 1024)

/*
 * A request with ID (a string of LONG_ID_LEN 'x' then tail); its response
 * (response 1), or a cancel of it (response 2).
 */
static char *
long_req(const char *tail, int response)
{
	const char	*head = response == 1 ? "{\"jsonrpc\":\"2.0\","
			    "\"result\":{},\"id\":\"" : response == 2 ?
			    "{\"jsonrpc\":\"2.0\",\"method\":"
			    "\"notifications/cancelled\",\"params\":"
			    "{\"requestId\":\"" : "{\"jsonrpc\":\"2.0\","
			    "\"method\":\"ping\",\"id\":\"";
	char		*s;
	size_t		 n = LONG_ID_LEN + 128, h = strlen(head);

	s = malloc(n);
	cr_assert_not_null(s);
	memcpy(s, head, h);
	memset(s + h, 'x', LONG_ID_LEN);
	snprintf(s + h + LONG_ID_LEN, n - h - LONG_ID_LEN, "%s\"}%s", tail,
	    response == 2 ? "}" : "");
	return (s);
}

/*
 * Ids past 256 bytes are kept as a digest: the same long id still pairs
 * and is still a duplicate, one differing only at its end does not pair,
 * and every finding quotes it short, in its text and as its id (a long
 * id copied whole into each finding made 300 findings cost 300 ids).
 */
Test(check_rpc, long_ids_digested)
{
	struct seen	 s;
	struct check	*chk;
	char		*a = long_req("a", 0), *b = long_req("b", 0);
	char		*ra = long_req("a", 1), *rc = long_req("c", 1);
	char		*ca = long_req("a", 2), *cd = long_req("d", 2);
	int64_t		 seq;

	memset(&s, 0, sizeof s);
	chk = check_new(seen_cb, &s);
	seq = feed_hs(chk, T_INITR(V3, "{}") + 2);
	check_feed(chk, seq++, 'C', a);
	check_feed(chk, seq++, 'C', b);
	check_feed(chk, seq++, 'C', a);	/* duplicate, a pending */
	check_feed(chk, seq++, 'S', ra);	/* answers a */
	check_feed(chk, seq++, 'S', rc);	/* c was never sent */
	check_feed(chk, seq++, 'S', ra);	/* a again: answered twice */
	/* A cancel crossing its answer. */
	check_feed(chk, seq++, 'C', ca);
	check_feed(chk, seq++, 'C', cd);	/* d was never sent */
	check_feed(chk, seq++, 'C', a);	/* a reused once answered */
	check_feed(chk, seq++, 'S', ra);
	check_end(chk, CHECK_END_CLEAN);	/* b unanswered */
	check_free(chk);
	cr_assert_str_eq(s.rules, "jsonrpc.duplicate-id jsonrpc.unknown-id "
	    "jsonrpc.answered-twice cancel.finished cancel.unknown "
	    "jsonrpc.id-reused jsonrpc.unanswered ");
	printf("long ids: the longest id or text of a finding is %zu bytes\n",
	    s.longest);
	cr_assert_lt(s.longest, 1024);
	/* b's finding at the end quotes the kept key, not 256 KiB. */
	printf("long ids: the unanswered finding is %zu bytes\n",
	    s.unanswered_text);
	cr_assert_lt(s.unanswered_text, 512);
	free(a);
	free(b);
	free(ra);
	free(rc);
	free(ca);
	free(cd);
}

/*
 * While requests past the pending limit are untracked, an unknown id,
 * token or cancel may be one of theirs and is not reported; once as many
 * unknown ids were answered, reports resume.  One note in all.
 */
Test(check_rpc, pending_limit_drains)
{
	struct seen	 s;
	struct check	*chk;
	char		 buf[160];
	int64_t		 seq;
	int		 i, n = CHECK_PENDING_MAX + 5;

	memset(&s, 0, sizeof s);
	chk = check_new(seen_cb, &s);
	seq = feed_hs(chk, T_INITR(V3, "{}") + 2);
	for (i = 1; i <= n; i++) {
		snprintf(buf, sizeof buf, "{\"jsonrpc\":\"2.0\",\"id\":%d,"
		    "\"method\":\"ping\",\"params\":{\"_meta\":"
		    "{\"progressToken\":%d}}}", i, i);
		check_feed(chk, seq++, 'C', buf);
	}
	/* Token of an untracked request: maybe running, not reported. */
	check_feed(chk, seq++, 'S', "{\"jsonrpc\":\"2.0\",\"method\":"
	    "\"notifications/progress\",\"params\":{\"progressToken\":"
	    "10003,\"progress\":1}}");
	for (i = 1; i <= n; i++) {
		snprintf(buf, sizeof buf, "{\"jsonrpc\":\"2.0\",\"id\":%d,"
		    "\"result\":{}}", i);
		check_feed(chk, seq++, 'S', buf);
	}
	cr_assert_str_eq(s.rules, "check.pending-limit ");
	/* Drained: an unknown id and an unknown token are reported again. */
	check_feed(chk, seq++, 'S', "{\"jsonrpc\":\"2.0\",\"id\":99999,"
	    "\"result\":{}}");
	check_feed(chk, seq++, 'S', "{\"jsonrpc\":\"2.0\",\"method\":"
	    "\"notifications/progress\",\"params\":{\"progressToken\":"
	    "99999,\"progress\":1}}");
	check_end(chk, CHECK_END_CLEAN);
	check_free(chk);
	cr_assert_str_eq(s.rules, "check.pending-limit jsonrpc.unknown-id "
	    "progress.unknown-token ");
}

/*
 * A second answer to an id already answered, while requests are
 * untracked, is reported, and does not use up their count: the real
 * answer of the untracked one is then quiet.
 */
Test(check_rpc, pending_limit_answered_twice)
{
	struct seen	 s;
	struct check	*chk;
	char		 buf[160];
	int64_t		 seq;
	int		 i, n = CHECK_PENDING_MAX + 1;

	memset(&s, 0, sizeof s);
	chk = check_new(seen_cb, &s);
	seq = feed_hs(chk, T_INITR(V3, "{}") + 2);
	for (i = 1; i <= n; i++) {
		snprintf(buf, sizeof buf, "{\"jsonrpc\":\"2.0\",\"id\":%d,"
		    "\"method\":\"ping\"}", i);
		check_feed(chk, seq++, 'C', buf);
	}
	check_feed(chk, seq++, 'S',
	    "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}");
	check_feed(chk, seq++, 'S',
	    "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}");
	for (i = 2; i <= n; i++) {
		snprintf(buf, sizeof buf, "{\"jsonrpc\":\"2.0\",\"id\":%d,"
		    "\"result\":{}}", i);
		check_feed(chk, seq++, 'S', buf);
	}
	check_end(chk, CHECK_END_CLEAN);
	check_free(chk);
	cr_assert_str_eq(s.rules, "check.pending-limit "
	    "jsonrpc.answered-twice ");
}

/* Untracked requests never answered are counted at the end. */
Test(check_rpc, pending_limit_unanswered_counted)
{
	struct seen	 s;
	struct check	*chk;
	char		 buf[160];
	int64_t		 seq;
	int		 i;

	memset(&s, 0, sizeof s);
	chk = check_new(seen_cb, &s);
	seq = feed_hs(chk, T_INITR(V3, "{}") + 2);
	for (i = 1; i <= CHECK_PENDING_MAX + 5; i++) {
		snprintf(buf, sizeof buf, "{\"jsonrpc\":\"2.0\",\"id\":%d,"
		    "\"method\":\"ping\"}", i);
		check_feed(chk, seq++, 'C', buf);
	}
	for (i = 1; i <= CHECK_PENDING_MAX; i++) {
		snprintf(buf, sizeof buf, "{\"jsonrpc\":\"2.0\",\"id\":%d,"
		    "\"result\":{}}", i);
		check_feed(chk, seq++, 'S', buf);
	}
	check_end(chk, CHECK_END_CLEAN);
	check_free(chk);
	/* The 5 untracked ones make the one "more were never answered". */
	cr_assert_str_eq(s.rules, "check.pending-limit jsonrpc.unanswered ");
}

/*
 * The limit notes are once a session: a new session after a 404 that
 * fills the tools table again gets its own note.
 */
Test(check_rpc, tools_limit_noted_again_after_404)
{
#define ACC "[\"Accept\",\"application/json, text/event-stream\"]"
#define PV "[\"MCP-Protocol-Version\",\"2025-06-18\"]"
#define CT "[\"Content-Type\",\"application/json\"]"
	static const struct check_http x_init[2] = {
	    { 1, "POST", "/mcp", "[" ACC "]",
	      "[" CT ",[\"Mcp-Session-Id\",\"s-1\"]]", 200, 0 },
	    { 2, "POST", "/mcp", "[" ACC "]",
	      "[" CT ",[\"Mcp-Session-Id\",\"s-2\"]]", 200, 0 } };
	static const struct check_http x_ok[2] = {
	    { 3, "POST", "/mcp", "[" ACC ",[\"Mcp-Session-Id\",\"s-1\"]," PV
	      "]", "[" CT "]", 200, 0 },
	    { 4, "POST", "/mcp", "[" ACC ",[\"Mcp-Session-Id\",\"s-2\"]," PV
	      "]", "[" CT "]", 200, 0 } };
	static const struct check_http x_done[2] = {
	    { 5, "POST", "/mcp", "[" ACC ",[\"Mcp-Session-Id\",\"s-1\"]," PV
	      "]", "[]", 202, 0 },
	    { 6, "POST", "/mcp", "[" ACC ",[\"Mcp-Session-Id\",\"s-2\"]," PV
	      "]", "[]", 202, 0 } };
	static const struct check_http x_404 = { 7, "POST", "/mcp", "[" ACC
	    ",[\"Mcp-Session-Id\",\"s-1\"]," PV "]", "[" CT "]", 404, 0 };
	struct seen	 s;
	struct check	*chk;
	char		*list, *p;
	int64_t		 seq = 1;
	int		 i, round;

	memset(&s, 0, sizeof s);
	list = malloc((size_t)(CHECK_TOOLS_MAX + 10) * 64 + 128);
	cr_assert_not_null(list);
	p = list + sprintf(list, "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":"
	    "{\"tools\":[");
	for (i = 0; i <= CHECK_TOOLS_MAX; i++)
		p += sprintf(p, "%s{\"name\":\"t%d\",\"inputSchema\":"
		    "{\"type\":\"object\"}}", i > 0 ? "," : "", i);
	strcpy(p, "]}}");
	chk = check_new(seen_cb, &s);
	for (round = 0; round < 2; round++) {
		check_feed_http(chk, seq++, 'C', T_INIT(V3, "{}") + 2,
		    &x_init[round]);
		check_feed_http(chk, seq++, 'S',
		    T_INITR(V3, "{\"tools\":{}}") + 2,
		    &x_init[round]);
		check_feed_http(chk, seq++, 'C', T_INITD + 2, &x_done[round]);
		check_feed_http(chk, seq++, 'C',
		    T_REQB("1", "tools/list", "{}"),
		    &x_ok[round]);
		check_feed_http(chk, seq++, 'S', list, &x_ok[round]);
		if (round == 0)
			check_feed_http(chk, seq++, 'C',
			    T_REQB("2", "ping", "{}"),
			    &x_404);
	}
	check_end(chk, CHECK_END_CLEAN);
	check_free(chk);
	free(list);
	cr_assert_str_eq(s.rules, "tool.schema-limit check.tools-cut "
	    "tool.schema-limit check.tools-cut ");
}
#undef ACC
#undef PV
#undef CT
