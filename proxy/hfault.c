/*
 * Fault injection over HTTP (record --listen --upstream --fault): where the
 * rules of fault/ meet the reverse proxy.  With no rules none of this runs
 * and every exchange goes as it always did.
 *
 * With rules, what a decision needs is held back until it is whole:
 *  - a request's head and body (a POST's message), so that it can be
 *    answered in the upstream's place (error, tool-error, http-status,
 *    drop), held (delay), changed (corrupt, mutate; Content-Length follows)
 *    or its connection reset, before the upstream sees any of it;
 *  - a JSON response's head and body, so that it can be held, changed
 *    (Content-Length follows), dropped or its connection closed;
 *  - each SSE event, until it is complete: it is delivered, held, replaced
 *    by another event (same id and type, new data), left out, or the
 *    stream is ended (cleanly, end-stream) or reset there.
 * A request or JSON body, or an SSE event, that outgrows HFAULT_HOLD_MAX
 * before it is whole goes on as it comes, undecided (never faulted).
 *
 * A client whose answer is not coming (a dropped request or response, a
 * timeout) is left waiting: its POST stays open until it gives up (or the
 * upstream timeout answers 504), as it would with a server that lost it.
 *
 * Every fault is recorded as one faults row (writer_fault) then the
 * messages that carry its number, each with its role: 'original' (what the
 * sender sent, not delivered as is), 'injected' (what mcpreel sent in its
 * place), 'delayed' (delivered late).  An exchange whose response a fault
 * made (an http-status, a reset, an ended stream) names it too.
 */

#include <sys/socket.h>

#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>

#include "http_int.h"
#include "fault.h"


/* The reason phrase of a status a fault answers with. */
static const char *
hfault_reason(int status)
{
	const char	*text = http_reason(status);

	return (text != NULL) ? text : "Error";
}

/* Whether the run has fault rules. */
int
hfault_active(const struct hproxy *p)
{
	return p->opt->faults != NULL && p->opt->faults->set != NULL;
}

/* Count what x holds for decisions now in the proxy's total. */
void
hfault_account(struct hexch *x)
{
	struct hproxy	*p = x->c->p;
	size_t		 now = 0;

	if (x->fhold && x->reqhold != NULL)
		now += evbuffer_get_length(x->reqhold);
	if ((x->fresp || x->fsse) && x->hold != NULL)
		now += evbuffer_get_length(x->hold);
	p->fheld = p->fheld - x->fheld + now;
	x->fheld = now;
}

/*
 * Whether a message of len bytes still being held for its decision must
 * go on undecided: it is over HFAULT_HOLD_MAX, or all that is held is
 * over HFAULT_HELD_MAX.
 */
int
hfault_over(const struct hexch *x, size_t len)
{
	return len > HFAULT_HOLD_MAX || x->c->p->fheld > HFAULT_HELD_MAX;
}

/* A JSON-RPC message's method (a response: its request's) and id. */
static void
hfault_ident(struct hexch *x, enum dir d, const char *p, size_t len,
    char **method, char **id)
{
	struct scan	sc;

	*method = *id = NULL;
	scan_message(p, len, &sc);
	if (sc.has_method)
		*method = scan_method_dup(p, &sc);
	if (sc.has_id)
		*id = scan_id_dup(p, &sc);
	if (*method == NULL && d == DIR_S2C && x->req_rpc_method != NULL &&
	    *id != NULL && x->rpc_id != NULL && strcmp(*id, x->rpc_id) == 0)
		*method = xstrdup(x->req_rpc_method);
}

/* Write a faults row for x in its session; its number. */
static int64_t
hfault_write(struct hexch *x, const struct wfault *in)
{
	struct hproxy	*p = x->c->p;
	struct wfault	 wf = *in;

	wf.n = writer_session_next_fault(x->hs->ws);
	tap_fault(p->tap, x->hs->ws, &wf);
	log_debug("fault #%lld (rule %d): %s", (long long)wf.n,
	    wf.rule_index, wf.detail != NULL ? wf.detail : wf.action);
	return wf.n;
}

/* Free a faults row kept until the session was known. */
static void
hfault_pend_free(struct wfault *wf)
{
	if (wf == NULL)
		return;
	free((char *)wf->rule);
	free((char *)wf->method);
	free((char *)wf->rpc_id);
	free((char *)wf->detail);
	free(wf);
}

/*
 * Record that hit applied to the message p of x: a faults row, now if
 * x's session is known; a request forwarded with no session yet (an
 * initialize: its response names the session) keeps it until then
 * (hfault_assigned), others go to the run's default session.  Returns its
 * number, or 0 while it waits.
 */
int64_t
hfault_record(struct hexch *x, const struct fault_hit *hit, enum dir d,
    const char *p, size_t len, int forwarded)
{
	struct wfault	 wf;
	char		*method, *id;
	int64_t		 n = 0;

	hfault_ident(x, d, p, len, &method, &id);
	memset(&wf, 0, sizeof wf);
	wf.ts_ns = clock_wall_ns();
	wf.mono_ns = clock_mono_ns();
	wf.rule_index = hit->rule;
	wf.rule = hit->rule_text;
	wf.action = fault_action_name(hit->action);
	wf.has_dir = 1;
	wf.dir = d;
	wf.method = method;
	wf.rpc_id = id;
	wf.detail = hit->detail;
	if (x->hs == NULL && !forwarded)
		hexch_assign(x, hsession_default(x->c->p, x->ts_ns));
	if (x->hs != NULL)
		n = hfault_write(x, &wf);
	else {
		hfault_pend_free(x->fpend);
		x->fpend = xmalloc(sizeof *x->fpend);
		*x->fpend = wf;
		x->fpend->rule = xstrdup(wf.rule);
		x->fpend->action = wf.action;
		x->fpend->detail = wf.detail != NULL ? xstrdup(wf.detail) :
		    NULL;
		method = id = NULL;
	}
	free(method);
	free(id);
	return n;
}

/* x's session is now known: write the row that waited for it. */
void
hfault_assigned(struct hexch *x)
{
	if (x->fpend == NULL)
		return;
	x->fault_n = hfault_write(x, x->fpend);
	hfault_pend_free(x->fpend);
	x->fpend = NULL;
}

/* Record bytes as a message of x with a fault and its role. */
void
hfault_tap(struct hexch *x, enum dir d, const char *p, size_t len,
    const char *sse_id, int64_t n, int role)
{
	struct evbuffer	*b = evbuffer_new();

	evbuffer_add(b, p, len);
	x->tap_fault = n;
	x->tap_role = role;
	hexch_tap_data(x, d, b, len, sse_id, NULL);
	x->tap_fault = 0;
	x->tap_role = 0;
	evbuffer_free(b);
}

/* Record x's request body (reqdata, as capped) with a fault and role. */
static void
hfault_tap_request(struct hexch *x, int64_t n, int role)
{
	size_t	len = evbuffer_get_length(x->reqdata);

	x->tap_fault = n;
	x->tap_role = role;
	hexch_tap_data(x, DIR_C2S, x->reqdata, len, NULL, &x->reqcap);
	x->tap_fault = 0;
	x->tap_role = 0;
	evbuffer_drain(x->reqdata, len);
}

/* The bytes a corrupt or mutate hit sends in place of the message p. */
struct evbuffer *
hfault_replacement(const struct fault_hit *hit, const char *p, size_t len,
    int *stray)
{
	struct evbuffer	*b = evbuffer_new();

	*stray = hit->action == FAULT_CORRUPT && hit->bytes != NULL &&
	    hit->corrupt == FAULT_CORRUPT_STRAY;
	if (hit->bytes != NULL)
		evbuffer_add(b, hit->bytes, hit->len);
	if (*stray) {
		evbuffer_add(b, "\n", 1);
		evbuffer_add(b, p, len);
	}
	return b;
}

/*
 * Send x's held request upstream, as it came or (body not NULL) with body
 * in place of its own; Content-Length follows a new body.
 */
void
hfault_send_request(struct hexch *x, const char *body, size_t len)
{
	struct hconn	*c = x->c;
	struct evbuffer	*out, *tmp;
	char		*cause = NULL, *dropped;

	x->fhold = 0;
	if (conn_connect(c, &cause) != 0) {
		conn_reply_error(c, 502, "Bad Gateway", cause);
		free(cause);
		return;
	}
	hexch_send_head(c, &x->req, body != NULL &&
	    x->reqbody.kind != HTTP_BODY_CHUNKED ? &len : NULL);
	out = bufferevent_get_output(c->ubev);
	tmp = evbuffer_new();
	if (body != NULL)
		evbuffer_add(tmp, body, len);
	else
		evbuffer_add_buffer(tmp, x->reqhold);
	/* What may follow (past HFAULT_HOLD_MAX) streams, held no more. */
	evbuffer_free(x->reqhold);
	x->reqhold = NULL;
	hfault_account(x);
	if (x->reqbody.kind == HTTP_BODY_CHUNKED) {
		http_chunk_add(out, tmp);
		if (x->req_done) {
			http_chunk_end_trailers(out, x->reqtrailers, &dropped);
			hexch_trailers_note(x, "request", dropped);
		}
	} else
		evbuffer_add_buffer(out, tmp);
	evbuffer_free(tmp);
	conn_watch_output(c);
	hwait_set(c);
}

/* The request body outgrew what is held for a decision: it goes on. */
void
hfault_request_giveup(struct hexch *x)
{
	hexch_note_at(x, LOG_LEVEL_DEBUG, "a request body over %u bytes (or "
	    "over %u held in all): passed on with no fault decided",
	    HFAULT_HOLD_MAX, HFAULT_HELD_MAX);
	hfault_send_request(x, NULL, 0);
}

/*
 * A header value a rule gave, without its control characters (CR and LF
 * would end the header line, or the head): a warning says so.
 */
static char *
hfault_header_value(const char *name, const char *v)
{
	char	*out = xmalloc(strlen(v) + 1), *o = out;
	size_t	 dropped = 0;

	for (; *v != '\0'; v++) {
		if (((unsigned char)*v < 0x20 && *v != '\t') || *v == 0x7f)
			dropped++;
		else
			*o++ = *v;
	}
	*o = '\0';
	if (dropped > 0)
		log_warnx("fault: %zu control characters left out of the "
		    "%s header a rule gave", dropped, name);
	return out;
}

/*
 * Answer x's request ourselves for fault n with status, extra header
 * lines (each "Name: value", NULL-ended) and a body of ctype; with named,
 * the exchange records the response as made by fault n.  The connection
 * goes on to its next request (or closes, as the client asked).
 */
static void
hfault_reply(struct hexch *x, int status, const char *const *extra,
    const char *ctype, const char *body, size_t len, int64_t n, int named)
{
	struct hconn	*c = x->c;
	struct evbuffer	*out = bufferevent_get_output(c->cbev);
	struct http_head *h = &x->resp;
	size_t		 i, k = 0, nextra = 0;
	const char	*colon;
	char		 clen[32];
	int		 close_after = x->close_after;

	while (extra != NULL && extra[nextra] != NULL)
		nextra++;
	memset(h, 0, sizeof *h);
	h->version = 11;
	h->status = status;
	h->reason = xstrdup(hfault_reason(status));
	h->headers = xcalloc(nextra + 3, sizeof *h->headers);
	if (ctype != NULL) {
		h->headers[k].name = xstrdup("Content-Type");
		h->headers[k++].value = xstrdup(ctype);
	}
	snprintf(clen, sizeof clen, "%zu", len);
	h->headers[k].name = xstrdup("Content-Length");
	h->headers[k++].value = xstrdup(clen);
	for (i = 0; i < nextra; i++) {
		colon = strchr(extra[i], ':');
		h->headers[k].name = xstrndup(extra[i], colon - extra[i]);
		h->headers[k].value = hfault_header_value(h->headers[k].name,
		    colon + 2);
		k++;
	}
	h->nheaders = k;
	x->have_resp = 1;
	if (x->wx != NULL) {
		hexch_record_response(x);
		if (named && n != 0)
			writer_exchange_fault(c->p->w, x->wx, n);
	}
	evbuffer_add_printf(out, "HTTP/1.1 %d %s\r\n", status, h->reason);
	for (i = 0; i < h->nheaders; i++)
		evbuffer_add_printf(out, "%s: %s\r\n", h->headers[i].name,
		    h->headers[i].value);
	if (close_after)
		evbuffer_add_printf(out, "Connection: close\r\n");
	evbuffer_add(out, "\r\n", 2);
	evbuffer_add(out, body, len);
	x->sent_resp = 1;
	x->resp_done = 1;
	free(x->outcome);
	xasprintf(&x->outcome, "%d from a fault (#%lld)", status,
	    (long long)n);
	hexch_end(c, x->outcome);
	if (close_after) {
		conn_close_after_output(c);
		return;
	}
	conn_pause(c->cbev, &c->cpause, PAUSE_BUSY, 0);
	conn_watch_output(c);
	hwait_set(c);
}

/* Reset the client's connection (SO_LINGER 0: an RST, not a FIN). */
void
hfault_reset(struct hconn *c, const char *why)
{
	struct linger	l = { 1, 0 };
	evutil_socket_t	fd = bufferevent_getfd(c->cbev);

	if (fd >= 0)
		setsockopt(fd, SOL_SOCKET, SO_LINGER, &l, sizeof l);
	evbuffer_drain(bufferevent_get_output(c->cbev),
	    evbuffer_get_length(bufferevent_get_output(c->cbev)));
	conn_close(c, why);
}

/*
 * Leave the client waiting for an answer that is not coming: the upstream
 * connection closes, the client's stays open until it leaves (or the
 * upstream timeout ends it).  What was held of the answer is never sent:
 * it is let go, and no longer counts as held.
 */
void
hfault_hang(struct hexch *x)
{
	struct hconn	*c = x->c;

	x->fhang = 1;
	x->resp_done = 0;
	if (x->fresp && x->hold != NULL)
		evbuffer_drain(x->hold, evbuffer_get_length(x->hold));
	if (x->fhead != NULL) {
		evbuffer_free(x->fhead);
		x->fhead = NULL;
	}
	hfault_account(x);
	if (c->ubev != NULL) {
		bufferevent_free(c->ubev);
		c->ubev = NULL;
	}
	hwait_set(c);
}

/*
 * Legacy HTTP+SSE: answers go on the session's event stream, not in the
 * POST's response.  Put an answer there as an event of its own (between
 * events: what is held back of the stream ends at one); 0, or -1 when
 * the session has no stream that can take it now.
 */
static int
hfault_legacy_answer(struct hexch *x, const char *p, size_t len)
{
	struct hconn	*c;
	struct hexch	*s;
	struct evbuffer	*ev;

	TAILQ_FOREACH(c, &x->c->p->conns, entry) {
		s = c->x;
		if (c->dead || c->closing || s == NULL || s == x ||
		    s->hs != x->hs || !s->sse || !s->fsse || s->fwait ||
		    s->fhang || strcmp(s->req.method, "GET") != 0)
			continue;
		ev = evbuffer_new();
		evbuffer_add_printf(ev, "event: message\n");
		hfault_sse_data(ev, p, len);
		if (s->rechunk)
			http_chunk_add(bufferevent_get_output(c->cbev), ev);
		else
			evbuffer_add_buffer(bufferevent_get_output(c->cbev), ev);
		evbuffer_free(ev);
		conn_watch_output(c);
		return 0;
	}
	return -1;
}

/* A c2s delay ran out: the request goes on. */
static void
hfault_request_timer_cb(evutil_socket_t fd, short events, void *arg)
{
	struct hexch	*x = arg;

	x->fwait = 0;
	hfault_send_request(x, NULL, 0);
}

/* A JSON-RPC request body, as opposed to a notification or response. */
static int
hfault_is_request(const char *p, size_t len)
{
	struct scan	sc;

	scan_message(p, len, &sc);
	return sc.kind == KIND_REQUEST;
}

/*
 * The request's body is whole: decide, and forward it, answer it or hold
 * it.  Returns 0, or -1 when the connection was closed.
 */
int
hfault_request(struct hexch *x)
{
	struct hconn		*c = x->c;
	struct fault_hit	 hit;
	struct evbuffer		*rep;
	struct timeval		 tv;
	const char		*p;
	size_t			 len = evbuffer_get_length(x->reqhold);
	char			*extra[3] = { NULL, NULL, NULL };
	char			*body;
	int64_t			 n;
	int			 stray, i;

	p = (const char *)evbuffer_pullup(x->reqhold, -1);
	memset(&hit, 0, sizeof hit);
	if (len == 0 || fault_decide(c->p->opt->faults->set, DIR_C2S, p, len,
	    1, &hit) == 0) {
		hfault_tap_request(x, 0, 0);
		hfault_send_request(x, NULL, 0);
		return c->dead ? -1 : 0;
	}
	switch (hit.action) {
	case FAULT_DELAY:
		n = hfault_record(x, &hit, DIR_C2S, p, len, 1);
		x->fault_n = n;
		hfault_tap_request(x, n, FAULT_ROLE_DELAYED);
		x->fwait = 1;
		x->ftimer = evtimer_new(c->p->base, hfault_request_timer_cb, x);
		tv.tv_sec = hit.delay_ms / 1000;
		tv.tv_usec = (hit.delay_ms % 1000) * 1000;
		evtimer_add(x->ftimer, &tv);
		break;
	case FAULT_TIMEOUT:
		n = hfault_record(x, &hit, DIR_C2S, p, len, 1);
		x->fault_n = n;
		x->fswallow = 1;
		hfault_tap_request(x, n, 0);
		hfault_send_request(x, NULL, 0);
		break;
	case FAULT_CORRUPT:
	case FAULT_MUTATE:
		n = hfault_record(x, &hit, DIR_C2S, p, len, 1);
		x->fault_n = n;
		hfault_tap_request(x, n, FAULT_ROLE_ORIGINAL);
		rep = hfault_replacement(&hit, p, len, &stray);
		len = evbuffer_get_length(rep);
		body = xmalloc(len + 1);
		evbuffer_remove(rep, body, len);
		evbuffer_free(rep);
		hfault_tap(x, DIR_C2S, body, len, NULL, n, FAULT_ROLE_INJECTED);
		hfault_send_request(x, body, len);
		free(body);
		break;
	case FAULT_ERROR:
	case FAULT_TOOL_ERROR:
		n = hfault_record(x, &hit, DIR_C2S, p, len, 0);
		hfault_tap_request(x, n, FAULT_ROLE_ORIGINAL);
		hfault_tap(x, DIR_S2C, hit.bytes, hit.len, NULL, n,
		    FAULT_ROLE_INJECTED);
		if (x->hs->legacy && hfault_legacy_answer(x, hit.bytes,
		    hit.len) == 0)
			hfault_reply(x, 202, NULL, NULL, "", 0, n, 0);
		else
			hfault_reply(x, 200, NULL, "application/json",
			    hit.bytes, hit.len, n, 0);
		break;
	case FAULT_DROP:
		n = hfault_record(x, &hit, DIR_C2S, p, len, 0);
		hfault_tap_request(x, n, FAULT_ROLE_ORIGINAL);
		/* Legacy HTTP+SSE: every POST is accepted so. */
		if (hfault_is_request(p, len) && !x->hs->legacy) {
			x->fhang = 1;
			/* Never sent: no longer held for a decision. */
			evbuffer_drain(x->reqhold, len);
			hfault_account(x);
			hwait_set(c);
		} else
			hfault_reply(x, 202, NULL, NULL, "", 0, n, 0);
		break;
	case FAULT_HTTP_STATUS:
		n = hfault_record(x, &hit, DIR_C2S, p, len, 0);
		hfault_tap_request(x, n, FAULT_ROLE_ORIGINAL);
		i = 0;
		if (hit.status == 401)
			xasprintf(&extra[i++], "WWW-Authenticate: %s",
			    hit.www_authenticate != NULL ?
			    hit.www_authenticate : "Bearer realm=\"mcp\"");
		/* A 429 says when to try again (1 s unless the rule says). */
		if (hit.retry_after != NULL || hit.status == 429)
			xasprintf(&extra[i++], "Retry-After: %s",
			    hit.retry_after != NULL ? hit.retry_after : "1");
		xasprintf(&body, "mcpreel: injected fault #%lld: %d %s\n",
		    (long long)n, hit.status, hit.status == 404 ?
		    "session not found" : hfault_reason(hit.status));
		hfault_reply(x, hit.status, (const char *const *)extra,
		    "text/plain; charset=utf-8", body, strlen(body), n, 1);
		free(body);
		for (i = 0; extra[i] != NULL; i++)
			free(extra[i]);
		break;
	case FAULT_CLOSE:
	default:
		n = hfault_record(x, &hit, DIR_C2S, p, len, 0);
		hfault_tap_request(x, n, FAULT_ROLE_ORIGINAL);
		if (x->wx != NULL)
			writer_exchange_fault(c->p->w, x->wx, n);
		free(x->outcome);
		xasprintf(&x->outcome, "%s by a fault (#%lld)",
		    hit.close == FAULT_CLOSE_END_STREAM ? "closed" : "reset",
		    (long long)n);
		if (hit.close == FAULT_CLOSE_END_STREAM)
			conn_close(c, x->outcome);
		else
			hfault_reset(c, x->outcome);
		break;
	}
	fault_hit_clear(&hit);
	return c->dead ? -1 : 0;
}

/* An SSE event's data fields and its end: one field a line of data. */
void
hfault_sse_data(struct evbuffer *out, const char *data, size_t len)
{
	const char	*nl;

	/* Each line its own data field: the client joins them with \n. */
	for (;;) {
		nl = memchr(data, '\n', len);
		evbuffer_add(out, "data: ", 6);
		evbuffer_add(out, data, nl != NULL ? (size_t)(nl - data) :
		    len);
		evbuffer_add(out, "\n", 1);
		if (nl == NULL)
			break;
		len -= (size_t)(nl - data) + 1;
		data = nl + 1;
	}
	evbuffer_add(out, "\n", 1);
}

/* Free what the exchange's faults hold. */
void
hfault_clear(struct hexch *x)
{
	x->c->p->fheld -= x->fheld;
	x->fheld = 0;
	if (x->ftimer != NULL)
		event_free(x->ftimer);
	x->ftimer = NULL;
	if (x->fhead != NULL)
		evbuffer_free(x->fhead);
	x->fhead = NULL;
	hfault_pend_free(x->fpend);
	x->fpend = NULL;
	free(x->req_rpc_method);
	x->req_rpc_method = NULL;
}

/* SIGHUP: read the rules again (a bad file keeps the old ones). */
int
hfault_reload(struct hproxy *p)
{
	const struct record_faults	*f = p->opt->faults;
	char				*cause = NULL;

	if (f == NULL || f->reload == NULL)
		return 0;
	if (f->reload(f->set, f->arg, &cause) != 0) {
		log_warnx("fault rules not reloaded, the old ones stay: %s",
		    cause);
		free(cause);
		return -1;
	}
	return 0;
}
