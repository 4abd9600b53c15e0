/* Unit tests for the replay plan: pairing and causal ordering. */

#include <stdio.h>
#include <string.h>

#include <criterion/criterion.h>

#include "replay.h"
#include "unit.h"

struct rec {
	enum dir	 dir;
	int64_t		 mono_ns;
	const char	*raw;
};

static void
build(struct plan *p, const struct rec *recs, size_t n)
{
	size_t	i;

	memset(p, 0, sizeof *p);
	for (i = 0; i < n; i++)
		plan_add(p, (int64_t)i + 1, recs[i].dir, recs[i].mono_ns,
		    recs[i].raw, strlen(recs[i].raw));
	plan_build(p);
}

#define REQ(id, m)	"{\"jsonrpc\":\"2.0\",\"id\":" #id ",\"method\":\"" m "\"}"
#define RESP(id)	"{\"jsonrpc\":\"2.0\",\"id\":" #id ",\"result\":{}}"
#define NOTE(m)		"{\"jsonrpc\":\"2.0\",\"method\":\"" m "\"}"

Test(plan, ping_pong_waits_for_each_answer, .timeout = UNIT_TIMEOUT)
{
	static const struct rec recs[] = {
		{ DIR_C2S, 100, REQ(1, "a") },
		{ DIR_S2C, 200, RESP(1) },
		{ DIR_C2S, 300, REQ(2, "b") },
		{ DIR_S2C, 400, RESP(2) },
		{ DIR_C2S, 450, NOTE("n") },
	};
	struct plan	p;

	build(&p, recs, 5);
	cr_assert_eq(p.nsends, 3);
	cr_assert_eq(p.sends[0].msg, 0);
	cr_assert_eq(p.sends[0].nneeds, 0);
	cr_assert_eq(p.sends[1].msg, 2);
	cr_assert_eq(p.sends[1].nneeds, 1);
	cr_assert_eq(p.sends[1].needs[0], 0, "request 2 waits for answer 1");
	cr_assert_eq(p.sends[2].msg, 4);
	cr_assert_eq(p.sends[2].nneeds, 1);
	cr_assert_eq(p.sends[2].needs[0], 2);
	cr_assert_eq(p.sends[1].gap_ns, 200);
	cr_assert_eq(p.sends[2].gap_ns, 150);
	cr_assert_eq(p.m[0].answer, 1);
	cr_assert_eq(p.m[1].request, 0);
	cr_assert_str_eq(p.m[3].method, "b", "a response takes its request's "
	    "method");
	plan_clear(&p);
}

Test(plan, pipelined_stays_pipelined, .timeout = UNIT_TIMEOUT)
{
	static const struct rec recs[] = {
		{ DIR_C2S, 100, REQ(1, "a") },
		{ DIR_C2S, 110, REQ(2, "b") },
		{ DIR_C2S, 120, REQ("x", "c") },
		{ DIR_S2C, 200, RESP(2) },
		{ DIR_S2C, 210, RESP(1) },
		{ DIR_S2C, 220, RESP("x") },
		{ DIR_C2S, 300, REQ(3, "d") },
	};
	struct plan	p;
	size_t		i;
	int		seen[3] = { 0, 0, 0 };

	build(&p, recs, 7);
	cr_assert_eq(p.nsends, 4);
	for (i = 0; i < 3; i++)
		cr_assert_eq(p.sends[i].nneeds, 0, "send %zu waits for "
		    "nothing", i);
	cr_assert_eq(p.sends[3].nneeds, 3);
	for (i = 0; i < 3; i++)
		seen[p.sends[3].needs[i]] = 1;
	cr_assert(seen[0] && seen[1] && seen[2]);
	cr_assert_eq(p.m[2].answer, 5, "string ids pair too");
	plan_clear(&p);
}

Test(plan, server_requests_are_answered_not_sent, .timeout = UNIT_TIMEOUT)
{
	static const struct rec recs[] = {
		{ DIR_C2S, 100, REQ(1, "tools/call") },
		{ DIR_S2C, 150, REQ(0, "sampling/createMessage") },
		{ DIR_C2S, 160, RESP(0) },
		{ DIR_S2C, 170, NOTE("notifications/progress") },
		{ DIR_S2C, 200, RESP(1) },
		{ DIR_C2S, 300, REQ(2, "ping") },
	};
	struct plan	p;

	build(&p, recs, 6);
	cr_assert_eq(p.nsends, 2, "the client's answer is not a send");
	cr_assert_eq(p.sends[0].msg, 0);
	cr_assert_eq(p.sends[1].msg, 5);
	cr_assert_eq(p.sends[1].nneeds, 1);
	cr_assert_eq(p.sends[1].needs[0], 0);
	cr_assert_eq(p.m[1].answer, 2, "the server's request has its answer");
	cr_assert_str_eq(p.m[2].method, "sampling/createMessage");
	cr_assert_eq(p.m[0].answer, 4);
	plan_clear(&p);
}

Test(plan, same_id_in_both_directions, .timeout = UNIT_TIMEOUT)
{
	/* id 0 in flight both ways: a response pairs with the other way. */
	static const struct rec recs[] = {
		{ DIR_C2S, 100, REQ(0, "initialize") },
		{ DIR_S2C, 110, REQ(0, "roots/list") },
		{ DIR_C2S, 120, RESP(0) },
		{ DIR_S2C, 130, RESP(0) },
	};
	struct plan	p;

	build(&p, recs, 4);
	cr_assert_eq(p.m[1].answer, 2);
	cr_assert_eq(p.m[0].answer, 3);
	cr_assert_str_eq(p.m[3].method, "initialize");
	cr_assert_str_eq(p.m[2].method, "roots/list");
	plan_clear(&p);
}

Test(plan, params_key_ignores_meta_and_key_order, .timeout = UNIT_TIMEOUT)
{
	json_t	*a, *b;
	char	*ka, *kb;

	a = json_loads("{\"method\":\"m\",\"params\":{\"b\":1,\"a\":[1,2],"
	    "\"_meta\":{\"progressToken\":7}}}", 0, NULL);
	b = json_loads("{\"params\":{\"a\":[1,2],\"b\":1},\"method\":\"m\"}",
	    0, NULL);
	ka = match_request_key(a, NULL);
	kb = match_request_key(b, NULL);
	cr_assert_str_eq(ka, kb);
	cr_assert_str_eq(ka, "m\n{\"a\":[1,2],\"b\":1}");
	free(ka);
	free(kb);
	json_decref(a);
	json_decref(b);
}

/*
 * An empty line as stored comes as a NULL pointer and length 0 (SQLite's
 * empty blob): it is an invalid message, sent as it came, and pairing
 * around it is unchanged.
 */
Test(plan, empty_message_from_null, .timeout = UNIT_TIMEOUT)
{
	struct plan	p;

	memset(&p, 0, sizeof p);
	plan_add(&p, 1, DIR_C2S, 100, REQ(1, "a"), strlen(REQ(1, "a")));
	plan_add(&p, 2, DIR_C2S, 110, NULL, 0);
	plan_add(&p, 3, DIR_S2C, 150, NULL, 0);
	plan_add(&p, 4, DIR_S2C, 200, RESP(1), strlen(RESP(1)));
	plan_build(&p);
	cr_assert_eq(p.n, 4);
	cr_assert_eq(p.m[1].kind, KIND_INVALID);
	cr_assert_eq(p.m[1].len, 0);
	cr_assert_str_eq(p.m[1].raw, "");
	cr_assert_null(plan_json(&p.m[1]));
	cr_assert_eq(p.m[0].answer, 3, "the request still pairs");
	cr_assert_eq(p.nsends, 2, "the empty client line is sent as it came");
	plan_clear(&p);
}

/*
 * A message's JSON is built when first asked for, not when added (a
 * mock of a long recording parses only what it uses), and is the same
 * whenever asked; the plan grows past its first allocation intact.
 */
Test(plan, json_on_first_use, .timeout = UNIT_TIMEOUT)
{
	struct plan	 p;
	json_t		*j;
	size_t		 i;

	memset(&p, 0, sizeof p);
	for (i = 0; i < 3000; i += 2) {
		plan_add(&p, (int64_t)i + 1, DIR_C2S, (int64_t)i * 10,
		    REQ(1, "a"), strlen(REQ(1, "a")));
		plan_add(&p, (int64_t)i + 2, DIR_S2C, (int64_t)i * 10 + 5,
		    RESP(1), strlen(RESP(1)));
	}
	plan_build(&p);
	cr_assert_eq(p.n, 3000);
	cr_assert_eq(p.nsends, 1500);
	cr_assert_eq(p.m[2998].answer, 2999);
	for (i = 0; i < p.n; i++)
		cr_assert_eq(p.m[i].jdone, 0, "message %zu parsed early", i);
	j = plan_json(&p.m[2999]);
	cr_assert_not_null(j);
	cr_assert_eq(json_integer_value(json_object_get(j, "id")), 1);
	cr_assert_eq(plan_json(&p.m[2999]), j, "parsed once");
	cr_assert_eq(p.m[2997].jdone, 0, "the others still not");
	plan_clear(&p);
}

Test(plan, json_dropped_parsed_again, .timeout = UNIT_TIMEOUT)
{
	static const struct rec recs[] = {
		{ DIR_C2S, 10, REQ(1, "a") },
		{ DIR_S2C, 20, "not json" },
	};
	struct plan	 p;
	json_t		*j;

	build(&p, recs, 2);
	j = plan_json(&p.m[0]);
	cr_assert_not_null(j);
	plan_json_drop(&p.m[0]);
	cr_assert_null(p.m[0].jcache);
	cr_assert_eq(p.m[0].jdone, 0);
	j = plan_json(&p.m[0]);
	cr_assert_not_null(j, "parsed again after a drop");
	cr_assert_str_eq(json_string_value(json_object_get(j, "method")), "a");
	/* Not JSON stays so: a drop does not make it parse again. */
	cr_assert_null(plan_json(&p.m[1]));
	plan_json_drop(&p.m[1]);
	cr_assert_eq(p.m[1].jdone, 1);
	cr_assert_null(plan_json(&p.m[1]));
	plan_clear(&p);
}

/*
 * A session larger than a streamed plan's window: bursts of pipelined
 * requests answered out of order, with notifications between.  Message i
 * of it, as text, in buf.
 */
#define STREAM_N	60000	/* messages: several windows' worth */
#define STREAM_BURST	40	/* requests in flight at once */

static const char *
stream_msg(size_t i, char *buf, size_t size, enum dir *dir)
{
	size_t	burst = i / (2 * STREAM_BURST + 1), k;

	k = i % (2 * STREAM_BURST + 1);
	if (k < STREAM_BURST) {
		*dir = DIR_C2S;
		snprintf(buf, size, "{\"jsonrpc\":\"2.0\",\"id\":%zu,"
		    "\"method\":\"m%zu\"}", burst * STREAM_BURST + k, k);
	} else if (k < 2 * STREAM_BURST) {
		/* Answered in reverse order. */
		*dir = DIR_S2C;
		snprintf(buf, size, "{\"jsonrpc\":\"2.0\",\"id\":%zu,"
		    "\"result\":{}}", burst * STREAM_BURST +
		    (2 * STREAM_BURST - 1 - k));
	} else {
		*dir = DIR_S2C;
		snprintf(buf, size, "{\"jsonrpc\":\"2.0\",\"method\":\"n\"}");
	}
	return buf;
}

/* plan_source_fn over stream_msg(): arg counts the messages given. */
static int
stream_src_cb(struct plan *p, void *arg, char **cause)
{
	size_t		*next = arg;
	enum dir	 dir;
	char		 buf[128];

	if (*next == STREAM_N)
		return 0;
	stream_msg(*next, buf, sizeof buf, &dir);
	plan_add(p, (int64_t)*next + 1, dir, (int64_t)*next * 10, buf,
	    strlen(buf));
	(*next)++;
	return 1;
}

Test(plan, streamed_as_whole_in_a_bounded_window, .timeout = UNIT_TIMEOUT)
{
	struct plan	 whole, st;
	struct rmsg	*a, *b;
	struct send	*sa, *sb;
	enum dir	 dir;
	char		 buf[128], *cause = NULL;
	size_t		 i, next = 0, seen = 0, sseen = 0, most = 0;

	memset(&whole, 0, sizeof whole);
	for (i = 0; i < STREAM_N; i++) {
		stream_msg(i, buf, sizeof buf, &dir);
		plan_add(&whole, (int64_t)i + 1, dir, (int64_t)i * 10, buf,
		    strlen(buf));
	}
	plan_build(&whole);

	plan_stream(&st, stream_src_cb, &next);
	while (plan_fill(&st, &cause) > 0 || plan_first(&st) <
	    plan_end(&st)) {
		cr_assert_null(cause);
		if (plan_end(&st) - plan_first(&st) > most)
			most = plan_end(&st) - plan_first(&st);
		/* Each message read is paired as in the whole plan. */
		for (; seen < plan_end(&st); seen++) {
			a = &whole.m[seen];
			b = plan_msg(&st, seen);
			cr_assert_eq(b->seq, a->seq);
			cr_assert_eq(b->request, a->request, "message %zu",
			    seen);
			if (b->request >= 0)
				cr_assert_eq(plan_msg(&st, (size_t)b->request)->
				    answer, (ssize_t)seen);
		}
		for (; sseen < plan_sends_end(&st); sseen++) {
			sa = &whole.sends[sseen];
			sb = plan_send(&st, sseen);
			cr_assert_eq(sb->msg, sa->msg);
			cr_assert_eq(sb->gap_ns, sa->gap_ns);
			cr_assert_eq(sb->nneeds, sa->nneeds, "send %zu", sseen);
			if (sa->nneeds > 0)
				cr_assert_arr_eq(sb->needs, sa->needs,
				    sa->nneeds * sizeof *sa->needs);
		}
		/* Done with all but the newest burst, as replay would be. */
		if (plan_full(&st) || st.src_done)
			plan_release(&st, st.src_done ? plan_end(&st) :
			    plan_end(&st) - 2 * STREAM_BURST, plan_sends_end(&st) -
			    (st.src_done ? 0 : 1));
	}
	cr_assert_eq(seen, STREAM_N);
	cr_assert_eq(sseen, whole.nsends);
	cr_assert(most < STREAM_N / 2, "the window held %zu of %d messages",
	    most, STREAM_N);
	cr_assert(st.alloc < STREAM_N / 2, "the array grew to %zu", st.alloc);
	plan_clear(&st);
	plan_clear(&whole);
}

/*
 * A request whose answer comes more than a window after it: let go of
 * with the window, it stays pinned and its answer pairs with it.
 */
#define FAR_N		40000	/* request, notifications, answer */

/* plan_source_fn: request 1, FAR_N - 2 notifications, its answer. */
static int
far_src_cb(struct plan *p, void *arg, char **cause)
{
	size_t		*next = arg;
	const char	*s;
	enum dir	 dir = DIR_S2C;

	if (*next == FAR_N)
		return 0;
	if (*next == 0) {
		s = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"slow\"}";
		dir = DIR_C2S;
	} else if (*next == FAR_N - 1)
		s = "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}";
	else
		s = "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\"}";
	plan_add(p, (int64_t)*next + 1, dir, (int64_t)*next, s, strlen(s));
	(*next)++;
	return 1;
}

Test(plan, streamed_answer_further_than_the_window, .timeout = UNIT_TIMEOUT)
{
	struct plan	 st;
	struct rmsg	*q;
	char		*cause = NULL;
	size_t		 next = 0;

	plan_stream(&st, far_src_cb, &next);
	while (plan_fill(&st, &cause) > 0) {
		cr_assert(plan_first(&st) > 0 || plan_end(&st) < FAR_N);
		if (plan_first(&st) == 0)
			cr_assert(plan_pins(&st, 0));
		plan_release(&st, plan_end(&st) - 1, plan_sends_end(&st));
	}
	cr_assert_null(cause);
	cr_assert(plan_first(&st) > 0);
	cr_assert(plan_pinned(&st, 0));
	cr_assert_eq(plan_pinned_oldest(&st), 0);
	q = plan_msg(&st, 0);
	cr_assert_str_eq(q->method, "slow");
	cr_assert_eq(q->answer, FAR_N - 1);
	cr_assert_eq(plan_msg(&st, FAR_N - 1)->request, 0);
	cr_assert_str_eq(plan_msg(&st, FAR_N - 1)->method, "slow");
	plan_unpin(&st, 0);
	cr_assert_eq(plan_pinned_oldest(&st), -1);
	cr_assert(!plan_pinned(&st, 0));
	plan_clear(&st);
}
