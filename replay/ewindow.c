/*
 * The part of the recording replay's engine holds: a window from the
 * oldest message it still needs (a request in flight, a send not sent)
 * to as far as the plan has read ahead (plan.c bounds it).  Each message
 * is looked at once when read (the recorded notifications counted, the
 * recorded answers to the server's requests indexed) and turned into
 * its result when let go, in the recording's order, so a replay of a
 * million messages holds what a few thousand need.  A session smaller
 * than the window is read whole first and let go only at the end: its
 * replay runs as it always did.
 */

#include <stdlib.h>
#include <string.h>

#include "engine_int.h"

/*
 * Results the report keeps: the first ENGINE_RESULTS_KEPT whatever they
 * are, then up to as many more that are not the same (different,
 * missing, cut).  The rest are counted only, and the report says how
 * many it does not show: a million results would be most of a big
 * replay's memory, and nobody reads them one by one.
 */
#define ENGINE_RESULTS_KEPT	1000
/*
 * The recorded answers to the server's own requests kept to answer it
 * again (each a parsed message): a client answers a few sampling or
 * roots requests, not one per message.  Past it, later ones are not
 * kept and the server's requests they would have answered get the
 * first ones or none.
 */
#define ENGINE_SRV_ANSWERS_MAX	4096

static void	ewindow_result(struct engine *, struct rmsg *);
static void	ewindow_unpin_oldest(struct engine *);

/* Whether every message of the recording has been read. */
int
ewindow_read_all(const struct engine *e)
{
	return e->plan->src == NULL || e->plan->src_done;
}

/* Add recorded answer a to the list under key. */
static void
ewindow_index_answer(struct engine *e, const char *key, json_t *a)
{
	json_t	*list;

	if ((list = json_object_get(e->srv_answers, key)) == NULL) {
		list = json_array();
		json_object_set_new(e->srv_answers, key, list);
	}
	json_array_append(list, a);
}

/*
 * The recorded client's answer a to the server's request q: kept under
 * q's key, and under its method alone for when params carry per-run
 * values.
 */
static void
ewindow_index_server_request(struct engine *e, const struct rmsg *q,
    const struct rmsg *a)
{
	char	*key;

	if (plan_json(q) == NULL || plan_json(a) == NULL)
		return;
	if (e->srv_kept++ == ENGINE_SRV_ANSWERS_MAX) {
		engine_note(e, "more than %d recorded answers to the server's "
		    "requests: later ones are not used",
		    ENGINE_SRV_ANSWERS_MAX);
		return;
	}
	if (e->srv_kept > ENGINE_SRV_ANSWERS_MAX)
		return;
	key = match_request_key(plan_json(q), NULL);
	ewindow_index_answer(e, key, plan_json(a));
	free(key);
	xasprintf(&key, "%s\n*", q->method != NULL ? q->method : "");
	ewindow_index_answer(e, key, plan_json(a));
	free(key);
}

/* Look at message m, just read, once. */
static void
ewindow_read_one(struct engine *e, struct rmsg *m)
{
	struct rmsg	*q;

	if (m->dir == DIR_S2C && m->kind == KIND_NOTIFICATION &&
	    m->method != NULL)
		json_object_set_new(e->notif_rec, m->method, json_integer(
		    json_integer_value(json_object_get(e->notif_rec,
		    m->method)) + 1));
	if (m->request < 0)
		return;
	q = plan_msg(e->plan, (size_t)m->request);
	if (m->dir == DIR_C2S && q->dir == DIR_S2C &&
	    q->kind == KIND_REQUEST)
		ewindow_index_server_request(e, q, m);
	else if (q->rq != NULL && q->rq->live != NULL) {
		/* Its live answer came first: compared now. */
		engine_compare(e, q->rq, q->rq->live);
		json_decref(q->rq->live);
		q->rq->live = NULL;
	}
	/*
	 * A request let go of with the window before its answer was read
	 * (done with live: answered, timed out, or never sent) has its
	 * result now.
	 */
	if (plan_pinned(e->plan, (size_t)m->request)) {
		ewindow_result(e, q);
		ewindow_rreq_free(q->rq);
		plan_unpin(e->plan, (size_t)m->request);
	}
}

/* Read ahead as far as the window allows, looking at each message. */
void
ewindow_fill(struct engine *e)
{
	struct plan	*p = e->plan;
	char		*cause = NULL;

	if (plan_fill(p, &cause) < 0) {
		engine_note(e, "the rest of the recording could not be read: "
		    "%s", cause);
		if (e->rep->lost == NULL)
			xasprintf(&e->rep->lost, "the recording could not be "
			    "read to its end: %s", cause);
		free(cause);
	}
	if (e->seen < plan_first(p))
		e->seen = plan_first(p);
	for (; e->seen < plan_end(p); e->seen++)
		ewindow_read_one(e, plan_msg(p, e->seen));
}

/* The places of an answer not compared: redacted when recorded. */
static void
ewindow_note_unchecked(struct engine *e, const struct rresult *res)
{
	char	*where = NULL, *n;
	size_t	 i;

	for (i = 0; i < res->diff.nredacted && i < ENGINE_REDACTED_PATHS;
	    i++) {
		if (where == NULL)
			where = xstrdup(res->diff.redacted[i]);
		else {
			xasprintf(&n, "%s, %s", where, res->diff.redacted[i]);
			free(where);
			where = n;
		}
	}
	engine_note(e, "seq %lld %s: not compared at %s%s (the recorded "
	    "answer was redacted there)", (long long)res->seq,
	    res->method != NULL ? res->method : "?", where,
	    res->diff.nredacted > ENGINE_REDACTED_PATHS ? " and more" : "");
	free(where);
}

/*
 * Keep res in the report (its method and id copied: the plan lets its
 * messages go), or count it only when the report has kept enough.
 */
static void
ewindow_keep(struct replay_report *rep, struct rresult *res)
{
	size_t	ml, il;
	int	same = res->status == RSTATUS_SAME ||
		    res->status == RSTATUS_IGNORED;

	if (rep->n >= 2 * ENGINE_RESULTS_KEPT || (rep->n >=
	    ENGINE_RESULTS_KEPT && same)) {
		rep->unshown++;
		if (!same)
			rep->unshown_differ++;
		free(res->params);
		diff_clear(&res->diff);
		memset(res, 0, sizeof *res);
		return;
	}
	ml = res->method != NULL ? strlen(res->method) + 1 : 0;
	il = res->id != NULL ? strlen(res->id) + 1 : 0;
	res->own = xmalloc(ml + il + 1);
	if (res->method != NULL)
		res->method = memcpy(res->own, res->method, ml);
	if (res->id != NULL)
		res->id = memcpy(res->own + ml, res->id, il);
	compare_append(rep, res);
}

/*
 * The result of message m, let go now (or, pinned, when its answer is
 * read): a recorded request with a recorded answer gets one (compared
 * when its live answer came, else missing or cut).
 */
static void
ewindow_result(struct engine *e, struct rmsg *m)
{
	struct rreq	*r = m->rq;
	struct rmsg	*a;
	struct rresult	 res;

	if (m->dir != DIR_C2S || m->kind != KIND_REQUEST || m->answer < 0 ||
	    (m->id == NULL && !m->truncated))
		return;
	a = plan_msg(e->plan, (size_t)m->answer);
	if (r != NULL && r->compared) {
		res = r->res;
		memset(&r->res, 0, sizeof r->res);
	} else {
		/* Not answered (or not sent): missing, or cut. */
		compare_fill(&res, m, a);
		compare_answer(e->rep, &res, m, a, NULL, 0, e->opt->rules);
		plan_json_drop(m);
		plan_json_drop(a);
	}
	if (res.diff.nredacted > 0)
		ewindow_note_unchecked(e, &res);
	ewindow_keep(e->rep, &res);
}

/* Free request r (its message is let go, or the replay is over). */
void
ewindow_rreq_free(struct rreq *r)
{
	if (r == NULL)
		return;
	if (r->timer != NULL)
		event_free(r->timer);
	free(r->res.params);
	diff_clear(&r->res.diff);
	json_decref(r->live);
	free(r);
}

/*
 * Let the oldest messages go, each turned into its result, while the
 * window is full (so a session smaller than it is let go only at the
 * end) and the oldest is done with: sent if it is a send, answered or
 * timed out if a request.  At the end (end set) everything is done with:
 * what was not sent or not answered is missing.
 */
void
ewindow_release(struct engine *e, int end)
{
	struct plan	*p = e->plan;
	struct rmsg	*m;
	size_t		 first;

	while ((first = plan_first(p)) < plan_end(p)) {
		if (!plan_full(p) && !(end && ewindow_read_all(e)))
			break;
		m = plan_msg(p, first);
		if (!end && ((e->next < plan_sends_end(p) &&
		    plan_send(p, e->next)->msg <= first) ||
		    (m->rq != NULL && m->rq->state == RQ_SENT)))
			break;
		if (plan_pins(p, first)) {
			/* Kept for its answer, further on: see read_one. */
			if (plan_pins_full(p))
				ewindow_unpin_oldest(e);
		} else {
			ewindow_result(e, m);
			ewindow_rreq_free(m->rq);
			m->rq = NULL;
		}
		plan_release(p, first + 1, end ? plan_sends_end(p) : e->next);
	}
}

/*
 * Let the oldest pinned request go without its answer (too many are
 * pinned, or the replay is over and its answer was never recorded): its
 * answer, if read later, pairs with nothing.
 */
static void
ewindow_unpin_oldest(struct engine *e)
{
	ssize_t		 i = plan_pinned_oldest(e->plan);
	struct rmsg	*m = plan_msg(e->plan, (size_t)i);

	if (!ewindow_read_all(e) && e->far_lost++ == 0)
		engine_note(e, "more requests than replay keeps waited for "
		    "their recorded answers further on: the oldest are not "
		    "compared");
	ewindow_rreq_free(m->rq);
	m->rq = NULL;
	plan_unpin(e->plan, (size_t)i);
}

/* Let every pinned request go (the replay is over). */
void
ewindow_unpin_all(struct engine *e)
{
	while (plan_pinned_oldest(e->plan) >= 0)
		ewindow_unpin_oldest(e);
}

/*
 * Whether a request the recorded server answered is still unsent or
 * unanswered: what a server gone now takes from the replay.  Notifications
 * left to send and requests that went unanswered when recorded too are
 * not: nothing to compare is lost with them.  What the window has not
 * read yet is taken to hold such a request.
 */
int
ewindow_loses_answers(const struct engine *e)
{
	const struct plan	*p = e->plan;
	const struct rmsg	*m;
	size_t			 i;

	if (!ewindow_read_all(e))
		return 1;
	for (i = plan_first(p); i < plan_end(p); i++) {
		m = plan_msg(p, i);
		if (m->dir != DIR_C2S || m->kind != KIND_REQUEST ||
		    m->answer < 0 || m->truncated || m->id == NULL)
			continue;
		if (m->rq == NULL || m->rq->state == RQ_SENT)
			return 1;
	}
	return 0;
}

/*
 * Turn what happened into the report: the rest of the recording read
 * and let go, each request its result, then the notifications counted.
 */
void
ewindow_results(struct engine *e)
{
	struct replay_report	*rep = e->rep;
	const char		*k;
	json_t			*v, *o;

	for (;;) {
		ewindow_release(e, 1);
		if (ewindow_read_all(e) && plan_first(e->plan) ==
		    plan_end(e->plan))
			break;
		ewindow_fill(e);
	}
	/* Requests still pinned had no answer in the recording. */
	ewindow_unpin_all(e);

	/* Notifications the server sent: counts per method. */
	json_object_foreach(e->notif_rec, k, v) {
		o = json_pack("{s:I, s:I}", "recorded", json_integer_value(v),
		    "replayed", json_integer_value(json_object_get(
		    e->notif_live, k)));
		json_object_set_new(rep->notifications, k, o);
	}
	json_object_foreach(e->notif_live, k, v) {
		if (json_object_get(e->notif_rec, k) == NULL)
			json_object_set_new(rep->notifications, k, json_pack(
			    "{s:i, s:I}", "recorded", 0, "replayed",
			    json_integer_value(v)));
	}
	json_object_foreach(rep->notifications, k, v) {
		if (!json_equal(json_object_get(v, "recorded"),
		    json_object_get(v, "replayed")))
			rep->notif_differ++;
	}
	rep->unused_rules = rules_unused(e->opt->rules);
}
