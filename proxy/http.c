/*
 * Recording over HTTP: a reverse proxy for Streamable HTTP and the legacy
 * HTTP+SSE transport.
 *
 *   client --> hconn.cbev --[request head rewritten: target, Host]--> ubev
 *   client <-- hconn.cbev <--[response head as sent, body re-framed]-- ubev
 *
 * Each client connection gets its own upstream connection, so connection
 * semantics (keep-alive, close, a client that goes away) carry over one to
 * one: a client closing a stream closes the upstream request at once,
 * which is how 2026-07-28 cancels.  One exchange is in flight per
 * connection; pipelined requests wait in the client's buffer.
 *
 * Bodies are decoded as they arrive and forwarded at once in the framing
 * they came in (chunked stays chunked, chunk by chunk), so an SSE event
 * reaches the client as soon as the server sent it.  Request bodies and
 * JSON response bodies are recorded as one message each; each SSE event's
 * data is one message with its event id.  Bodies are never changed, with
 * one exception: a legacy `endpoint` event naming the upstream by absolute
 * URL (or under the upstream's path prefix) is rewritten to name us, or
 * the client would bypass the proxy.
 */

#include <sys/socket.h>

#include <netinet/in.h>
#include <netinet/tcp.h>

#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>
#include <event2/listener.h>
#include <event2/thread.h>

#include <jansson.h>

#include "http_int.h"

/*
 * The JSON-RPC error code of our own error replies: the implementation-
 * defined server error the MCP SDKs use for transport errors too.
 */
#define HTTP_RPC_ERROR		-32000


static void	conn_client_read_cb(struct bufferevent *, void *);
static void	conn_client_write_cb(struct bufferevent *, void *);
static void	conn_client_event_cb(struct bufferevent *, short, void *);
static void	conn_up_read_cb(struct bufferevent *, void *);
static void	conn_up_write_cb(struct bufferevent *, void *);
static void	conn_up_event_cb(struct bufferevent *, short, void *);
static void	conn_close_after_output(struct hconn *);
static void	conn_process_requests(struct hconn *);
static void	conn_up_read(struct hconn *, int);
static void	exch_keep_body(struct hexch *, struct evbuffer *);

static void
set_pause(struct bufferevent *bev, int *bits, int why, int on)
{
	int	before = *bits;

	if (on)
		*bits |= why;
	else
		*bits &= ~why;
	if (bev == NULL)
		return;
	if (before == 0 && *bits != 0)
		bufferevent_disable(bev, EV_READ);
	else if (before != 0 && *bits == 0)
		bufferevent_enable(bev, EV_READ);
}

/* The writer caught up: every connection reads again. */
static void
proxy_resume_cb(void *arg)
{
	struct hproxy	*p = arg;
	struct hconn	*c;

	TAILQ_FOREACH(c, &p->conns, entry) {
		set_pause(c->cbev, &c->cpause, PAUSE_STORE, 0);
		set_pause(c->ubev, &c->upause, PAUSE_STORE, 0);
	}
}

/* After a tap said the writer is behind: every connection pauses. */
static void
proxy_store_full(struct hproxy *p)
{
	struct hconn	*c;

	TAILQ_FOREACH(c, &p->conns, entry) {
		set_pause(c->cbev, &c->cpause, PAUSE_STORE, 1);
		set_pause(c->ubev, &c->upause, PAUSE_STORE, 1);
	}
}

/* Record a message of exchange x, pausing everything if the writer lags. */
static void
exch_tap(struct hexch *x, enum dir d, struct evbuffer *data, size_t len,
    const char *sse_id, struct hcap *cap)
{
	struct msg	*m = msg_alloc(d, len);

	evbuffer_copyout(data, m->raw, len);
	if (sse_id != NULL)
		m->sse_id = xstrdup(sse_id);
	if (cap != NULL && hcap_finish(cap, m)) {
		log_warnx("a message of %lld bytes (%s) is over the record size "
		    "cap (--max-record-size %zu): forwarded whole, recorded as "
		    "its first %zu bytes with its size and SHA-256",
		    (long long)m->wire_size, d == DIR_C2S ? "a request body" :
		    "a response body", line_cap(), len);
		hexch_note(x, "a message of %lld bytes is over the record size "
		    "cap: recorded as its first %zu bytes with its size and "
		    "SHA-256", (long long)m->wire_size, len);
	}
	hexch_tap(x, m);
	if (tap_paused(x->c->p->tap))
		proxy_store_full(x->c->p);
}

static struct hexch *
exch_new(struct hconn *c, struct http_head *req)
{
	struct hexch	*x = xcalloc(1, sizeof *x);

	x->c = c;
	x->req = *req;
	memset(req, 0, sizeof *req);
	x->ts_ns = clock_wall_ns();
	x->mono_ns = clock_mono_ns();
	x->reqdata = evbuffer_new();
	x->respdata = evbuffer_new();
	return x;
}

/*
 * Finish the exchange's record: its session (the default if still not
 * known), its end and outcome, and a body kept for people.
 */
static void
exch_finish_record(struct hexch *x, const char *outcome)
{
	struct hproxy	*p = x->c->p;
	size_t		 keep = 0;
	unsigned char	*body = NULL;

	if (x->hs == NULL)
		hexch_assign(x, hsession_default(p));
	if (x->outcome == NULL)
		x->outcome = xstrdup(outcome);
	if (!x->sse && evbuffer_get_length(x->respdata) > 0) {
		keep = evbuffer_get_length(x->respdata);
		if (keep > HTTP_KEEP_BODY_MAX)
			keep = HTTP_KEEP_BODY_MAX;
		body = evbuffer_pullup(x->respdata, (ev_ssize_t)keep);
	}
	tap_exchange_end(p->tap, x->wx, x->outcome, body, keep);
	x->wx = NULL;
}

static void
exch_free(struct hexch *x)
{
	size_t	i;

	if (x == NULL)
		return;
	for (i = 0; i < x->nheld; i++)
		msg_free(x->held[i]);
	free(x->held);
	http_head_clear(&x->req);
	http_head_clear(&x->resp);
	evbuffer_free(x->reqdata);
	evbuffer_free(x->respdata);
	hcap_clear(&x->reqcap);
	hcap_clear(&x->respcap);
	if (x->ssebuf != NULL) {
		evbuffer_free(x->ssebuf);
		sse_clear(&x->sp);
	}
	if (x->hold != NULL)
		evbuffer_free(x->hold);
	free(x->rpc_id);
	free(x->outcome);
	free(x);
}

/* The exchange on c ended (either way): record it and free it. */
static void
exch_end(struct hconn *c, const char *outcome)
{
	struct hexch	*x = c->x;

	if (x == NULL)
		return;
	/* A legacy session lives as long as its event stream. */
	if (x->sse && x->hs != NULL && x->hs->legacy &&
	    strcmp(x->req.method, "GET") == 0)
		hsession_end(c->p, x->hs, x->resp_done ? "the server ended "
		    "the SSE stream" : "the client closed the SSE stream");
	exch_finish_record(x, outcome);
	c->x = NULL;
	exch_free(x);
}

/* A JSON-RPC error answering request id with why; NULL if why is no UTF-8. */
static char *
conn_error_json(const char *id, const char *why)
{
	json_t	*j;
	char	*text, *s;

	xasprintf(&text, "mcpreel: %s", why);
	j = json_string(text);
	free(text);
	if (j == NULL)
		return NULL;
	text = json_dumps(j, JSON_ENCODE_ANY);
	json_decref(j);
	if (text == NULL)
		return NULL;
	xasprintf(&s, "{\"jsonrpc\":\"2.0\",\"id\":%s,\"error\":{\"code\":%d,"
	    "\"message\":%s}}", id, HTTP_RPC_ERROR, text);
	free(text);
	return s;
}

/*
 * Answer the client ourselves, when the upstream could not: a JSON-RPC
 * error for a JSON-RPC request (its client can match it to the request),
 * else a short plain reason; the connection closes after it.
 */
void
conn_reply_error(struct hconn *c, int status, const char *reason,
    const char *why)
{
	struct evbuffer	*out = bufferevent_get_output(c->cbev);
	struct hexch	*x = c->x;
	const char	*ctype = "application/json";
	char		*body = NULL;

	if (x != NULL && x->sent_resp) {
		/* Too late for a status: all we can do is close. */
		conn_close(c, why);
		return;
	}
	if (x != NULL && x->rpc_id != NULL)
		body = conn_error_json(x->rpc_id, why);
	if (body == NULL) {
		ctype = "text/plain; charset=utf-8";
		xasprintf(&body, "mcpreel: %s\n", why);
	}
	evbuffer_add_printf(out, "HTTP/1.1 %d %s\r\nContent-Type: %s\r\n"
	    "Content-Length: %zu\r\nConnection: close\r\n\r\n%s", status,
	    reason, ctype, strlen(body), body);
	free(body);
	if (x != NULL) {
		x->sent_resp = 1;
		hexch_note(x, "answered %d: %s", status, why);
		free(x->outcome);
		xasprintf(&x->outcome, "%d from mcpreel: %s", status, why);
	}
	conn_close_after_output(c);
}

static void
conn_free_cb(evutil_socket_t fd, short events, void *arg)
{
	free(arg);
}

/*
 * Close a connection now, both sides, ending any exchange with why.  The
 * struct itself is freed on the next loop pass, so a caller further up
 * may still look at c->dead.
 */
void
conn_close(struct hconn *c, const char *why)
{
	struct hproxy	*p = c->p;

	if (c->dead)
		return;
	log_debug("connection %llu closed: %s", (unsigned long long)c->id, why);
	c->dead = 1;
	hwait_stop(c);
	if (c->x != NULL)
		exch_end(c, why);
	if (c->ubev != NULL)
		bufferevent_free(c->ubev);
	bufferevent_free(c->cbev);
	c->ubev = c->cbev = NULL;
	TAILQ_REMOVE(&p->conns, c, entry);
	if (event_base_once(p->base, -1, EV_TIMEOUT, conn_free_cb, c,
	    NULL) != 0)
		fatalx("cannot schedule freeing a connection");
}

/* Close once what we hold for the client is sent. */
static void
conn_close_after_output(struct hconn *c)
{
	if (c->dead)
		return;
	if (c->x != NULL)
		exch_end(c, c->x->outcome != NULL ? c->x->outcome : "closed");
	c->closing = 1;
	if (c->ubev != NULL) {
		bufferevent_free(c->ubev);
		c->ubev = NULL;
	}
	set_pause(c->cbev, &c->cpause, PAUSE_CLOSING, 1);
	if (evbuffer_get_length(bufferevent_get_output(c->cbev)) == 0)
		conn_close(c, "done");
	else
		hwait_set(c);
}

/* Open the upstream connection for c if it has none. */
static int
conn_connect(struct hconn *c, char **cause)
{
	struct timeval	tv = { HTTP_CONNECT_TIMEOUT, 0 };

	if (c->ubev != NULL)
		return 0;
	c->ubev = net_upstream_connect(c->p->base, &c->p->up, cause);
	if (c->ubev == NULL)
		return -1;
	c->connected = 0;
	c->uscanned = 0;
	c->upause = 0;
	if (tap_paused(c->p->tap))
		c->upause |= PAUSE_STORE;
	bufferevent_setcb(c->ubev, conn_up_read_cb, conn_up_write_cb,
	    conn_up_event_cb, c);
	/* The write timeout bounds the connect; cleared once connected. */
	bufferevent_set_timeouts(c->ubev, NULL, &tv);
	bufferevent_enable(c->ubev, EV_WRITE);
	if (c->upause == 0)
		bufferevent_enable(c->ubev, EV_READ);
	return 0;
}

/*
 * The request head as the upstream gets it: the target under the
 * upstream's path prefix, every field as the client sent it.  Host too,
 * so that an upstream checking Host against DNS rebinding still sees what
 * the client's browser sent (naming the upstream instead would pass any
 * page through such a check); --rewrite-host makes it name the upstream,
 * for upstreams that need their own name.  A request with no Host gets
 * the upstream's.
 */
static void
conn_send_request_head(struct hconn *c, const struct http_head *h)
{
	struct hproxy	*p = c->p;
	struct evbuffer	*out = bufferevent_get_output(c->ubev);
	const char	*target = h->target;
	size_t		 i;
	int		 host_done = 0;

	/* An absolute-form target keeps only its path. */
	if (strncmp(target, "http://", 7) == 0 ||
	    strncmp(target, "https://", 8) == 0) {
		target = strchr(strstr(target, "//") + 2, '/');
		if (target == NULL)
			target = "/";
	}
	evbuffer_add_printf(out, "%s %s%s HTTP/1.%d\r\n", h->method,
	    *target == '/' ? p->up.url.prefix : "", target, h->version % 10);
	for (i = 0; i < h->nheaders; i++) {
		if (strcasecmp(h->headers[i].name, "Host") == 0 &&
		    p->opt->rewrite_host) {
			if (!host_done)
				evbuffer_add_printf(out, "Host: %s\r\n",
				    p->up.url.hostport);
			host_done = 1;
			continue;
		}
		if (strcasecmp(h->headers[i].name, "Host") == 0)
			host_done = 1;
		evbuffer_add_printf(out, "%s: %s\r\n", h->headers[i].name,
		    h->headers[i].value);
	}
	if (!host_done)
		evbuffer_add_printf(out, "Host: %s\r\n", p->up.url.hostport);
	evbuffer_add(out, "\r\n", 2);
}

/* Whether a head asks for the connection to close after this message. */
static int
head_wants_close(const struct http_head *h)
{
	if (http_head_has_token(h, "Connection", "close"))
		return 1;
	return h->version == 10 &&
	    !http_head_has_token(h, "Connection", "keep-alive");
}

/*
 * The request's whole body is in: record it, and keep the id of a
 * JSON-RPC request (of a size a request has) for an error reply.
 */
static void
exch_request_done(struct hexch *x)
{
	size_t		 len = evbuffer_get_length(x->reqdata);
	struct scan	 sc;
	const char	*p;

	x->req_done = 1;
	if (len > 0 && len <= HTTP_KEEP_BODY_MAX) {
		p = (const char *)evbuffer_pullup(x->reqdata, (ev_ssize_t)len);
		scan_message(p, len, &sc);
		if (sc.kind == KIND_REQUEST)
			x->rpc_id = scan_id_dup(p, &sc);
	}
	if (len > 0)
		exch_tap(x, DIR_C2S, x->reqdata, len, NULL, &x->reqcap);
	evbuffer_drain(x->reqdata, len);
}

/*
 * Take a new request head off the client's buffer and start forwarding
 * it.  Returns 0 when the connection goes on, -1 when it was closed.
 */
static int
conn_start_request(struct hconn *c, struct http_head *h)
{
	struct hproxy	*p = c->p;
	struct hexch	*x;
	enum http_body_kind kind;
	uint64_t	 length;
	const char	*sid;
	char		*cause = NULL, *legacy;

	evbuffer_drain(bufferevent_get_input(c->cbev), h->len);
	x = c->x = exch_new(c, h);
	if (http_body_kind(&x->req, NULL, &kind, &length, &cause) != 0) {
		conn_reply_error(c, 400, "Bad Request", cause);
		free(cause);
		return -1;
	}
	http_body_init(&x->reqbody, kind, length);
	x->close_after = head_wants_close(&x->req);

	/* The session, when the request names it. */
	if ((sid = http_head_get(&x->req, "Mcp-Session-Id")) != NULL &&
	    *sid != '\0')
		hexch_assign(x, hsession_get(p, sid, 0));
	else if ((legacy = hsession_query_id(x->req.target)) != NULL) {
		hexch_assign(x, hsession_get(p, legacy, 1));
		free(legacy);
	}

	if (conn_connect(c, &cause) != 0) {
		conn_reply_error(c, 502, "Bad Gateway", cause);
		free(cause);
		return -1;
	}
	conn_send_request_head(c, &x->req);
	if (kind == HTTP_BODY_NONE)
		exch_request_done(x);
	return 0;
}

/*
 * Forward what has arrived of the request body.  Returns 0 when the
 * connection goes on, -1 when it was closed.
 */
static int
conn_forward_request_body(struct hconn *c)
{
	struct hexch	*x = c->x;
	struct evbuffer	*in = bufferevent_get_input(c->cbev);
	struct evbuffer	*out = bufferevent_get_output(c->ubev);
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
	if (x->reqbody.kind == HTTP_BODY_CHUNKED) {
		http_chunk_add(out, tmp);
		if (rc == 1)
			http_chunk_end(out);
	} else
		evbuffer_add_buffer(out, tmp);
	evbuffer_free(tmp);
	if (rc == 1)
		exch_request_done(x);
	if (evbuffer_get_length(out) >= HTTP_MAX_OUTPUT) {
		set_pause(c->cbev, &c->cpause, PAUSE_PEER, 1);
		bufferevent_setwatermark(c->ubev, EV_WRITE, HTTP_MAX_OUTPUT / 2,
		    0);
	}
	return 0;
}

/* Read requests off the client's buffer while no exchange is in flight. */
static void
conn_read_requests(struct hconn *c)
{
	struct evbuffer		*in = bufferevent_get_input(c->cbev);
	struct http_head	 h;
	char			*cause = NULL;
	int			 rc;

	for (;;) {
		if (c->dead || c->closing)
			return;
		if (c->x == NULL) {
			if (evbuffer_get_length(in) == 0)
				return;
			memset(&h, 0, sizeof h);
			rc = http_head_parse(in, 1, &c->scanned, &h, &cause);
			if (rc == 0)
				return;
			if (rc == -1) {
				log_info("connection %llu: bad request: %s",
				    (unsigned long long)c->id, cause);
				conn_reply_error(c, 400, "Bad Request", cause);
				free(cause);
				return;
			}
			if (conn_start_request(c, &h) != 0)
				return;
			continue;
		}
		if (!c->x->req_done) {
			if (conn_forward_request_body(c) != 0)
				return;
			if (!c->x->req_done)
				return;
		}
		/*
		 * One exchange at a time: what follows waits, unless there
		 * is much of it (then we stop reading until this is done).
		 */
		set_pause(c->cbev, &c->cpause, PAUSE_BUSY,
		    evbuffer_get_length(in) > HTTP_HEAD_MAX);
		return;
	}
}

/* Take what the client sent, then start the time limit that now runs. */
static void
conn_process_requests(struct hconn *c)
{
	conn_read_requests(c);
	hwait_set(c);
}

static void
conn_client_read_cb(struct bufferevent *bev, void *arg)
{
	conn_process_requests(arg);
}

/* The client's output drained: the upstream may be read again. */
static void
conn_client_write_cb(struct bufferevent *bev, void *arg)
{
	struct hconn	*c = arg;

	if (c->upause & PAUSE_PEER) {
		bufferevent_setwatermark(c->cbev, EV_WRITE, 0, 0);
		set_pause(c->ubev, &c->upause, PAUSE_PEER, 0);
		if (c->ubev != NULL &&
		    evbuffer_get_length(bufferevent_get_input(c->ubev)) > 0)
			conn_up_read(c, 0);
		if (c->dead)
			return;
	}
	if (c->closing && evbuffer_get_length(bufferevent_get_output(bev)) ==
	    0)
		conn_close(c, "done");
}

/*
 * The client closed its connection (or it broke).  An exchange still in
 * flight is cancelled: the upstream connection closes at once, as the
 * client's did.
 */
static void
conn_client_event_cb(struct bufferevent *bev, short what, void *arg)
{
	struct hconn	*c = arg;
	struct hexch	*x = c->x;

	if (x != NULL && !x->resp_done) {
		hexch_note(x, "the client closed the connection before the "
		    "response ended: the upstream request was closed too "
		    "(cancelled)");
		free(x->outcome);
		x->outcome = xstrdup("cancelled: the client closed the "
		    "connection");
	}
	conn_close(c, (what & BEV_EVENT_EOF) ? "client closed" :
	    "client connection failed");
}

static void
conn_up_write_cb(struct bufferevent *bev, void *arg)
{
	struct hconn	*c = arg;

	if (c->cpause & PAUSE_PEER) {
		bufferevent_setwatermark(c->ubev, EV_WRITE, 0, 0);
		set_pause(c->cbev, &c->cpause, PAUSE_PEER, 0);
		conn_process_requests(c);
	}
}

/*
 * A legacy endpoint event names where to POST.  If it names the upstream
 * (absolute URL, or a path under its prefix), make it name us.
 */
static char *
endpoint_rewrite(struct hproxy *p, const char *data)
{
	const char	*rest = NULL, *prefix = p->up.url.prefix;
	size_t		 olen = strlen(p->up.url.origin), plen = strlen(prefix);
	char		*s;

	if (strncmp(data, p->up.url.origin, olen) == 0 &&
	    (data[olen] == '/' || data[olen] == '\0' || data[olen] == '?'))
		rest = data + olen;
	else if (*data == '/')
		rest = data;
	if (rest == NULL)
		return NULL;
	if (plen > 0 && strncmp(rest, prefix, plen) == 0 &&
	    (rest[plen] == '/' || rest[plen] == '?' || rest[plen] == '\0'))
		rest += plen;
	else if (rest == data)
		return NULL;	/* a relative path outside the prefix */
	xasprintf(&s, "%s%s", rest == data ? "" : p->origin, rest);
	if (strcmp(s, data) == 0) {
		free(s);
		return NULL;
	}
	return s;
}

/* Replace the first occurrence of from with to in buf. */
static void
evbuffer_replace_first(struct evbuffer *buf, const char *from, const char *to)
{
	struct evbuffer_ptr	 at;
	struct evbuffer		*tail;
	size_t			 pos;

	at = evbuffer_search(buf, from, strlen(from), NULL);
	if (at.pos < 0)
		return;
	pos = (size_t)at.pos;
	tail = evbuffer_new();
	evbuffer_remove_buffer(buf, tail, pos);
	evbuffer_drain(buf, strlen(from));
	evbuffer_add(tail, to, strlen(to));
	evbuffer_add_buffer(tail, buf);
	evbuffer_add_buffer(buf, tail);
	evbuffer_free(tail);
}

/* One complete SSE event from the upstream. */
static void
exch_sse_event(struct hexch *x, struct sse_event *ev)
{
	struct hproxy	*p = x->c->p;
	struct evbuffer	*data;
	char		*sid, *to, *shown;

	x->sse_events++;
	if (ev->type != NULL && strcmp(ev->type, "endpoint") == 0) {
		sid = hsession_query_id(ev->data);
		if (x->hs == NULL)
			hexch_assign(x, sid != NULL ? hsession_get(p, sid, 1) :
			    hsession_default(p));
		free(sid);
		shown = hsession_redact_path(ev->data);
		if (x->hold != NULL &&
		    (to = endpoint_rewrite(p, ev->data)) != NULL) {
			evbuffer_replace_first(x->hold, ev->data, to);
			free(shown);
			shown = hsession_redact_path(to);
			hexch_note(x, "legacy SSE endpoint event: rewrote "
			    "the message URL to %s", shown);
			free(to);
		} else if (x->hold == NULL &&
		    (to = endpoint_rewrite(p, ev->data)) != NULL) {
			hexch_note(x, "legacy SSE endpoint event: %s names "
			    "the upstream, but the stream has a fixed "
			    "Content-Length, so it was passed on unchanged "
			    "(the client will bypass mcpreel)", shown);
			free(to);
		} else
			hexch_note(x, "legacy SSE endpoint event: %s", shown);
		free(shown);
		return;
	}
	if (x->wait_endpoint)
		hexch_assign(x, hsession_default(p));
	if (ev->data_len == 0) {
		/*
		 * No message in it: servers send these to prime a stream
		 * with an event id to resume from.  It passed through.
		 */
		hexch_note(x, "an SSE event with no data%s%s",
		    ev->id != NULL ? ", id " : "", ev->id != NULL ? ev->id : "");
		return;
	}
	data = evbuffer_new();
	evbuffer_add(data, ev->data, ev->data_len);
	exch_tap(x, DIR_S2C, data, ev->data_len, ev->id, NULL);
	evbuffer_free(data);
}

/* The held-back start of a legacy stream may go now. */
static void
exch_release_hold(struct hexch *x, struct evbuffer *out)
{
	if (x->hold == NULL)
		return;
	if (x->rechunk)
		http_chunk_add(out, x->hold);
	else
		evbuffer_add_buffer(out, x->hold);
	evbuffer_free(x->hold);
	x->hold = NULL;
}

/* The final response head came: record it and pass it on as it was. */
static void
exch_response_head(struct hconn *c, struct http_head *h)
{
	struct hproxy		*p = c->p;
	struct hexch		*x = c->x;
	enum http_body_kind	 kind;
	uint64_t		 length;
	const char		*sid, *ctype;
	char			*cause = NULL;

	x->resp = *h;
	memset(h, 0, sizeof *h);
	x->have_resp = 1;
	hwait_set(c);
	if (head_wants_close(&x->resp))
		x->close_after = 1;
	ctype = http_head_get(&x->resp, "Content-Type");
	x->sse = ctype != NULL &&
	    strncasecmp(ctype, "text/event-stream", 17) == 0;

	if (x->hs != NULL)
		hexch_record_response(x);
	else if ((sid = http_head_get(&x->resp, "Mcp-Session-Id")) !=
	    NULL && *sid != '\0')
		hexch_assign(x, hsession_get(p, sid, 0));
	else if (x->sse && strcmp(x->req.method, "GET") == 0) {
		/* Legacy HTTP+SSE: the first event names the session. */
		x->wait_endpoint = 1;
	} else
		hexch_assign(x, hsession_default(p));

	if (x->sse) {
		sse_init(&x->sp);
		x->ssebuf = evbuffer_new();
	}
	if (http_body_kind(&x->resp, x->req.method, &kind, &length,
	    &cause) != 0) {
		hexch_note(x, "bad response from the upstream: %s", cause);
		conn_reply_error(c, 502, "Bad Gateway", cause);
		free(cause);
		return;
	}
	http_body_init(&x->respbody, kind, length);
	x->rechunk = (kind == HTTP_BODY_CHUNKED);
	/*
	 * The endpoint event may be rewritten (held back until it comes)
	 * only where its length is free to change: chunked or until close.
	 */
	if (x->wait_endpoint && kind != HTTP_BODY_LENGTH)
		x->hold = evbuffer_new();
	if (kind == HTTP_BODY_CLOSE)
		x->close_after = 1;

	/* Pass the head on exactly as it came. */
	evbuffer_remove_buffer(bufferevent_get_input(c->ubev),
	    bufferevent_get_output(c->cbev), x->resp.len);
	x->sent_resp = 1;
	if (kind == HTTP_BODY_NONE)
		x->resp_done = 1;
}

/* The response has been forwarded whole: record it, then the next one. */
static void
exch_response_done(struct hconn *c)
{
	struct hproxy	*p = c->p;
	struct hexch	*x = c->x;
	struct evbuffer	*out = bufferevent_get_output(c->cbev);
	struct scan	 sc;
	size_t		 len = evbuffer_get_length(x->respdata);
	const char	*ctype;
	int		 json, close_after;

	exch_release_hold(x, out);
	ctype = http_head_get(&x->resp, "Content-Type");
	if (!x->sse && len > 0) {
		json = ctype != NULL && strncasecmp(ctype,
		    "application/json", 16) == 0;
		if (!json && !x->resp_cut) {
			scan_message(evbuffer_pullup(x->respdata, -1), len,
			    &sc);
			json = sc.kind != KIND_INVALID;
		}
		if (json) {
			exch_tap(x, DIR_S2C, x->respdata, len, NULL,
			    &x->respcap);
			evbuffer_drain(x->respdata, len);
		}
	}
	/* A successful DELETE ends the MCP session. */
	if (strcmp(x->req.method, "DELETE") == 0 && x->hs != NULL &&
	    x->hs->key != NULL && x->resp.status >= 200 &&
	    x->resp.status < 300)
		hsession_end(p, x->hs, "the client ended the session "
		    "(DELETE)");
	if (!x->req_done) {
		/*
		 * The server answered before the request body ended (an
		 * early 413, say): the rest is unwanted; close after this.
		 */
		x->close_after = 1;
	}
	close_after = x->close_after;
	exch_end(c, "complete");
	c->uscanned = 0;
	if (close_after) {
		conn_close_after_output(c);
		return;
	}
	set_pause(c->cbev, &c->cpause, PAUSE_BUSY, 0);
	conn_process_requests(c);
}

/*
 * Keep a copy of what came of a (non-SSE) response body for the record:
 * all of it when it says it is JSON; else only HTTP_KEEP_BODY_MAX, so an
 * upstream serving a huge file costs no memory beyond what is in flight.
 */
static void
exch_keep_body(struct hexch *x, struct evbuffer *tmp)
{
	const char	*ctype = http_head_get(&x->resp, "Content-Type");
	size_t		 have = evbuffer_get_length(x->respdata), room;
	char		*part;

	if (ctype != NULL && strncasecmp(ctype, "application/json", 16) == 0) {
		hcap_copy(&x->respcap, x->respdata, tmp);
		return;
	}
	room = have < HTTP_KEEP_BODY_MAX ? HTTP_KEEP_BODY_MAX - have : 0;
	if (evbuffer_get_length(tmp) <= room) {
		hcap_append(x->respdata, tmp);
		return;
	}
	x->resp_cut = 1;
	if (room > 0) {
		part = xmalloc(room);
		evbuffer_copyout(tmp, part, room);
		evbuffer_add(x->respdata, part, room);
		free(part);
	}
}

/*
 * Forward what has arrived of the response body, with eof when the
 * upstream has closed.  Returns 1 when the response is complete, 0 when
 * more is to come, -1 when the connection was closed.
 */
static int
exch_forward_response_body(struct hconn *c, int eof)
{
	struct hexch	*x = c->x;
	struct evbuffer	*in = bufferevent_get_input(c->ubev);
	struct evbuffer	*out = bufferevent_get_output(c->cbev);
	struct evbuffer	*tmp;
	struct sse_event ev;
	char		*cause = NULL;
	int		 rc, erc;

	if (x->resp_done)
		return 1;
	tmp = evbuffer_new();
	rc = http_body_decode(&x->respbody, in, tmp, eof, &cause);
	if (rc == -1) {
		evbuffer_free(tmp);
		hexch_note(x, "bad response body from the upstream: %s",
		    cause);
		free(x->outcome);
		xasprintf(&x->outcome, "bad response body: %s", cause);
		free(cause);
		/* What already went through still reaches the client. */
		conn_close_after_output(c);
		return -1;
	}
	/*
	 * The bytes go where they are going before the events in them are
	 * handled: an endpoint rewrite edits the held copy.
	 */
	if (x->sse)
		hcap_append(x->ssebuf, tmp);
	else
		exch_keep_body(x, tmp);
	if (x->hold != NULL)
		evbuffer_add_buffer(x->hold, tmp);
	else if (x->rechunk)
		http_chunk_add(out, tmp);
	else
		evbuffer_add_buffer(out, tmp);
	while (x->sse) {
		memset(&ev, 0, sizeof ev);
		erc = sse_next(&x->sp, x->ssebuf, &ev);
		if (erc == 0)
			break;
		if (erc == -1) {
			hexch_note(x, "an SSE event too large to record (over "
			    "%d bytes): passed through, not recorded",
			    SSE_LINE_MAX);
			continue;
		}
		exch_sse_event(x, &ev);
		sse_event_clear(&ev);
	}
	if (x->hold != NULL && (!x->wait_endpoint || x->sse_events > 0 ||
	    evbuffer_get_length(x->hold) > HTTP_HOLD_MAX)) {
		if (x->wait_endpoint)
			hexch_assign(x, hsession_default(c->p));
		exch_release_hold(x, out);
	}
	evbuffer_free(tmp);

	if (rc == 1) {
		exch_release_hold(x, out);
		if (x->rechunk)
			http_chunk_end(out);
		x->resp_done = 1;
	}
	if (evbuffer_get_length(out) >= HTTP_MAX_OUTPUT) {
		set_pause(c->ubev, &c->upause, PAUSE_PEER, 1);
		bufferevent_setwatermark(c->cbev, EV_WRITE, HTTP_MAX_OUTPUT / 2,
		    0);
	}
	return rc;
}

/* Response bytes from the upstream; eof when it has closed. */
static void
conn_up_read(struct hconn *c, int eof)
{
	struct evbuffer		*in = bufferevent_get_input(c->ubev);
	struct http_head	 h;
	char			*cause = NULL;
	int			 rc;

	while (c->x != NULL && !c->x->have_resp) {
		memset(&h, 0, sizeof h);
		rc = http_head_parse(in, 0, &c->uscanned, &h, &cause);
		if (rc == 0)
			return;
		if (rc == -1) {
			hexch_note(c->x, "bad response head from the upstream: "
			    "%s", cause);
			conn_reply_error(c, 502, "Bad Gateway", cause);
			free(cause);
			return;
		}
		if (h.status == 101) {
			http_head_clear(&h);
			conn_reply_error(c, 502, "Bad Gateway", "the upstream "
			    "switched protocols, which mcpreel does not relay");
			return;
		}
		if (h.status < 200) {
			/* Interim (100, 103): pass it on and wait on. */
			evbuffer_remove_buffer(in,
			    bufferevent_get_output(c->cbev), h.len);
			http_head_clear(&h);
			continue;
		}
		exch_response_head(c, &h);
		if (c->dead || c->closing)
			return;
	}
	if (c->x == NULL) {
		/* Bytes with no request to answer: nothing to do with them. */
		if (evbuffer_get_length(in) > 0) {
			log_info("connection %llu: %zu bytes from the upstream "
			    "with no request to answer: dropped",
			    (unsigned long long)c->id,
			    evbuffer_get_length(in));
			evbuffer_drain(in, evbuffer_get_length(in));
		}
		return;
	}
	if (exch_forward_response_body(c, eof) == 1)
		exch_response_done(c);
}

static void
conn_up_read_cb(struct bufferevent *bev, void *arg)
{
	conn_up_read(arg, 0);
}

/* The upstream connection connected, closed or failed. */
static void
conn_up_event_cb(struct bufferevent *bev, short what, void *arg)
{
	struct hconn	*c = arg;
	struct hexch	*x = c->x;
	char		*why;
	int		 err;

	if (what & BEV_EVENT_CONNECTED) {
		c->connected = 1;
		bufferevent_set_timeouts(bev, NULL, NULL);
		return;
	}
	if ((what & BEV_EVENT_EOF) && c->connected) {
		/* What is still buffered may complete the response. */
		if (x != NULL && x->have_resp) {
			conn_up_read(c, 1);
			if (c->dead || c->closing || c->x == NULL)
				return;
			x = c->x;
		}
		if (x == NULL) {
			/* An idle keep-alive connection: reconnect later. */
			bufferevent_free(c->ubev);
			c->ubev = NULL;
			return;
		}
		if (!x->have_resp) {
			conn_reply_error(c, 502, "Bad Gateway", "the upstream "
			    "closed the connection without a response");
			return;
		}
		hexch_note(x, "the upstream closed the connection in the "
		    "middle of the response");
		free(x->outcome);
		x->outcome = xstrdup("the upstream closed mid-response");
		conn_close_after_output(c);
		return;
	}
	err = EVUTIL_SOCKET_ERROR();
	if (what & BEV_EVENT_TIMEOUT)
		xasprintf(&why, "no connection to %s within %d s",
		    c->p->up.url.origin, HTTP_CONNECT_TIMEOUT);
	else if (c->connected && c->p->up.ssl == NULL && err != 0)
		xasprintf(&why, "the connection to %s broke: %s",
		    c->p->up.url.origin, evutil_socket_error_to_string(err));
	else
		why = net_upstream_error(bev, &c->p->up);
	if (x != NULL && !x->sent_resp) {
		log_warnx("connection %llu: %s", (unsigned long long)c->id,
		    why);
		conn_reply_error(c, 502, "Bad Gateway", why);
	} else if (x != NULL) {
		hexch_note(x, "the upstream connection failed mid-response: "
		    "%s", why);
		free(x->outcome);
		xasprintf(&x->outcome, "upstream failed: %s", why);
		conn_close_after_output(c);
	} else {
		bufferevent_free(c->ubev);
		c->ubev = NULL;
	}
	free(why);
}

static void
proxy_accept_cb(struct evconnlistener *l, evutil_socket_t fd,
    struct sockaddr *sa, int salen, void *arg)
{
	struct hproxy	*p = arg;
	struct hconn	*c;
	int		 one = 1;

	if (p->stop_reason != NULL) {
		evutil_closesocket(fd);
		return;
	}
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
	c = xcalloc(1, sizeof *c);
	c->p = p;
	c->id = ++p->nconns;
	c->cbev = bufferevent_socket_new(p->base, fd, BEV_OPT_CLOSE_ON_FREE);
	if (c->cbev == NULL) {
		evutil_closesocket(fd);
		free(c);
		return;
	}
	bufferevent_setcb(c->cbev, conn_client_read_cb, conn_client_write_cb,
	    conn_client_event_cb, c);
	hwait_start(c);
	TAILQ_INSERT_TAIL(&p->conns, c, entry);
	if (tap_paused(p->tap))
		c->cpause |= PAUSE_STORE;
	bufferevent_enable(c->cbev, EV_WRITE);
	if (c->cpause == 0)
		bufferevent_enable(c->cbev, EV_READ);
	log_debug("connection %llu accepted", (unsigned long long)c->id);
}

static void
proxy_accept_error_cb(struct evconnlistener *l, void *arg)
{
	log_warn("accepting a connection failed");
}

/* SIGINT or SIGTERM: stop recording, closing what is in flight. */
static void
proxy_signal_cb(evutil_socket_t sig, short events, void *arg)
{
	struct hproxy	*p = arg;

	if (p->stop_reason == NULL)
		xasprintf(&p->stop_reason, "recording stopped (%s)",
		    strsignal((int)sig));
	log_info("%s", p->stop_reason);
	event_base_loopbreak(p->base);
}

/*
 * Listen for clients and record their traffic with the upstream until
 * SIGINT or SIGTERM.  Returns -1 (res says why) when it cannot start.
 */
int
record_http(struct writer *w, const struct http_options *opt,
    struct record_result *res)
{
	struct hproxy		 p;
	struct sockaddr_storage	 ss, ups;
	socklen_t		 sslen;
	struct hconn		*c;
	char			*cause = NULL;
	static const int	 sigs[] = { SIGINT, SIGTERM };
	int			 i;

	memset(res, 0, sizeof *res);
	res->exit_status = -1;
	memset(&p, 0, sizeof p);
	TAILQ_INIT(&p.conns);
	p.w = w;
	p.opt = opt;

	if (net_parse_listen(opt->listen, &ss, &sslen, &cause) != 0 ||
	    net_upstream_init(&p.up, opt->upstream, opt->cacert,
	    opt->insecure, &cause) != 0) {
		res->exit_code = 2;
		res->reason = cause;
		return -1;
	}
	evthread_use_pthreads();
	if ((p.base = event_base_new()) == NULL)
		fatalx("cannot create an event loop");
	p.listener = net_listen(p.base, &ss, sslen, proxy_accept_cb, &p,
	    &p.origin, &cause);
	if (p.listener == NULL) {
		res->exit_code = 2;
		res->reason = cause;
		net_upstream_clear(&p.up);
		event_base_free(p.base);
		return -1;
	}
	evconnlistener_set_error_cb(p.listener, proxy_accept_error_cb);
	p.tap = tap_new(p.base, w, proxy_resume_cb, &p);
	for (i = 0; i < 2; i++) {
		p.sigs[i] = evsignal_new(p.base, sigs[i], proxy_signal_cb, &p);
		evsignal_add(p.sigs[i], NULL);
	}
	/* Said at any log level, alone on its line: scripts wait for it. */
	log_warnx("listening on %s", p.origin);
	log_info("forwarding to %s", opt->upstream);
	memset(&ups, 0, sizeof ups);
	memcpy(&ups, p.up.ai->ai_addr, p.up.ai->ai_addrlen);
	if (!opt->rewrite_host && !net_addr_is_loopback(&ups))
		log_info("the Host header reaches %s as the client sent it; "
		    "give --rewrite-host if the server wants its own name "
		    "(404 or 421 answers)", p.up.url.origin);
	if (!net_addr_is_loopback(&ss))
		log_warnx("note: %s is not a loopback address: other machines "
		    "may reach this proxy", opt->listen);

	event_base_dispatch(p.base);

	evconnlistener_free(p.listener);
	while ((c = TAILQ_FIRST(&p.conns)) != NULL)
		conn_close(c, p.stop_reason != NULL ? p.stop_reason :
		    "recording stopped");
	/* One more pass frees what the closes deferred. */
	event_base_loop(p.base, EVLOOP_NONBLOCK);
	hsession_end_all(&p, p.stop_reason != NULL ? p.stop_reason :
	    "recording stopped");
	res->exit_code = 0;
	res->reason = p.stop_reason != NULL ? p.stop_reason :
	    xstrdup("recording stopped");
	for (i = 0; i < 2; i++)
		event_free(p.sigs[i]);
	tap_free(p.tap);
	free(p.origin);
	net_upstream_clear(&p.up);
	event_base_free(p.base);
	/* The sessions outlive the loop: the caller stops the writer. */
	res->sessions = p.sessions;
	return 0;
}

/* Free what record_http() left, once the writer has stopped. */
void
record_http_free(struct record_result *res)
{
	hsession_free_all(res->sessions);
	res->sessions = NULL;
}
