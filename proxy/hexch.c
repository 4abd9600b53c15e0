/*
 * An HTTP exchange (one request and its response on a client connection):
 * its life and its record, and the request side of forwarding it.  The
 * response side is in hresp.c.
 */

#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>

#include "http_int.h"

/*
 * Whether a head says its body is a form (application/x-www-form-urlencoded,
 * any case, any parameters): its fields are redacted by name.
 */
int
hexch_is_form(const struct http_head *h)
{
	static const char	 form[] = "application/x-www-form-urlencoded";
	const char		*ct = http_head_get(h, "Content-Type");

	if (ct == NULL)
		return 0;
	ct += strspn(ct, " \t");
	return strncasecmp(ct, form, sizeof form - 1) == 0 &&
	    strchr("; \t", ct[sizeof form - 1]) != NULL;
}

/*
 * The answers a request message asks for (x->owed, by id: howed.c), once:
 * from its body, or from its identity when it is cut at the record cap (a
 * batch then is owed until its stream ends, since its ids are not known).
 * Over legacy HTTP+SSE they come on the session's event stream, which is
 * owed them too.
 */
static void
hexch_count_owed(struct hexch *x, const struct msg *m)
{
	struct scan	sc;
	size_t		i;

	if (!x->owed_counted) {
		x->owed_counted = 1;
		if (!(m->flags & MSG_TRUNCATED))
			howed_requests(&x->owed, m->raw, m->len);
		else if (m->ident != NULL) {
			scan_message(m->ident, m->ident_len, &sc);
			if (sc.kind == KIND_BATCH)
				x->owed.unknown++;
			else
				howed_requests(&x->owed, m->ident,
				    m->ident_len);
		}
	}
	if (x->hs == NULL || !x->hs->legacy || x->owed_legacy ||
	    !howed_any(&x->owed))
		return;
	for (i = 0; i < x->owed.n; i++)
		howed_add(&x->hs->owed, x->owed.ids[i],
		    strlen(x->owed.ids[i]));
	x->hs->owed.unknown += x->owed.unknown;
	x->owed_legacy = 1;
}

/*
 * A legacy POST refused (or cut off): the answers it asked for will not
 * come on the event stream.  Those not already seen there are owed no
 * more.
 */
static void
hexch_owed_refused(struct hexch *x)
{
	struct howed	*o = &x->hs->owed;
	size_t		 i;

	for (i = 0; i < x->owed.n; i++)
		howed_settle(o, x->owed.ids[i], strlen(x->owed.ids[i]));
	o->unknown -= o->unknown < x->owed.unknown ? o->unknown :
	    x->owed.unknown;
	x->owed_legacy = 0;
}

/*
 * Whether an SSE event of x's response may answer a request the client is
 * waiting for: on a POST stream, one its body carried; on a legacy event
 * stream, one POSTed in its session; on a resumed stream, any, until one
 * came.  Only then are events scanned.
 */
int
hexch_awaits_answer(const struct hexch *x)
{
	if (strcmp(x->req.method, "GET") == 0) {
		if (x->hs != NULL && x->hs->legacy)
			return howed_any(&x->hs->owed);
		return x->resumed && x->answered == 0;
	}
	return howed_any(&x->owed);
}

/*
 * An SSE event's data of x's response: settle the answers it carries
 * (one, or a batch of them) to what x's stream owes.
 */
void
hexch_answer_seen(struct hexch *x, const char *data, size_t len)
{
	int	owing = hexch_awaits_answer(x);

	if (strcmp(x->req.method, "GET") != 0)
		howed_answers(&x->owed, data, len);
	else if (x->hs != NULL && x->hs->legacy)
		howed_answers(&x->hs->owed, data, len);
	else
		x->answered += howed_answers(NULL, data, len);
	/*
	 * The last answer owed on x's own stream: where it ends in the
	 * client's output, once it is there (not held back), so that events
	 * after it need not be taken too.  A legacy session's count changes
	 * with other connections (a refused POST): its stream is done with
	 * only once all it read has gone.
	 */
	if (owing && !hexch_awaits_answer(x) && x->hold == NULL &&
	    (x->hs == NULL || !x->hs->legacy))
		x->answer_end = x->c->out_sent +
		    evbuffer_get_length(bufferevent_get_output(x->c->cbev));
}

/*
 * Whether the answers x's stream owed have gone to the client's socket:
 * up to where the last one ends when that is known (events after it may
 * still wait), else every byte of the response read so far.  An answer
 * counted as it was read may still wait in what --durable or the legacy
 * endpoint holds back, or in the client's output.
 */
static int
hexch_delivered(const struct hexch *x)
{
	if (x->answer_end != 0)
		return x->c->out_sent >= x->answer_end;
	return (x->hold == NULL || evbuffer_get_length(x->hold) == 0) &&
	    evbuffer_get_length(bufferevent_get_output(x->c->cbev)) == 0;
}

/*
 * Whether the client, closing its connection now, leaves x owing it
 * nothing: the normal end of a stream.  That is a stream it opened with
 * GET (the standalone stream of Streamable HTTP, begun or not), or one
 * that has delivered the answers it carries: a legacy event stream whose
 * session awaits no answer, a POST's event stream that has carried the
 * answers (by id) to the requests it was opened for, a resumed stream
 * (Last-Event-ID) that has carried an answer.  Anything else was cut off:
 * a response not yet begun, a JSON body not yet whole, a stream still
 * owing an answer.
 */
static int
hexch_owes_nothing(const struct hexch *x)
{
	const char	*accept;

	if (strcmp(x->req.method, "GET") == 0) {
		if (!x->have_resp) {
			/* A resumed stream owes what the one it resumes did. */
			if (x->resumed)
				return 0;
			accept = http_head_get(&x->req, "Accept");
			return accept != NULL && strcasestr(accept,
			    "text/event-stream") != NULL;
		}
		if (!x->sse)
			return 0;
		if (x->hs != NULL && x->hs->legacy)
			return !hexch_awaits_answer(x) && hexch_delivered(x);
		/* An endpoint event with no legacy session to count in. */
		if (x->saw_endpoint)
			return 0;
		/*
		 * A resumed stream carries what a POST's stream did not
		 * deliver, for requests not known here (an earlier
		 * connection's): it is done with once it has carried an
		 * answer, as most are owed one.
		 */
		if (x->resumed)
			return !hexch_awaits_answer(x) && hexch_delivered(x);
		return 1;
	}
	return x->have_resp && x->sse && !hexch_awaits_answer(x) &&
	    hexch_delivered(x);
}

/*
 * The client closed its connection while x was in flight.  Ending a
 * stream that owes it nothing is how clients end streams: an ordinary end,
 * logged with -v only.  Otherwise it left mid-response: noted, and the
 * exchange is cancelled.  Either way the upstream request closes with it.
 */
void
hexch_client_left(struct hexch *x)
{
	free(x->outcome);
	x->client_left = 1;
	if (hexch_owes_nothing(x)) {
		log_debug("connection %llu: the client ended the stream",
		    (unsigned long long)x->c->id);
		x->outcome = xstrdup(HEXCH_CLIENT_ENDED);
		return;
	}
	hexch_note(x, "the client closed the connection before the "
	    "response ended: the upstream request was closed too "
	    "(cancelled)");
	x->outcome = xstrdup("cancelled: the client closed the connection");
}

/* Record a message of exchange x, pausing everything if the writer lags. */
void
hexch_tap_data(struct hexch *x, enum dir d, struct evbuffer *data, size_t len,
    const char *sse_id, struct hcap *cap)
{
	struct msg	*m = msg_alloc(d, len);

	evbuffer_copyout(data, m->raw, len);
	m->fault = x->tap_fault;
	m->fault_role = x->tap_role;
	if (sse_id != NULL)
		m->sse_id = xstrdup(sse_id);
	if (cap != NULL && hcap_finish(cap, m) && line_cap_is_store()) {
		log_warnx("a message (%s) is longer than SQLite can store "
		    "(%lld bytes): forwarded whole, recorded as its first %zu "
		    "bytes with its size and SHA-256", d == DIR_C2S ?
		    "a request body" : "a response body",
		    (long long)m->wire_size, len);
		hexch_note(x, "a message longer than SQLite can store (%lld "
		    "bytes): recorded as its first %zu bytes with its size and "
		    "SHA-256", (long long)m->wire_size, len);
	} else if (cap != NULL && (m->flags & MSG_TRUNCATED)) {
		log_warnx("a message of %lld bytes (%s) is over the record size "
		    "cap (--max-record-size %zu): forwarded whole, recorded as "
		    "its first %zu bytes with its size and SHA-256",
		    (long long)m->wire_size, d == DIR_C2S ? "a request body" :
		    "a response body", line_cap(), len);
		hexch_note(x, "a message of %lld bytes is over the record size "
		    "cap: recorded as its first %zu bytes with its size and "
		    "SHA-256", (long long)m->wire_size, len);
	}
	if (d == DIR_C2S)
		hexch_count_owed(x, m);
	/* A legacy POST answered in its own body: not on the stream. */
	else if (!x->sse && x->owed_legacy && x->resp.status >= 200 &&
	    x->resp.status <= 299)
		howed_answers(&x->hs->owed, (m->flags & MSG_TRUNCATED) ?
		    m->ident : m->raw, (m->flags & MSG_TRUNCATED) ?
		    m->ident_len : m->len);
	/* Only a form's body is parsed as one: the rest costs nothing. */
	if (hexch_is_form(d == DIR_C2S ? &x->req : &x->resp))
		m = tap_redact_form(m);
	hexch_tap(x, m);
	x->dirty = 1;
	if (tap_paused(x->c->p->tap))
		hstall_full(x->c, len);
}

/*
 * --durable: wait until what the exchange recorded is committed, before
 * the bytes it came in are forwarded.  Blocks the loop (as over stdio):
 * a capture that must survive the machine trades speed for it.
 */
void
hexch_commit(struct hexch *x)
{
	if (!x->dirty)
		return;
	/* Held messages reach the writer only with their session. */
	if (x->hs == NULL)
		hexch_assign(x, hsession_default(x->c->p, x->ts_ns));
	tap_sync(x->c->p->tap);
	x->dirty = 0;
}

static struct hexch *
hexch_new(struct hconn *c, struct http_head *req)
{
	struct hexch	*x = xcalloc(1, sizeof *x);

	x->c = c;
	x->req = *req;
	memset(req, 0, sizeof *req);
	x->ts_ns = clock_wall_ns();
	x->mono_ns = clock_mono_ns();
	x->reqdata = evbuffer_new();
	x->respdata = evbuffer_new();
	x->reqtrailers = evbuffer_new();
	x->resptrailers = evbuffer_new();
	x->durable = c->p->opt->durable;
	return x;
}

/*
 * Note the trailer fields of a request or response (what) that were not
 * passed on (http_chunk_end_trailers), and free their names.
 */
void
hexch_trailers_note(struct hexch *x, const char *what, char *dropped)
{
	if (dropped == NULL)
		return;
	hexch_note(x, "%s trailer fields not passed on, since no trailer "
	    "may carry them (RFC 9110 6.5.1): %s", what, dropped);
	free(dropped);
}

/* Record the trailer fields that came with the bodies, if any did. */
static void
hexch_record_trailers(struct hexch *x)
{
	struct hproxy	*p = x->c->p;
	char		*req, *resp;

	req = hsession_trailers_json(p, x->reqtrailers);
	resp = hsession_trailers_json(p, x->resptrailers);
	if (req != NULL || resp != NULL)
		writer_exchange_trailers(p->w, x->wx, req, resp);
	free(req);
	free(resp);
}

/*
 * Finish the exchange's record: its session (the default if still not
 * known), its end and outcome, and a body kept for people.
 */
static void
hexch_finish_record(struct hexch *x, const char *outcome)
{
	struct hproxy	*p = x->c->p;
	size_t		 keep = 0;
	unsigned char	*body = NULL;

	if (x->hs == NULL)
		hexch_assign(x, hsession_default(p, x->ts_ns));
	hsession_settle(p, x->hs, NULL, 0);
	if (x->outcome == NULL)
		x->outcome = xstrdup(outcome);
	/* A legacy POST refused: its answers will not come on the stream. */
	if (x->owed_legacy && (!x->have_resp ||
	    x->resp.status < 200 || x->resp.status > 299))
		hexch_owed_refused(x);
	if (!x->sse && evbuffer_get_length(x->respdata) > 0) {
		keep = evbuffer_get_length(x->respdata);
		if (keep > HTTP_KEEP_BODY_MAX)
			keep = HTTP_KEEP_BODY_MAX;
		body = evbuffer_pullup(x->respdata, (ev_ssize_t)keep);
	}
	hexch_record_trailers(x);
	tap_exchange_end(p->tap, x->wx, x->outcome, body, keep,
	    x->have_resp && hexch_is_form(&x->resp));
	x->wx = NULL;
}

static void
hexch_free(struct hexch *x)
{
	size_t	i;

	if (x == NULL)
		return;
	if (x->hs != NULL)
		x->hs->refs--;
	for (i = 0; i < x->nheld; i++)
		msg_free(x->held[i]);
	free(x->held);
	hexch_live_free(x);
	http_head_clear(&x->req);
	http_head_clear(&x->resp);
	evbuffer_free(x->reqdata);
	evbuffer_free(x->respdata);
	evbuffer_free(x->reqtrailers);
	evbuffer_free(x->resptrailers);
	hcap_clear(&x->reqcap);
	hcap_clear(&x->respcap);
	if (x->ssebuf != NULL) {
		evbuffer_free(x->ssebuf);
		sse_clear(&x->sp);
	}
	if (x->hold != NULL)
		evbuffer_free(x->hold);
	if (x->reqhold != NULL)
		evbuffer_free(x->reqhold);
	howed_clear(&x->owed);
	hfault_clear(x);
	free(x->rpc_id);
	free(x->up_target);
	free(x->up_host);
	free(x->outcome);
	free(x);
}

/* The exchange on c ended (either way): record it and free it. */
void
hexch_end(struct hconn *c, const char *outcome)
{
	struct hexch	*x = c->x;

	if (x == NULL)
		return;
	/*
	 * A legacy session lives as long as its event stream, and ends for
	 * the reason the stream did: its server or its client ended it, or
	 * the run stopped, or it broke (the outcome says how).
	 */
	if (x->sse && x->hs != NULL && x->hs->legacy &&
	    strcmp(x->req.method, "GET") == 0)
		hsession_end(c->p, x->hs, x->resp_done ? "the server ended "
		    "the SSE stream" : x->client_left ? "the client closed "
		    "the SSE stream" : x->outcome != NULL ? x->outcome :
		    outcome);
	hexch_finish_record(x, outcome);
	hretry_stop(c);
	c->x = NULL;
	hexch_free(x);
}

/*
 * The request head as the upstream gets it (with length not NULL, a
 * body of that length in place of the one it came with): the target under the
 * upstream's path prefix (hexch_target), every field as the client sent
 * it.  Host too, so that an upstream checking Host against DNS rebinding
 * still sees what the client's browser sent (naming the upstream instead
 * would pass any page through such a check); --rewrite-host makes it name
 * the upstream, for upstreams that need their own name, and an
 * absolute-form target's host replaces it.  A request with no Host gets
 * the upstream's.
 */
void
hexch_send_head(struct hconn *c, const struct http_head *h,
    const size_t *length)
{
	struct hproxy	*p = c->p;
	struct evbuffer	*out = bufferevent_get_output(c->ubev);
	const char	*host;
	size_t		 i;
	int		 host_done = 0;

	evbuffer_add_printf(out, "%s %s HTTP/1.%d\r\n", h->method,
	    c->x->up_target, h->version % 10);
	/*
	 * An absolute-form target names the host: a proxy sends that as Host
	 * instead of the client's (RFC 9112 3.2.2).
	 */
	if (p->opt->rewrite_host)
		host = p->up.url.hostport;
	else
		host = c->x->up_host;
	for (i = 0; i < h->nheaders; i++) {
		if (strcasecmp(h->headers[i].name, "Host") == 0 &&
		    host != NULL) {
			if (!host_done)
				evbuffer_add_printf(out, "Host: %s\r\n", host);
			host_done = 1;
			continue;
		}
		if (strcasecmp(h->headers[i].name, "Host") == 0)
			host_done = 1;
		/* --fault: 100 Continue came from mcpreel. */
		if (c->x->fcontinue && strcasecmp(h->headers[i].name,
		    "Expect") == 0)
			continue;
		/* --fault: a changed body's length. */
		if (length != NULL && strcasecmp(h->headers[i].name,
		    "Content-Length") == 0)
			continue;
		evbuffer_add_printf(out, "%s: %s\r\n", h->headers[i].name,
		    h->headers[i].value);
	}
	if (!host_done)
		evbuffer_add_printf(out, "Host: %s\r\n", host != NULL ? host :
		    p->up.url.hostport);
	if (length != NULL)
		evbuffer_add_printf(out, "Content-Length: %zu\r\n", *length);
	evbuffer_add(out, "\r\n", 2);
}

/* Whether a head asks for the connection to close after this message. */
int
hexch_wants_close(const struct http_head *h)
{
	if (http_head_has_token(h, "Connection", "close"))
		return 1;
	return h->version == 10 &&
	    !http_head_has_token(h, "Connection", "keep-alive");
}

/*
 * The request's whole body is in: record it, and keep the id of a
 * JSON-RPC request (of a size a request has) for an error reply.  With
 * --durable it is committed before this returns, so its session must be
 * known now: an initialize request with no session id begins a pending
 * one (the response names it), any other goes to the default session.
 */
static void
hexch_request_done(struct hexch *x)
{
	struct hproxy	*hp = x->c->p;
	size_t		 len = evbuffer_get_length(x->reqdata);
	struct scan	 sc;
	const char	*p;
	int		 init = 0;

	x->req_done = 1;
	if (len > 0 && len <= HTTP_KEEP_BODY_MAX) {
		p = (const char *)evbuffer_pullup(x->reqdata, (ev_ssize_t)len);
		scan_message(p, len, &sc);
		if (sc.kind == KIND_REQUEST)
			x->rpc_id = scan_id_dup(p, &sc);
		if (sc.kind == KIND_REQUEST && x->fhold)
			x->req_rpc_method = scan_method_dup(p, &sc);
		/*
		 * A whole body: what it owes is known from this scan, and
		 * hexch_tap_data need not scan it again.
		 */
		if (x->reqcap.digest == NULL) {
			if (sc.kind == KIND_REQUEST)
				howed_add(&x->owed, p + sc.id_off, sc.id_len);
			else if (sc.kind == KIND_BATCH)
				howed_batch(&x->owed, p, len);
			x->owed_counted = 1;
		}
		init = sc.kind == KIND_REQUEST && !sc.method_escaped &&
		    sc.method_len == 10 &&
		    memcmp(p + sc.method_off, "initialize", 10) == 0;
	}
	if (x->fhold) {
		/* --fault: decided, then forwarded or not (hfault.c). */
		hfault_request(x);
		return;
	}
	if (len == 0)
		return;
	if (x->durable && x->hs == NULL)
		hexch_assign(x, init ? hsession_pending(hp, x->ts_ns) :
		    hsession_default(hp, x->ts_ns));
	hexch_tap_data(x, DIR_C2S, x->reqdata, len, NULL, &x->reqcap);
	evbuffer_drain(x->reqdata, len);
	if (x->durable)
		hexch_commit(x);
}

/*
 * Where the request goes upstream (x->up_target): its target reduced to a
 * path and query (http_target_parse: no form of target may leave the
 * prefix), the path under the upstream's prefix, the upstream's query in
 * front of the client's.  -1 with the status to answer and why if the
 * target is refused.
 */
static int
hexch_target(struct hexch *x, int *status, char **cause)
{
	const struct url	*u = &x->c->p->up.url;
	struct http_target	 t;
	size_t			 i, nhost = 0;

	/* Two Hosts: which one names the server? (RFC 9112 3.2) */
	for (i = 0; i < x->req.nheaders; i++) {
		if (strcasecmp(x->req.headers[i].name, "Host") == 0)
			nhost++;
	}
	if (nhost > 1) {
		*status = 400;
		xasprintf(cause, "HTTP request has more than one Host field");
		return -1;
	}
	if (http_target_parse(x->req.method, x->req.target, &t, status,
	    cause) != 0)
		return -1;
	x->up_target = http_target_join(u->prefix, u->query, &t);
	x->up_host = t.authority;
	t.authority = NULL;
	http_target_clear(&t);
	return 0;
}

/*
 * Take a new request head off the client's buffer and start forwarding
 * it.  Returns 0 when the connection goes on, -1 when it was closed.
 */
int
hexch_start(struct hconn *c, struct http_head *h)
{
	struct hproxy	*p = c->p;
	struct hexch	*x;
	enum http_body_kind kind;
	uint64_t	 length;
	const char	*sid;
	struct hsession	*hs;
	char		*cause = NULL, *legacy;
	int		 status;

	evbuffer_drain(bufferevent_get_input(c->cbev), h->len);
	x = c->x = hexch_new(c, h);
	if (http_body_kind(&x->req, NULL, &kind, &length, &cause) != 0) {
		conn_reply_error(c, 400, "Bad Request", cause);
		free(cause);
		return -1;
	}
	if (hexch_target(x, &status, &cause) != 0) {
		conn_reply_error(c, status, status == 501 ? "Not Implemented" :
		    "Bad Request", cause);
		free(cause);
		return -1;
	}
	http_body_init(&x->reqbody, kind, length);
	x->reqbody.trailers = x->reqtrailers;
	x->close_after = hexch_wants_close(&x->req);
	x->resumed = strcmp(x->req.method, "GET") == 0 &&
	    (sid = http_head_get(&x->req, "Last-Event-ID")) != NULL &&
	    *sid != '\0';
	if (x->durable && kind != HTTP_BODY_NONE)
		x->reqhold = evbuffer_new();
	/* --fault: a body is decided before any of the request goes on. */
	x->fhold = kind != HTTP_BODY_NONE && hfault_active(p);
	if (x->fhold)
		x->reqhold = evbuffer_new();
	/*
	 * The upstream sees nothing of a held request, so cannot ask for
	 * its body: mcpreel does (RFC 9110 10.1.1).
	 */
	if (x->fhold && x->req.version == 11 &&
	    (sid = http_head_get(&x->req, "Expect")) != NULL &&
	    strcasecmp(sid, "100-continue") == 0) {
		evbuffer_add_printf(bufferevent_get_output(c->cbev),
		    "HTTP/1.1 100 Continue\r\n\r\n");
		conn_watch_output(c);
		x->fcontinue = 1;
	}

	/* The session, when the request names it. */
	if ((sid = http_head_get(&x->req, "Mcp-Session-Id")) != NULL &&
	    *sid != '\0')
		hexch_assign(x, hsession_get(p, sid, 0, x->ts_ns));
	else if ((hs = hsession_legacy_find(p, x->req.target)) != NULL)
		hexch_assign(x, hs);
	else if ((legacy = hsession_query_id(x->req.target)) != NULL) {
		hexch_assign(x, hsession_get(p, legacy, 1, x->ts_ns));
		free(legacy);
	}

	if (x->fhold)
		return 0;
	if (conn_connect(c, &cause) != 0) {
		conn_reply_error(c, 502, "Bad Gateway", cause);
		free(cause);
		return -1;
	}
	hexch_send_head(c, &x->req, NULL);
	if (kind == HTTP_BODY_NONE)
		hexch_request_done(x);
	return 0;
}

/*
 * Forward what has arrived of the request body (--durable: once all of it
 * is in and committed; past the record size cap it streams regardless).
 * Returns 0 when the connection goes on, -1 when it was closed.
 */
int
hexch_request_body(struct hconn *c)
{
	struct hexch	*x = c->x;
	struct evbuffer	*in = bufferevent_get_input(c->cbev);
	char		*dropped;
	struct evbuffer	*out;
	struct evbuffer	*tmp = evbuffer_new();
	char		*cause = NULL;
	int		 rc;

	rc = http_body_decode(&x->reqbody, in, tmp, 0, &cause);
	if (rc == -1) {
		evbuffer_free(tmp);
		conn_reply_error(c, 400, "Bad Request", cause);
		free(cause);
		return -1;
	}
	hcap_copy(&x->reqcap, x->reqdata, tmp);
	if (x->fhold) {
		/* --fault: held whole for the decision, up to a bound. */
		evbuffer_add_buffer(x->reqhold, tmp);
		evbuffer_free(tmp);
		if (rc == 1)
			hexch_request_done(x);
		else if (hfault_over(x, evbuffer_get_length(x->reqhold)))
			hfault_request_giveup(x);
		if (!c->dead && c->x == x)
			hfault_account(x);
		return c->dead ? -1 : 0;
	}
	out = bufferevent_get_output(c->ubev);
	if (x->reqhold != NULL) {
		evbuffer_add_buffer(x->reqhold, tmp);
		if (rc == 0 && x->reqcap.digest == NULL) {
			evbuffer_free(tmp);
			return 0;
		}
		evbuffer_add_buffer(tmp, x->reqhold);
		if (rc == 1)
			hexch_request_done(x);
	}
	if (x->reqbody.kind == HTTP_BODY_CHUNKED) {
		http_chunk_add(out, tmp);
		if (rc == 1) {
			http_chunk_end_trailers(out, x->reqtrailers, &dropped);
			hexch_trailers_note(x, "request", dropped);
		}
	} else
		evbuffer_add_buffer(out, tmp);
	evbuffer_free(tmp);
	/* Forwarded first when not durable: the record can wait. */
	if (rc == 1 && !x->req_done)
		hexch_request_done(x);
	conn_watch_output(c);
	return 0;
}
