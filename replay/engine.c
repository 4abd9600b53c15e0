/*
 * The replay engine: send a recorded session's client messages to a live
 * server in causal order, answer the server's own requests from the
 * recording, pair live responses with recorded requests by id, and
 * compare.
 *
 * What legitimately differs between runs is remapped, not compared: the
 * server's requests get the recorded answers under their live ids, and
 * opaque values the server hands the client to send back (a 2026-07-28
 * requestState, a cursor, a task id) are learnt from each live response
 * and substituted into the later recorded requests that carry them.
 */

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>
#include <event2/thread.h>

#include "protocol.h"
#include "store.h"
#include "engine_int.h"

/* After the last answer, how long trailing notifications may come. */
#define ENGINE_LINGER_MS	300
/* How long the server gets to finish (exit, or DELETE) at the end. */
#define ENGINE_FINISH_MS	6000
/*
 * Notes the report keeps (one line each, for people); past them, counted
 * only: a server that times out every request of a million-message
 * session must not make a million notes.
 */
#define ENGINE_NOTES_MAX	1000

static void	engine_step(struct engine *);
static void	engine_note_quiet(struct engine *, const char *);

/* Say fmt on stderr and in the report. */
void
engine_note(struct engine *e, const char *fmt, ...)
{
	va_list	 ap;
	char	*s;

	va_start(ap, fmt);
	if (vasprintf(&s, fmt, ap) == -1)
		fatalx("out of memory");
	va_end(ap);
	log_info("%s", s);
	engine_note_quiet(e, s);
	free(s);
}

/* Add note s to the report only: the caller has said it on stderr. */
static void
engine_note_quiet(struct engine *e, const char *s)
{
	json_t	*v;

	if (json_array_size(e->rep->notes) >= ENGINE_NOTES_MAX) {
		e->rep->notes_unshown++;
		return;
	}
	if ((v = json_string(s)) == NULL)
		v = json_string("(a note that is not UTF-8)");
	json_array_append_new(e->rep->notes, v);
}

/*
 * A message replay sends from the recording holds values that were
 * redacted when recorded: it goes with the placeholder (the real value
 * is not in the database), and the user is told where.
 */
static void
engine_warn_redacted(struct engine *e, const json_t *msg, const char *what)
{
	char	*where, *note;

	if (msg == NULL || (where = redacted_where(msg,
	    ENGINE_REDACTED_PATHS)) == NULL)
		return;
	/* Once on stderr, as a warning; the report has it as a note. */
	xasprintf(&note, "%s was sent with \"" REDACTED "\" at %s: the real "
	    "value was redacted when recorded, so the server may answer "
	    "otherwise", what, where);
	log_warnx("%s", note);
	engine_note_quiet(e, note);
	free(note);
	free(where);
}

/* Record what replay sent or received, if it records. */
static void
engine_record(struct engine *e, enum dir d, const char *bytes, size_t len)
{
	if (e->opt->w != NULL)
		writer_message(e->opt->w, e->opt->ws, NULL,
		    msg_new(d, bytes, len));
}

/*
 * The headers a 2026-07-28 request carries over HTTP (protocol/headers.c);
 * the revision it names goes on the transport too.  Older requests get
 * none.
 */
static char **
engine_headers(struct engine *e, const json_t *msg)
{
	const char	*version;
	char		**h;

	h = proto_headers_for(e->ph, msg, &version);
	if (version != NULL)
		xport_set_protocol_version(e->xp, version);
	return h;
}

static void
engine_send_msg(struct engine *e, const json_t *msg, const char *bytes,
    size_t len)
{
	char	**headers = NULL;

	if (msg != NULL)
		headers = engine_headers(e, msg);
	engine_record(e, DIR_C2S, bytes, len);
	xport_send(e->xp, bytes, len, (const char *const *)headers);
	proto_headers_list_free(headers);
}

static void
engine_send(struct engine *e, const char *bytes, size_t len)
{
	engine_send_msg(e, NULL, bytes, len);
}

/* Send recorded message m, the opaque values learnt put in. */
static void
engine_send_one(struct engine *e, const struct rmsg *m)
{
	json_t	*copy;
	char	*bytes;

	if (plan_json(m) != NULL && json_object_size(e->remap) > 0) {
		copy = json_deep_copy(plan_json(m));
		if (remap_apply(e->remap, copy) > 0 && (bytes = json_dumps(copy,
		    JSON_COMPACT | JSON_PRESERVE_ORDER |
		    JSON_ENCODE_ANY)) != NULL) {
			engine_send_msg(e, copy, bytes, strlen(bytes));
			free(bytes);
			json_decref(copy);
			return;
		}
		json_decref(copy);
	}
	engine_send_msg(e, plan_json(m), m->raw, m->len);
}

static void
engine_timeout_cb(evutil_socket_t fd, short events, void *arg)
{
	struct rreq	*r = arg;
	struct engine	*e = r->e;
	struct rmsg	*m = plan_msg(e->plan, r->msg);
	size_t		 klen = strlen(m->id);
	int64_t		 idx;

	r->state = RQ_TIMEDOUT;
	idmap_take(e->live_ids, m->id, klen, &idx, NULL);
	engine_note(e, "seq %lld %s: no response within %d ms",
	    (long long)m->seq, m->method != NULL ? m->method : "?",
	    e->opt->timeout_ms);
	engine_step(e);
}

/* Whether any sent request still waits for its answer. */
static int
engine_outstanding(const struct engine *e)
{
	return idmap_count(e->live_ids) != 0;
}

static void
engine_end_cb(evutil_socket_t fd, short events, void *arg)
{
	struct engine	*e = arg;

	if (!e->finishing) {
		/* The linger after the last answer is over: finish. */
		e->finishing = 1;
		if (!e->closed) {
			struct timeval	tv = { ENGINE_FINISH_MS / 1000,
			    (ENGINE_FINISH_MS % 1000) * 1000 };

			evtimer_add(e->end_ev, &tv);
			xport_finish(e->xp);
			return;
		}
	} else if (!e->closed)
		engine_note(e, "the server did not finish within %d ms",
		    ENGINE_FINISH_MS);
	event_base_loopbreak(e->base);
}

/* Send what may be sent; when all is sent and answered, wind down. */
static void
engine_step(struct engine *e)
{
	struct plan	*p = e->plan;
	struct send	*s;
	struct rmsg	*m;
	struct rreq	*r;
	struct timeval	 tv;
	int64_t		 now, due;
	size_t		 i, first, end;

	if (e->closed || e->finishing)
		return;
	while (!e->closed) {
		/*
		 * The next send is not read yet: make room and read, as far
		 * as it takes (more than a window of the server's own
		 * messages may come first), or until the window cannot move
		 * (its oldest request waits for its live answer).
		 */
		while (e->next >= plan_sends_end(p) && !ewindow_read_all(e)) {
			first = plan_first(p);
			end = plan_end(p);
			ewindow_release(e, 0);
			ewindow_fill(e);
			if (plan_first(p) == first && plan_end(p) == end)
				break;
		}
		if (e->next >= plan_sends_end(p))
			break;
		s = plan_send(p, e->next);
		for (i = 0; i < s->nneeds; i++) {
			/* One let go of is done with. */
			if (s->needs[i] >= plan_first(p) && (r = plan_msg(p,
			    s->needs[i])->rq) != NULL && r->state == RQ_SENT)
				return;
		}
		now = clock_mono_ns();
		if (e->opt->pace && e->next > 0 &&
		    (due = clock_add(e->last_send_ns, s->gap_ns)) > now) {
			tv.tv_sec = (due - now) / 1000000000;
			tv.tv_usec = ((due - now) % 1000000000) / 1000;
			evtimer_add(e->step_ev, &tv);
			return;
		}
		m = plan_msg(p, s->msg);
		e->next++;
		e->last_send_ns = now;
		if (plan_json(m) != NULL && redacted_in(plan_json(m))) {
			char	*what;

			xasprintf(&what, "seq %lld %s", (long long)m->seq,
			    m->method != NULL ? m->method : "(no method)");
			engine_warn_redacted(e, plan_json(m), what);
			free(what);
		}
		r = NULL;
		if (m->kind == KIND_REQUEST && m->id != NULL) {
			r = m->rq = xcalloc(1, sizeof *r);
			r->e = e;
			r->msg = s->msg;
			r->state = RQ_SENT;
			r->sent_ns = now;
			idmap_put(e->live_ids, m->id, strlen(m->id),
			    (int64_t)s->msg, NULL);
			tv.tv_sec = e->opt->timeout_ms / 1000;
			tv.tv_usec = (e->opt->timeout_ms % 1000) * 1000;
			r->timer = evtimer_new(e->base, engine_timeout_cb, r);
			evtimer_add(r->timer, &tv);
		}
		engine_send_one(e, m);
		/* A request's JSON is kept until its answer is compared. */
		if (r == NULL)
			plan_json_drop(m);
	}
	if (!engine_outstanding(e) && !evtimer_pending(e->end_ev, NULL)) {
		tv.tv_sec = 0;
		tv.tv_usec = ENGINE_LINGER_MS * 1000;
		evtimer_add(e->end_ev, &tv);
	}
}

static void
engine_step_cb(evutil_socket_t fd, short events, void *arg)
{
	engine_step(arg);
}

/*
 * The recorded answer for a live server request: the recorded ones to the
 * same request in order, the last repeating.  NULL if none.
 */
static const json_t *
engine_find_answer(struct engine *e, const char *key)
{
	json_t		*list = json_object_get(e->srv_answers, key);
	json_int_t	 used;
	size_t		 at;

	if (list == NULL || json_array_size(list) == 0)
		return NULL;
	used = json_integer_value(json_object_get(e->srv_used, key));
	at = (size_t)used < json_array_size(list) ? (size_t)used :
	    json_array_size(list) - 1;
	json_object_set_new(e->srv_used, key, json_integer(used + 1));
	return json_array_get(list, at);
}

/* A request from the live server: answer it as the recorded client did. */
static void
engine_server_request(struct engine *e, const json_t *msg)
{
	const char	*method = json_string_value(json_object_get(msg,
			    "method"));
	const json_t	*answer;
	json_t		*out, *u;
	char		*key, *bytes;

	key = match_request_key(msg, NULL);
	answer = engine_find_answer(e, key);
	free(key);
	if (answer == NULL) {
		xasprintf(&key, "%s\n*", method != NULL ? method : "");
		answer = engine_find_answer(e, key);
		free(key);
	}
	if (answer != NULL) {
		out = json_deep_copy(answer);
		e->rep->srv_answered++;
		if (redacted_in(answer)) {
			xasprintf(&key, "the recorded answer to the server's "
			    "%s request", method != NULL ? method : "?");
			engine_warn_redacted(e, answer, key);
			free(key);
		}
	} else if (method != NULL && strcmp(method, "ping") == 0) {
		out = json_pack("{s:s, s:{}}", "jsonrpc", "2.0", "result");
		e->rep->srv_answered++;
	} else {
		out = json_pack("{s:s, s:{s:i, s:s}}", "jsonrpc", "2.0",
		    "error", "code", -32601, "message", "mcpreel replay: the "
		    "recording has no answer to this request");
		u = json_object();
		json_object_set_new(u, "method", json_string(method != NULL ?
		    method : "?"));
		json_object_set(u, "params", json_object_get(msg, "params") ?
		    json_object_get(msg, "params") : json_null());
		json_array_append_new(e->rep->srv_unmatched, u);
		engine_note(e, "the server sent a %s request the recording "
		    "has no answer to", method != NULL ? method : "?");
	}
	json_object_set(out, "id", json_object_get(msg, "id"));
	if ((bytes = json_dumps(out, JSON_COMPACT | JSON_PRESERVE_ORDER)) !=
	    NULL) {
		engine_send(e, bytes, strlen(bytes));
		free(bytes);
	}
	json_decref(out);
}

/*
 * Compare msg, the live answer to request r, with the recorded one (read
 * by now): neither the live answer nor the parsed recorded pair is held
 * for the rest of the replay.
 */
void
engine_compare(struct engine *e, struct rreq *r, const json_t *msg)
{
	struct rmsg	*m = plan_msg(e->plan, r->msg), *a;

	a = plan_msg(e->plan, (size_t)m->answer);
	if (plan_json(a) != NULL)
		remap_learn(e->remap, plan_json(a), msg);
	compare_fill(&r->res, m, a);
	r->res.live_latency_ns = clock_sub(r->answered_ns, r->sent_ns);
	compare_answer(e->rep, &r->res, m, a, msg, 0, e->opt->rules);
	r->compared = 1;
	plan_json_drop(m);
	plan_json_drop(a);
}

/* A response from the live server: pair it with what replay sent. */
static void
engine_response(struct engine *e, const json_t *msg, const char *idtext)
{
	struct rreq	*r;
	struct rmsg	*m;
	const char	*pv;
	int64_t		 idx;

	if (idmap_take(e->live_ids, idtext, strlen(idtext), &idx, NULL) != 0) {
		engine_note(e, "a response with id %s that answers nothing "
		    "replay sent (or came after its timeout)", idtext);
		return;
	}
	m = plan_msg(e->plan, (size_t)idx);
	r = m->rq;
	event_free(r->timer);
	r->timer = NULL;
	r->state = RQ_ANSWERED;
	r->answered_ns = clock_mono_ns();
	if (m->method != NULL && strcmp(m->method, "initialize") == 0 &&
	    (pv = json_string_value(json_object_get(json_object_get(msg,
	    "result"), "protocolVersion"))) != NULL)
		xport_set_protocol_version(e->xp, pv);
	if (m->method != NULL && strcmp(m->method, "tools/list") == 0)
		proto_headers_learn(e->ph, json_object_get(msg, "result"));
	if (m->answer >= 0)
		engine_compare(e, r, msg);
	else if (!ewindow_read_all(e))
		/* Its recorded answer may be further on: compared then. */
		r->live = json_incref((json_t *)msg);
	else
		plan_json_drop(m);
	engine_step(e);
}

static void
engine_one(struct engine *e, const json_t *msg)
{
	const char	*method;
	json_t		*id, *n;
	char		*idtext;

	if (!json_is_object(msg)) {
		engine_note(e, "the server sent JSON that is no JSON-RPC "
		    "message");
		return;
	}
	method = json_string_value(json_object_get(msg, "method"));
	id = json_object_get(msg, "id");
	if (method != NULL && id != NULL) {
		engine_server_request(e, msg);
		return;
	}
	if (method != NULL) {
		n = json_object_get(e->notif_live, method);
		json_object_set_new(e->notif_live, method, json_integer(
		    json_integer_value(n) + 1));
		return;
	}
	if (id == NULL)
		return;
	idtext = json_dumps(id, JSON_COMPACT | JSON_ENCODE_ANY);
	if (idtext != NULL)
		engine_response(e, msg, idtext);
	free(idtext);
}

static void
engine_message_cb(const char *bytes, size_t len, void *arg)
{
	struct engine	*e = arg;
	struct scan	 sc;
	json_t		*msg, *el;
	size_t		 i;
	char		*idtext;

	engine_record(e, DIR_S2C, bytes, len);
	scan_message(bytes, len, &sc);
	if (sc.kind == KIND_INVALID ||
	    (msg = json_loadb(bytes, len, JSON_DECODE_ANY, NULL)) == NULL) {
		if (len == 0)
			engine_note(e, "the server sent an empty line (no "
			    "JSON-RPC message)");
		else
			engine_note(e, "the server sent %zu bytes that are no "
			    "JSON-RPC message", len);
		return;
	}
	if (sc.kind == KIND_BATCH) {
		json_array_foreach(msg, i, el)
			engine_one(e, el);
	} else if ((sc.kind == KIND_RESPONSE || sc.kind == KIND_ERROR) &&
	    sc.has_id) {
		/* Pair by the id as written, as the recording did. */
		idtext = scan_id_dup(bytes, &sc);
		engine_response(e, msg, idtext);
		free(idtext);
	} else
		engine_one(e, msg);
	json_decref(msg);
}

static void
engine_event_cb(const char *kind, const char *text, size_t len, void *arg)
{
	struct engine	*e = arg;

	if (e->opt->w != NULL)
		writer_event(e->opt->w, e->opt->ws, kind, text, len);
	if (strcmp(kind, "stderr") == 0)
		log_debug("server: %.*s", (int)len, text);
	else
		engine_note(e, "%.*s", (int)len, text);
}

static void
engine_closed_cb(const char *why, void *arg)
{
	struct engine	*e = arg;

	e->closed = 1;
	e->closed_why = xstrdup(why);
	/*
	 * Gone with sends left or answers awaited: the replay cannot run to
	 * its end, so it stops now (waiting out --timeout for each request
	 * a server that is not there cannot answer tells nobody anything).
	 */
	if (!e->finishing && ewindow_loses_answers(e)) {
		engine_note(e, "the server went away before the replay "
		    "ended: %s", why);
		free(e->rep->lost);
		e->rep->lost = xstrdup(why);
	} else if (!e->finishing && (e->next < plan_sends_end(e->plan) ||
	    !ewindow_read_all(e) || engine_outstanding(e)))
		engine_note(e, "the server went away with only what it did "
		    "not answer when recorded either left: %s", why);
	else if (!e->finishing)
		engine_note(e, "the server went away after its last answer: "
		    "%s", why);
	event_base_loopbreak(e->base);
}

/*
 * Replay plan p against the server open_fn opens, filling rep.  Returns -1
 * (cause set) when it could not run at all.
 */
int
replay_run(struct plan *p, struct xport *(*open_fn)(struct event_base *,
    const struct xport_cbs *, void *, void *, char **), void *open_arg,
    const struct replay_options *opt, struct replay_report *rep,
    char **cause)
{
	struct engine		 e;
	struct xport_cbs	 cbs = { engine_message_cb, engine_event_cb,
				    engine_closed_cb, NULL };
	size_t			 i;

	memset(&e, 0, sizeof e);
	e.plan = p;
	e.opt = opt;
	e.rep = rep;
	rep->notifications = json_object();
	rep->srv_unmatched = json_array();
	rep->notes = json_array();
	rep->notifications_strict = opt->notifications_strict;
	e.live_ids = idmap_new();
	e.srv_answers = json_object();
	e.srv_used = json_object();
	e.remap = json_object();
	e.notif_live = json_object();
	e.notif_rec = json_object();
	e.ph = proto_headers_new();
	evthread_use_pthreads();
	if ((e.base = event_base_new()) == NULL)
		fatalx("cannot create an event loop");
	e.seen = plan_first(p);
	ewindow_fill(&e);
	e.step_ev = evtimer_new(e.base, engine_step_cb, &e);
	e.end_ev = evtimer_new(e.base, engine_end_cb, &e);

	e.xp = open_fn(e.base, &cbs, &e, open_arg, cause);
	if (e.xp == NULL) {
		rep->could_not_run = 1;
	} else {
		rep->target = xstrdup(e.xp->target);
		engine_step(&e);
		event_base_dispatch(e.base);
		ewindow_results(&e);
		xport_free(e.xp);
	}

	for (i = plan_first(p); i < plan_end(p); i++) {
		ewindow_rreq_free(plan_msg(p, i)->rq);
		plan_msg(p, i)->rq = NULL;
	}
	ewindow_unpin_all(&e);
	event_free(e.step_ev);
	event_free(e.end_ev);
	idmap_free(e.live_ids);
	json_decref(e.srv_answers);
	json_decref(e.srv_used);
	json_decref(e.remap);
	json_decref(e.notif_live);
	json_decref(e.notif_rec);
	proto_headers_free(e.ph);
	free(e.closed_why);
	/*
	 * One more pass frees what xport_free() deferred: a TLS connection
	 * (BEV_OPT_DEFER_CALLBACKS) that failed its handshake is freed by
	 * its own deferred callback, which event_base_free() would drop
	 * (LeakSanitizer: its SSL and buffers, 1 run in 4).
	 */
	event_base_loop(e.base, EVLOOP_NONBLOCK);
	event_base_free(e.base);
	return rep->could_not_run ? -1 : 0;
}

/* 0 all same, 1 differences (or missing answers), 2 could not run. */
int
replay_exit_status(const struct replay_report *rep)
{
	if (rep->could_not_run || rep->lost != NULL)
		return 2;
	if (rep->count[RSTATUS_DIFFERENT] != 0 ||
	    rep->count[RSTATUS_MISSING] != 0 ||
	    json_array_size(rep->srv_unmatched) != 0 ||
	    (rep->notifications_strict && rep->notif_differ != 0))
		return 1;
	return 0;
}

void
replay_report_clear(struct replay_report *rep)
{
	size_t	i;

	for (i = 0; i < rep->n; i++) {
		free(rep->r[i].own);
		free(rep->r[i].params);
		diff_clear(&rep->r[i].diff);
	}
	free(rep->r);
	free(rep->session_name);
	free(rep->target);
	free(rep->lost);
	json_decref(rep->notifications);
	json_decref(rep->srv_unmatched);
	json_decref(rep->notes);
	json_decref(rep->unused_rules);
	memset(rep, 0, sizeof *rep);
}
