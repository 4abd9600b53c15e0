/*
 * A server over Streamable HTTP, as a client uses it: each message is a
 * POST to the endpoint, answered with JSON, an SSE stream or 202; the
 * Mcp-Session-Id the server issues goes on every later request; once there
 * is a session, a GET stream carries what the server sends unasked; at the
 * end, a DELETE ends the session.  One connection per request, closed
 * after it, so requests in flight never wait on each other.
 */

#include <sys/queue.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>

#include "transport.h"

/*
 * How long connecting (and the TLS handshake) may take: a server that
 * does not accept within this is taken as unreachable.
 */
#define XH_CONNECT_TIMEOUT_S	10

struct xport_http;

/* One request in flight. */
struct xh_req {
	struct xport_http	*xh;
	struct bufferevent	*bev;
	char			*method;
	struct http_head	 resp;
	int			 have_head;
	int			 complete;	/* the whole response came */
	size_t			 scanned;
	struct http_body	 body;
	int			 sse;
	struct sse_parser	 sp;
	struct evbuffer		*data;		/* decoded body */
	char			*msg;		/* POST: the message sent, for
						   cbs.failed */
	size_t			 msg_len;
	int			 request;	/* POST: msg is a request */
	size_t			 id_off;	/* its id's JSON text in msg */
	size_t			 id_len;
	int			 initialized;	/* POST: msg is notifications/
						   initialized */
	int			 in_session;	/* sent with a session id */
	int			 answered;	/* a JSON-RPC answer came in
						   the response */
	int			 failed;	/* cbs.failed called for msg */
	char			*bad;		/* why the head did not parse */
	TAILQ_ENTRY(xh_req)	 entry;
};

struct xport_http {
	struct xport		 x;	/* first: a struct xport * is one */
	struct upstream		 up;
	char			*session_id;
	int			 get_opened;
	int			 finishing;
	int			 closed;
	struct event		*done_ev;
	size_t			 max_body;	/* of one response; 0: none */
	TAILQ_HEAD(, xh_req)	 reqs;
	/* xport_http_probe: the first POST's status goes here first. */
	int			(*probe)(int, void *);
	void			*probe_arg;
	int			 probed;	/* a POST has had its answer */
};

static void	xh_req_start(struct xport_http *, const char *, const char *,
		    size_t, const char *const *);

/*
 * The message a POST carried will not be delivered or answered: say so
 * once through cbs.failed.
 */
static void
xh_req_fail(struct xh_req *r, const char *why)
{
	struct xport_http	*xh = r->xh;

	/* Once closed, xh_lost has failed all there was. */
	if (r->msg == NULL || r->failed || xh->closed)
		return;
	r->failed = 1;
	if (xh->x.cbs.failed != NULL)
		xh->x.cbs.failed(r->msg, r->msg_len, why, xh->x.arg);
}

static void
xh_done_cb(evutil_socket_t fd, short events, void *arg)
{
	struct xport_http	*xh = arg;

	if (xh->closed)
		return;
	xh->closed = 1;
	if (xh->x.cbs.closed != NULL)
		xh->x.cbs.closed("finished", xh->x.arg);
}

/*
 * The server cannot be reached (refused, unreachable, the connect timed
 * out, the TLS handshake failed) or dropped a request before any answer:
 * the transport is closed with why, so the user of it stops at once
 * instead of waiting out its timeouts.  No request is retried: one that
 * was dropped may have been acted on, and a server that refuses once is
 * not there to replay against.  While finishing it is only a note.
 */
static void
xh_lost(struct xport_http *xh, const char *why)
{
	struct xh_req	*r;

	if (xh->closed || xh->finishing) {
		xport_note(&xh->x, "%s", why);
		return;
	}
	/*
	 * What other requests in flight carry fails now: nothing may fail
	 * after closed.  Restarted after each call, which may send.
	 */
	for (;;) {
		TAILQ_FOREACH(r, &xh->reqs, entry) {
			if (r->msg != NULL && !r->failed && !r->answered)
				break;
		}
		if (r == NULL || xh->closed)
			break;
		xh_req_fail(r, why);
	}
	if (xh->closed)
		return;		/* a send from failed lost it again */
	xh->closed = 1;
	if (xh->x.cbs.closed != NULL)
		xh->x.cbs.closed(why, xh->x.arg);
}

/* After xport_finish, the transport is done when nothing is in flight. */
static void
xh_check_done(struct xport_http *xh)
{
	if (xh->finishing && TAILQ_EMPTY(&xh->reqs) && !xh->closed)
		event_active(xh->done_ev, EV_TIMEOUT, 0);
}

static void
xh_req_free(struct xh_req *r)
{
	struct xport_http	*xh = r->xh;

	TAILQ_REMOVE(&xh->reqs, r, entry);
	if (r->bev != NULL)
		bufferevent_free(r->bev);
	http_head_clear(&r->resp);
	if (r->sse)
		sse_clear(&r->sp);
	evbuffer_free(r->data);
	free(r->method);
	free(r->msg);
	free(r->bad);
	free(r);
	xh_check_done(xh);
}

/* Whether r is the optional GET stream (servers may refuse or end it). */
static int
xh_req_is_get(const struct xh_req *r)
{
	return strcmp(r->method, "GET") == 0;
}

/*
 * Whether a message from the server (scanned into sc) answers r's request:
 * a response or error with the request's id, as written.  An error with
 * "id": null (what servers send for an unknown session) or another id is
 * no answer to it.
 */
static int
xh_req_answers(const struct xh_req *r, const char *body,
    const struct scan *sc)
{
	if (!r->request || !sc->has_id ||
	    (sc->kind != KIND_RESPONSE && sc->kind != KIND_ERROR))
		return 0;
	return sc->id_len == r->id_len &&
	    memcmp(body + sc->id_off, r->msg + r->id_off, r->id_len) == 0;
}

/* Note whether a message from the server answers a request. */
static void
xh_req_seen(struct xh_req *r, const char *body, size_t len)
{
	struct scan	sc;

	scan_message(body, len, &sc);
	if (xh_req_answers(r, body, &sc))
		r->answered = 1;
}

/* Hand on what an SSE stream has completed. */
static void
xh_req_events(struct xh_req *r)
{
	struct sse_event	ev;
	int			rc;

	for (;;) {
		memset(&ev, 0, sizeof ev);
		if ((rc = sse_next(&r->sp, r->data, &ev)) == 0)
			return;
		if (rc == 1 && ev.data_len > 0) {
			xh_req_seen(r, ev.data, ev.data_len);
			r->xh->x.cbs.message(ev.data, ev.data_len,
			    r->xh->x.arg);
		}
		sse_event_clear(&ev);
	}
}

/*
 * A response has ended (whole, or given up): a POST whose message got
 * a status that is not 2xx and no JSON-RPC answer, or a request whose
 * answer's stream ended without it, failed.
 */
static void
xh_req_end(struct xh_req *r)
{
	struct xh_req	*o;
	char		*why;

	if (r->msg == NULL || r->failed || r->answered || !r->have_head)
		return;
	/* A status of 300 and up was noted as it came (xh_req_head). */
	if (r->resp.status >= 300)
		xasprintf(&why, "the server at %s answered HTTP %d%s%s",
		    r->xh->x.target, r->resp.status, *r->resp.reason != '\0' ?
		    " " : "", r->resp.reason);
	else if (r->request && !r->sse && r->resp.status == 202) {
		/*
		 * 202 is for notifications and responses: a request's answer
		 * can then only come on the GET stream, so with none open
		 * it never comes.
		 */
		TAILQ_FOREACH(o, &r->xh->reqs, entry) {
			if (xh_req_is_get(o))
				break;
		}
		if (o != NULL) {
			xport_note(&r->xh->x, "the server at %s answered a request "
			    "with 202: its answer can only come on the GET "
			    "stream", r->xh->x.target);
			return;
		}
		xasprintf(&why, "the server at %s answered a request with 202 "
		    "and has no stream open to answer it on", r->xh->x.target);
		xport_note(&r->xh->x, "%s", why);
	} else if (r->request && (r->sse || r->resp.status != 202)) {
		xasprintf(&why, "the server at %s ended its response to a "
		    "request without an answer", r->xh->x.target);
		xport_note(&r->xh->x, "%s", why);
	} else
		return;
	xh_req_fail(r, why);
	free(why);
}

/* The whole body of a non-SSE response is in. */
static void
xh_req_body_done(struct xh_req *r)
{
	struct xport_http	*xh = r->xh;
	size_t			 len = evbuffer_get_length(r->data);
	struct scan		 sc;
	const char		*body;

	if (len == 0)
		return;
	body = (const char *)evbuffer_pullup(r->data, -1);
	scan_message(body, len, &sc);
	if (xh_req_answers(r, body, &sc))
		r->answered = 1;
	/*
	 * An error status's body that answers nothing sent is the server's
	 * or a gateway's own ({"error":"invalid_token"} from an OAuth layer,
	 * an error with "id": null for an unknown session): only noted, and
	 * the request has failed (xh_req_end), since nobody could match it
	 * to what is waiting.
	 */
	if (r->resp.status >= 400 && !r->answered) {
		xport_note(&xh->x, "%s answered %d with a body that answers no "
		    "message sent (%zu bytes%s)", r->method, r->resp.status,
		    len, sc.kind == KIND_INVALID ? ", no JSON-RPC" : "");
		return;
	}
	if (sc.kind != KIND_INVALID)
		xh->x.cbs.message(body, len, xh->x.arg);
	else
		xport_note(&xh->x, "%s answered %d with a body that is no JSON-RPC "
		    "(%zu bytes)", r->method, r->resp.status, len);
}

static void
xh_req_head(struct xh_req *r)
{
	struct xport_http	*xh = r->xh;
	const char		*sid, *ctype;

	if ((sid = http_head_get(&r->resp, "Mcp-Session-Id")) != NULL &&
	    (xh->session_id == NULL || strcmp(sid, xh->session_id) != 0)) {
		free(xh->session_id);
		xh->session_id = xstrdup(sid);
	}
	ctype = http_head_get(&r->resp, "Content-Type");
	r->sse = ctype != NULL &&
	    strncasecmp(ctype, "text/event-stream", 17) == 0;
	if (r->sse)
		sse_init(&r->sp);
	if (r->resp.status >= 300)
		xport_note(&xh->x, "%s answered %d %s", r->method, r->resp.status,
		    r->resp.reason);
	/*
	 * Listen for what the server sends unasked once the session has
	 * begun: when the server took notifications/initialized (as the
	 * TypeScript SDK client does, so the server says nothing unasked
	 * before a client would hear it), or any later POST (a client that
	 * never sends it); not at the session id's first coming.
	 */
	if (xh->session_id != NULL && !xh->get_opened && !xh->finishing &&
	    strcmp(r->method, "POST") == 0 && r->resp.status < 300 &&
	    (r->initialized || r->in_session)) {
		xh->get_opened = 1;
		xh_req_start(xh, "GET", NULL, 0, NULL);
	}
}

/* Parse what has come; returns 1 when the response is complete. */
static int
xh_req_read(struct xh_req *r, int eof)
{
	struct evbuffer		*in = bufferevent_get_input(r->bev);
	enum http_body_kind	 kind;
	uint64_t		 length;
	char			*cause = NULL;
	int			 rc;

	while (!r->have_head) {
		rc = http_head_parse(in, 0, &r->scanned, &r->resp, &cause);
		if (rc == 0)
			return eof;
		if (rc == -1) {
			xasprintf(&r->bad, "%s answered a %s with a response "
			    "that does not parse: %s", r->xh->up.url.origin,
			    r->method, cause);
			free(cause);
			return 1;
		}
		evbuffer_drain(in, r->resp.len);
		if (r->resp.status < 200) {
			http_head_clear(&r->resp);
			r->scanned = 0;
			continue;
		}
		r->have_head = 1;
		if (http_body_kind(&r->resp, r->method, &kind, &length,
		    &cause) != 0) {
			xport_note(&r->xh->x, "bad response to %s: %s", r->method,
			    cause);
			free(cause);
			return 1;
		}
		http_body_init(&r->body, kind, length);
		/* xport_http_probe: the answer may be someone else's. */
		if (r->msg != NULL && r->xh->probe != NULL &&
		    !r->xh->probed) {
			r->xh->probed = 1;
			if (r->xh->probe(r->resp.status, r->xh->probe_arg)) {
				r->complete = 1;
				r->failed = 1;
				return 1;
			}
		}
		xh_req_head(r);
	}
	rc = http_body_decode(&r->body, in, r->data, eof, &cause);
	if (rc == -1) {
		xport_note(&r->xh->x, "bad response body to %s: %s", r->method,
		    cause);
		free(cause);
		return 1;
	}
	if (r->sse)
		xh_req_events(r);
	/*
	 * What one response may make us hold: a body not yet whole, or the
	 * event an SSE stream is in the middle of.  Past it the response is
	 * given up and its connection closed (an endless body, an endless
	 * event), which the replay reports with this note.
	 */
	if (r->xh->max_body != 0 && evbuffer_get_length(r->data) +
	    (r->sse ? evbuffer_get_length(r->sp.data) : 0) > r->xh->max_body) {
		xport_note(&r->xh->x, "the response to %s is over %zu bytes%s "
		    "(--max-record-size): given up, its connection closed",
		    r->method, r->xh->max_body, r->sse ? " in one SSE event" :
		    "");
		return 1;
	}
	if (rc == 1)
		r->complete = 1;
	if (rc == 1 && !r->sse)
		xh_req_body_done(r);
	return rc == 1 || eof;
}

/*
 * A response whose head did not parse: like a connection closed before
 * any response, the message fails and the server is lost (the GET stream
 * is only let go).
 */
static void
xh_req_unparsed(struct xh_req *r)
{
	xh_req_fail(r, r->bad);
	if (xh_req_is_get(r))
		xport_note(&r->xh->x, "the GET stream: %s; going on without it",
		    r->bad);
	else
		xh_lost(r->xh, r->bad);
}

static void
xh_read_cb(struct bufferevent *bev, void *arg)
{
	struct xh_req	*r = arg;

	if (xh_req_read(r, 0)) {
		if (r->bad != NULL)
			xh_req_unparsed(r);
		else
			xh_req_end(r);
		xh_req_free(r);
	}
}

/*
 * Whether a connection that ended left r without its answer: the server
 * is lost.  Never the GET stream: it is optional, so its end, at any
 * point, is only noted.
 */
static int
xh_req_broken(const struct xh_req *r)
{
	return !r->complete && !xh_req_is_get(r);
}

static void
xh_event_cb(struct bufferevent *bev, short what, void *arg)
{
	struct xh_req	*r = arg;
	char		*why;

	if ((what & BEV_EVENT_TIMEOUT) && !r->have_head) {
		xasprintf(&why, "cannot reach %s: no connection within %d s",
		    r->xh->up.url.origin, XH_CONNECT_TIMEOUT_S);
		xh_req_fail(r, why);
		if (xh_req_is_get(r))
			xport_note(&r->xh->x, "the GET stream: %s; going on without "
			    "it", why);
		else
			xh_lost(r->xh, why);
		free(why);
		xh_req_free(r);
		return;
	}
	if (what & BEV_EVENT_CONNECTED) {
		bufferevent_set_timeouts(bev, NULL, NULL);
		return;
	}
	/*
	 * A connection that ends before its whole response (no head, or a
	 * body cut short: a stream that ends properly has its last chunk) is
	 * a server that went away, or is going.  Only the GET stream, which
	 * servers may end as they like, is let go once it has begun.
	 */
	if (what & BEV_EVENT_EOF) {
		xh_req_read(r, 1);
		if (r->bad != NULL)
			xh_req_unparsed(r);
		else if (!r->complete) {
			xasprintf(&why, "%s closed the connection of a %s "
			    "before %s", r->xh->up.url.origin, r->method,
			    r->have_head ? "the end of the response" :
			    "any response");
			xh_req_fail(r, why);
			if (xh_req_broken(r))
				xh_lost(r->xh, why);
			else if (!r->have_head)
				xport_note(&r->xh->x, "the GET stream: %s; going on "
				    "without it", why);
			free(why);
		} else
			xh_req_end(r);
		xh_req_free(r);
		return;
	}
	/* What came before the error may be a whole, close-ended body. */
	xh_req_read(r, 1);
	why = net_upstream_error(bev, &r->xh->up);
	if (r->complete)
		xh_req_end(r);
	else
		xh_req_fail(r, why);
	if (xh_req_broken(r))
		xh_lost(r->xh, why);
	else
		xport_note(&r->xh->x, "%s to %s failed: %s", r->method,
		    r->xh->up.url.origin, why);
	free(why);
	xh_req_free(r);
}

/* Send one HTTP request on a connection of its own. */
static void
xh_req_start(struct xport_http *xh, const char *method, const char *body,
    size_t len, const char *const *headers)
{
	struct xh_req	*r = xcalloc(1, sizeof *r);
	struct evbuffer	*out;
	struct timeval	 tv = { XH_CONNECT_TIMEOUT_S, 0 };
	char		*cause = NULL, **h;

	r->xh = xh;
	r->method = xstrdup(method);
	r->data = evbuffer_new();
	if (strcmp(method, "POST") == 0) {
		struct scan	sc;

		r->msg = xmalloc(len > 0 ? len : 1);
		memcpy(r->msg, body, len);
		r->msg_len = len;
		scan_message(body, len, &sc);
		r->request = sc.kind == KIND_REQUEST && sc.has_id;
		r->id_off = sc.id_off;
		r->id_len = sc.id_len;
		r->initialized = sc.kind == KIND_NOTIFICATION &&
		    sc.has_method && sc.method_len == 25 &&
		    memcmp(body + sc.method_off, "notifications/initialized",
		    25) == 0;
		r->in_session = xh->session_id != NULL;
	}
	TAILQ_INSERT_TAIL(&xh->reqs, r, entry);
	if ((r->bev = net_upstream_connect(xh->x.base, &xh->up, &cause)) ==
	    NULL) {
		xh_req_fail(r, cause);
		xh_req_free(r);
		if (strcmp(method, "GET") == 0)
			xport_note(&xh->x, "the GET stream: %s; going on without it",
			    cause);
		else
			xh_lost(xh, cause);
		free(cause);
		return;
	}
	bufferevent_setcb(r->bev, xh_read_cb, NULL, xh_event_cb, r);
	bufferevent_set_timeouts(r->bev, NULL, &tv);
	out = bufferevent_get_output(r->bev);
	evbuffer_add_printf(out, "%s %s%s%s HTTP/1.1\r\nHost: %s\r\n", method,
	    *xh->up.url.prefix != '\0' ? xh->up.url.prefix : "/",
	    xh->up.url.query != NULL ? "?" : "", xh->up.url.query != NULL ?
	    xh->up.url.query : "", xh->up.url.hostport);
	if (strcmp(method, "POST") == 0)
		evbuffer_add_printf(out, "Content-Type: application/json\r\n"
		    "Accept: application/json, text/event-stream\r\n"
		    "Content-Length: %zu\r\n", len);
	else if (strcmp(method, "GET") == 0)
		evbuffer_add_printf(out, "Accept: text/event-stream\r\n");
	if (xh->session_id != NULL)
		evbuffer_add_printf(out, "Mcp-Session-Id: %s\r\n",
		    xh->session_id);
	if (xh->x.protocol_version != NULL)
		evbuffer_add_printf(out, "MCP-Protocol-Version: %s\r\n",
		    xh->x.protocol_version);
	for (h = xh->x.headers; h != NULL && *h != NULL; h++)
		evbuffer_add_printf(out, "%s\r\n", *h);
	for (; headers != NULL && *headers != NULL; headers++)
		evbuffer_add_printf(out, "%s\r\n", *headers);
	evbuffer_add_printf(out, "Connection: close\r\n\r\n");
	if (len > 0)
		evbuffer_add(out, body, len);
	bufferevent_enable(r->bev, xh->x.paused ? EV_WRITE : EV_READ |
	    EV_WRITE);
}

static void
xh_send(struct xport *x, const char *bytes, size_t len,
    const char *const *headers)
{
	xh_req_start((struct xport_http *)x, "POST", bytes, len, headers);
}

/* Close the event stream, end the session, and say when all is done. */
static void
xh_finish(struct xport *x)
{
	struct xport_http	*xh = (struct xport_http *)x;
	struct xh_req		*r, *next;

	xh->finishing = 1;
	for (r = TAILQ_FIRST(&xh->reqs); r != NULL; r = next) {
		next = TAILQ_NEXT(r, entry);
		if (strcmp(r->method, "GET") == 0)
			xh_req_free(r);
	}
	if (xh->session_id != NULL)
		xh_req_start(xh, "DELETE", NULL, 0, NULL);
	xh_check_done(xh);
}

static void
xh_free(struct xport *x)
{
	struct xport_http	*xh = (struct xport_http *)x;
	struct xh_req		*r;

	while ((r = TAILQ_FIRST(&xh->reqs)) != NULL)
		xh_req_free(r);
	event_free(xh->done_ev);
	net_upstream_clear(&xh->up);
	free(xh->session_id);
	free(xh);
}

static void
xh_pause(struct xport *x, int on)
{
	struct xport_http	*xh = (struct xport_http *)x;
	struct xh_req		*r;

	TAILQ_FOREACH(r, &xh->reqs, entry) {
		if (on)
			bufferevent_disable(r->bev, EV_READ);
		else
			bufferevent_enable(r->bev, EV_READ);
	}
}

static const struct xport_ops xh_ops = { xh_send, xh_finish, xh_pause,
	xh_free, NULL };

/* A Streamable HTTP endpoint (its full URL, path included). */
struct xport *
xport_http(struct event_base *base, const char *url, const char *cacert,
    int insecure, size_t max_body, const struct xport_cbs *cbs, void *arg,
    char **cause)
{
	struct xport_http	*xh = xcalloc(1, sizeof *xh);

	xh->max_body = max_body;

	xport_init(&xh->x, &xh_ops, base, cbs, arg);
	if (net_upstream_init(&xh->up, url, cacert, insecure, cause) != 0) {
		free(xh);
		return NULL;
	}
	TAILQ_INIT(&xh->reqs);
	xh->x.target = xstrdup(url);
	xh->done_ev = event_new(base, -1, 0, xh_done_cb, xh);
	return &xh->x;
}

/*
 * For xport_remote: the status of the first POST's answer goes to fn
 * before anything else sees it; when fn returns 1 the answer is fn's (no
 * message, note or failure comes of it, and its connection is closed).
 */
void
xport_http_probe(struct xport *x, int (*fn)(int, void *), void *arg)
{
	struct xport_http	*xh = (struct xport_http *)x;

	xh->probe = fn;
	xh->probe_arg = arg;
}
