/*
 * The server side of Streamable HTTP, for mock and the bridge (record
 * --listen ADDR -- CMD).  A POST carrying a request
 * gets its answer as application/json, or as an SSE stream when the mock
 * sends something before the answer (progress, a server request); a POST
 * carrying a notification or a response gets 202.  A GET opens the stream
 * for messages nobody asked for; DELETE is acknowledged.  Every path is
 * the endpoint.  One request at a time per connection, kept alive.
 */

#include <sys/queue.h>
#include <sys/socket.h>

#include <netinet/in.h>
#include <netinet/tcp.h>

#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>

#include "transport.h"

/*
 * Messages nobody asked for, kept until the client opens its event stream
 * (a client opens it just after initializing); past this they are dropped.
 */
#define ENDPOINT_UNSENT_MAX	256
/*
 * What a client may leave unread: past this, its connection's next request
 * is not read, and what the mock sends on that connection waits (as a
 * server blocks on a full socket), until it takes what it has (down to
 * half); so a client that never reads holds this much of our memory (and
 * one message) at most, and for --idle-timeout: a connection whose output
 * makes no progress for that long is closed.  Messages kept for an event
 * stream not yet open are bounded by it too.
 */
#define ENDPOINT_OUTPUT_MAX	(4u * 1024 * 1024)

/*
 * Closing on a request not read to its end (413, 400, 408): our side is
 * shut for writing and what the client still sends is read and dropped,
 * up to this much or for this long, so the answer is not lost to a reset
 * (a close with unread input resets the connection).
 */
#define ENDPOINT_LINGER_MAX	(1024 * 1024)
#define ENDPOINT_LINGER_S	2

struct econn;

/* What a connection's one timer waits for, and so which limit runs. */
enum ec_wait {
	EC_WAIT_NONE,		/* an answer or the event stream: no limit */
	EC_WAIT_IDLE,		/* the next request (--idle-timeout) */
	EC_WAIT_HEAD,		/* the rest of a head (--head-timeout) */
	EC_WAIT_BODY,		/* more of a body (--idle-timeout) */
	EC_WAIT_MAX
};

/* A request's reply channel: the POST it came in. */
struct ereq {
	struct econn	*c;		/* NULL once the client went away */
	int		 streaming;	/* the SSE head has gone out */
	int		 cut;		/* a fault cut its channel */
};

struct econn {
	struct endpoint_http	*eh;
	struct bufferevent	*bev;
	size_t			 scanned;
	int			 in_body;
	struct http_head	 head;
	struct http_body	 body;
	struct evbuffer		*data;
	struct ereq		*er;		/* an answer is being sent */
	struct event		*next_ev;	/* read on after an answer */
	int			 stream;	/* this is the GET stream */
	int			 close_after;
	struct event		*timer;
	enum ec_wait		 wait;
	int			 out_full;	/* over ENDPOINT_OUTPUT_MAX */
	int			 blocked;	/* a sender waits for it */
	int			 linger;	/* unread input: linger at close */
	int			 lingering;
	size_t			 lingered;	/* bytes dropped meanwhile */
	int			 reset;		/* a fault resets it (next pass) */
	int			 loopback;	/* came in on a loopback address */
	TAILQ_ENTRY(econn)	 entry;
};

struct endpoint_http {
	struct endpoint		 ep;	/* first: a struct endpoint * is one */
	struct listener		*listener;
	struct listen_limits	 lim;
	char			*session;
	struct econn		*stream;	/* the open GET stream */
	struct evbuffer		*unsent;	/* for the stream, until open */
	size_t			 nunsent;
	int			 unsent_warned;
	int			 slow_warned;	/* one warning, then debug */
	int			 check_origin;	/* endpoint_http_check_origin */
	struct event		*drain_ev;	/* cbs.drained, from the loop */
	TAILQ_HEAD(, econn)	 conns;
};

static void	ec_process(struct econn *);
static void	ec_next_cb(evutil_socket_t, short, void *);

static void
ec_free(struct econn *c)
{
	struct endpoint_http	*eh = c->eh;

	if (c->er != NULL)
		c->er->c = NULL;
	if (c->blocked)
		event_active(eh->drain_ev, EV_TIMEOUT, 0);
	if (eh->stream == c)
		eh->stream = NULL;
	TAILQ_REMOVE(&eh->conns, c, entry);
	event_free(c->next_ev);
	event_free(c->timer);
	bufferevent_free(c->bev);
	listener_closed(eh->listener);
	http_head_clear(&c->head);
	evbuffer_free(c->data);
	free(c);
}

/* A head for an answer, with the session id once there is one. */
static void
ec_head(struct econn *c, int status, const char *reason, const char *extra)
{
	struct evbuffer	*out = bufferevent_get_output(c->bev);

	evbuffer_add_printf(out, "HTTP/1.1 %d %s\r\n", status, reason);
	if (c->eh->session != NULL)
		evbuffer_add_printf(out, "Mcp-Session-Id: %s\r\n",
		    c->eh->session);
	evbuffer_add_printf(out, "%s", extra);
}

/* A whole answer with a body (or none), then the next request. */
static void
ec_reply(struct econn *c, int status, const char *reason, const char *ctype,
    const char *body, size_t len)
{
	struct evbuffer	*out = bufferevent_get_output(c->bev);
	char		*extra;

	xasprintf(&extra, "%s%s%sContent-Length: %zu\r\n%s\r\n",
	    ctype != NULL ? "Content-Type: " : "", ctype != NULL ? ctype : "",
	    ctype != NULL ? "\r\n" : "", len, c->close_after ?
	    "Connection: close\r\n" : "");
	ec_head(c, status, reason, extra);
	free(extra);
	if (len > 0)
		evbuffer_add(out, body, len);
}

static void
ec_reply_text(struct econn *c, int status, const char *reason,
    const char *ctype, const char *text)
{
	ec_reply(c, status, reason, ctype, text, strlen(text));
}

static void
ec_sse_event(struct econn *c, const char *bytes, size_t len)
{
	struct evbuffer	*ev = evbuffer_new();

	evbuffer_add(ev, "event: message\ndata: ", 21);
	evbuffer_add(ev, bytes, len);
	evbuffer_add(ev, "\n\n", 2);
	http_chunk_add(bufferevent_get_output(c->bev), ev);
	evbuffer_free(ev);
}

static void
ec_sse_start(struct econn *c)
{
	ec_head(c, 200, "OK", "Content-Type: text/event-stream\r\n"
	    "Cache-Control: no-cache\r\nTransfer-Encoding: chunked\r\n\r\n");
}

/* Whether a Host header's value names this machine (any port). */
static int
ec_host_is_loopback(const char *host)
{
	char	*origin;
	int	 ok;

	xasprintf(&origin, "http://%s", host);
	ok = net_origin_is_loopback(origin);
	free(origin);
	return ok;
}

/*
 * With endpoint_http_check_origin, a request that came in on a loopback
 * address is answered 403 when its Origin names another machine, or its
 * Host does not name this one (DNS rebinding: a web page's script must not
 * reach a local server; a same-origin GET carries no Origin, but always
 * the rebound name in Host).  No Origin (not from a browser) passes; so
 * does no Host.  Checked once the head is in, before any body is read.
 * Returns 1 when refused (the connection closes after the answer).
 */
static int
ec_origin_refused(struct econn *c)
{
	const char	*origin, *host, *what, *value;
	char		*text;

	if (!c->eh->check_origin || !c->loopback)
		return 0;
	origin = http_head_get(&c->head, "Origin");
	host = http_head_get(&c->head, "Host");
	if (origin != NULL && !net_origin_is_loopback(origin)) {
		what = "Origin";
		value = origin;
	} else if (host != NULL && !ec_host_is_loopback(host)) {
		what = "Host";
		value = host;
	} else
		return 0;
	log_info("%s: refused a request with %s %s with 403: only pages of "
	    "this machine may use a loopback server", c->eh->ep.who, what,
	    value);
	xasprintf(&text, "{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":"
	    "{\"code\":-32000,\"message\":\"mcpreel %s: %s not "
	    "allowed: this server listens on a loopback address and takes "
	    "requests from pages of this machine only\"}}", c->eh->ep.who,
	    what);
	c->close_after = 1;
	c->linger = 1;
	bufferevent_disable(c->bev, EV_READ);
	ec_reply_text(c, 403, "Forbidden", "application/json", text);
	free(text);
	return 1;
}

/* A whole request is in: hand it on, or answer it ourselves. */
static void
ec_request(struct econn *c)
{
	struct endpoint_http	*eh = c->eh;
	const char		*accept;
	size_t			 len = evbuffer_get_length(c->data);
	const char		*body = (const char *)evbuffer_pullup(c->data,
				    -1);
	struct scan		 sc;
	struct ereq		*er;
	char			*text;

	c->close_after = http_head_has_token(&c->head, "Connection",
	    "close");
	if (strcmp(c->head.method, "GET") == 0) {
		accept = http_head_get(&c->head, "Accept");
		if (accept == NULL || strstr(accept, "text/event-stream") ==
		    NULL) {
			ec_reply_text(c, 405, "Method Not Allowed",
			    "text/plain", "GET opens an event stream\n");
			return;
		}
		if (eh->stream != NULL) {
			/* One stream: the older one ends, and its connection. */
			http_chunk_end(bufferevent_get_output(eh->stream->bev));
			eh->stream->stream = 0;
			eh->stream->close_after = 1;
		}
		eh->stream = c;
		c->stream = 1;
		ec_sse_start(c);
		/* What was said before the client listened, it hears now. */
		if (evbuffer_get_length(eh->unsent) > 0)
			http_chunk_add(bufferevent_get_output(c->bev),
			    eh->unsent);
		eh->nunsent = 0;
		eh->unsent_warned = 0;
		event_active(eh->drain_ev, EV_TIMEOUT, 0);
		return;
	}
	if (strcmp(c->head.method, "DELETE") == 0) {
		ec_reply(c, 200, "OK", NULL, NULL, 0);
		return;
	}
	if (strcmp(c->head.method, "POST") != 0) {
		ec_reply_text(c, 405, "Method Not Allowed", "text/plain",
		    "POST, GET or DELETE\n");
		return;
	}
	scan_message(body, len, &sc);
	switch (sc.kind) {
	case KIND_REQUEST:
		er = xcalloc(1, sizeof *er);
		er->c = c;
		c->er = er;
		eh->ep.cbs.message(er, body, len, eh->ep.arg);
		break;
	case KIND_NOTIFICATION:
	case KIND_RESPONSE:
	case KIND_ERROR:
		ec_reply(c, 202, "Accepted", NULL, NULL, 0);
		eh->ep.cbs.message(NULL, body, len, eh->ep.arg);
		break;
	default:
		xasprintf(&text, "{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":"
		    "{\"code\":-32700,\"message\":\"mcpreel %s: the body is not "
		    "one JSON-RPC message\"}}", eh->ep.who);
		ec_reply_text(c, 400, "Bad Request", "application/json", text);
		free(text);
		break;
	}
}

/*
 * Work out what c waits for and start that wait's limit when it changed;
 * a body's limit starts again with each read (a head's does not: a
 * trickle does not hold it open).  While the endpoint is paused it is we
 * who do not read: no limit runs.
 */
static void
ec_wait_set(struct econn *c)
{
	struct timeval	tv = { 0, 0 };
	enum ec_wait	w;

	if (c->er != NULL || c->stream || c->close_after || c->eh->ep.paused)
		w = EC_WAIT_NONE;
	else if (c->out_full)
		w = EC_WAIT_IDLE;	/* for the client to read */
	else if (c->in_body)
		w = EC_WAIT_BODY;
	else if (evbuffer_get_length(bufferevent_get_input(c->bev)) > 0)
		w = EC_WAIT_HEAD;
	else
		w = EC_WAIT_IDLE;
	if (w == c->wait && w != EC_WAIT_BODY)
		return;
	c->wait = w;
	if (w == EC_WAIT_HEAD)
		tv.tv_sec = c->eh->lim.head_timeout;
	else if (w != EC_WAIT_NONE)
		tv.tv_sec = c->eh->lim.idle_timeout;
	if (tv.tv_sec == 0)
		evtimer_del(c->timer);
	else
		evtimer_add(c->timer, &tv);
}

/* A wait's limit ran out: 408 for a request cut short, else close. */
static void
ec_timer_cb(evutil_socket_t fd, short events, void *arg)
{
	struct econn	*c = arg;
	char		*why;

	if (c->lingering) {
		ec_free(c);
		return;
	}
	if (c->wait == EC_WAIT_IDLE) {
		log_debug("%s: closing a connection idle for %d s",
		    c->eh->ep.who, c->eh->lim.idle_timeout);
		ec_free(c);
		return;
	}
	if (c->wait == EC_WAIT_HEAD)
		xasprintf(&why, "no complete request head within %d s "
		    "(--head-timeout)\n", c->eh->lim.head_timeout);
	else
		xasprintf(&why, "the request body stopped: nothing for %d s "
		    "(--idle-timeout)\n", c->eh->lim.idle_timeout);
	log_info("%s: %.*s", c->eh->ep.who, (int)strlen(why) - 1, why);
	c->close_after = 1;
	c->linger = 1;
	c->wait = EC_WAIT_NONE;
	bufferevent_disable(c->bev, EV_READ);
	ec_reply_text(c, 408, "Request Timeout", "text/plain", why);
	free(why);
}

/* Refuse a request body over --max-record-size, and close. */
static void
ec_too_big(struct econn *c, uint64_t size)
{
	char	*why;

	xasprintf(&why, "the request body is over %zu bytes "
	    "(--max-record-size)%s\n", c->eh->lim.max_body,
	    size != 0 ? " by its Content-Length" : "");
	log_warnx("%s: %.*s: refused with 413", c->eh->ep.who,
	    (int)strlen(why) - 1, why);
	c->close_after = 1;
	c->linger = 1;
	c->in_body = 0;
	evbuffer_drain(c->data, evbuffer_get_length(c->data));
	bufferevent_disable(c->bev, EV_READ);
	ec_reply_text(c, 413, "Content Too Large", "text/plain", why);
	free(why);
}

static void	ec_process_requests(struct econn *);

/* Read requests, one at a time, then see what the connection waits for. */
static void
ec_process(struct econn *c)
{
	ec_process_requests(c);
	ec_wait_set(c);
}

static void
ec_process_requests(struct econn *c)
{
	struct evbuffer		*in = bufferevent_get_input(c->bev);
	enum http_body_kind	 kind;
	uint64_t		 length;
	char			*cause = NULL;
	int			 rc;

	/*
	 * One request at a time: while one is answered (or this is the
	 * event stream), what the client sends next waits in the kernel,
	 * not in our memory.
	 */
	if (c->er != NULL || c->stream || c->eh->ep.paused) {
		bufferevent_disable(c->bev, EV_READ);
		return;
	}
	if (evbuffer_get_length(bufferevent_get_output(c->bev)) >=
	    ENDPOINT_OUTPUT_MAX) {
		c->out_full = 1;
		bufferevent_disable(c->bev, EV_READ);
		bufferevent_setwatermark(c->bev, EV_WRITE,
		    ENDPOINT_OUTPUT_MAX / 2, 0);
		return;
	}
	while (c->er == NULL && !c->stream && !c->eh->ep.paused) {
		if (!c->in_body) {
			http_head_clear(&c->head);
			rc = http_head_parse(in, 1, &c->scanned, &c->head,
			    &cause);
			if (rc == 0)
				return;
			if (rc == -1 || http_body_kind(&c->head, NULL, &kind,
			    &length, &cause) != 0) {
				c->close_after = 1;
				c->linger = 1;
				ec_reply_text(c, 400, "Bad Request",
				    "text/plain", cause);
				free(cause);
				bufferevent_disable(c->bev, EV_READ);
				return;
			}
			evbuffer_drain(in, c->head.len);
			if (ec_origin_refused(c))
				return;
			if (kind == HTTP_BODY_LENGTH &&
			    c->eh->lim.max_body != 0 &&
			    length > c->eh->lim.max_body) {
				ec_too_big(c, length);
				return;
			}
			http_body_init(&c->body, kind, length);
			evbuffer_drain(c->data, evbuffer_get_length(c->data));
			c->in_body = 1;
		}
		rc = http_body_decode(&c->body, in, c->data, 0, &cause);
		if (rc != -1 && c->eh->lim.max_body != 0 &&
		    evbuffer_get_length(c->data) > c->eh->lim.max_body) {
			ec_too_big(c, 0);
			return;
		}
		if (rc == 0)
			return;
		if (rc == -1) {
			c->close_after = 1;
			c->linger = 1;
			ec_reply_text(c, 400, "Bad Request", "text/plain",
			    cause);
			free(cause);
			bufferevent_disable(c->bev, EV_READ);
			return;
		}
		c->in_body = 0;
		ec_request(c);
		if (c->close_after && c->er == NULL && !c->stream) {
			bufferevent_disable(c->bev, EV_READ);
			return;
		}
	}
	bufferevent_disable(c->bev, EV_READ);
}

/* An answer ended: read the next request, from the loop (no recursion). */
static void
ec_next_cb(evutil_socket_t fd, short events, void *arg)
{
	struct econn	*c = arg;

	if (c->reset) {
		ec_free(c);
		return;
	}
	bufferevent_enable(c->bev, EV_READ);
	ec_process(c);
}

/* The answer is out: shut our side, and drop what still comes, a while. */
static void
ec_linger(struct econn *c)
{
	struct evbuffer	*in = bufferevent_get_input(c->bev);
	struct timeval	 tv = { ENDPOINT_LINGER_S, 0 };

	c->lingering = 1;
	c->lingered = evbuffer_get_length(in);
	evbuffer_drain(in, c->lingered);
	shutdown(bufferevent_getfd(c->bev), SHUT_WR);
	c->wait = EC_WAIT_NONE;
	evtimer_add(c->timer, &tv);
	bufferevent_enable(c->bev, EV_READ);
}

static void
ec_read_cb(struct bufferevent *bev, void *arg)
{
	struct econn	*c = arg;
	struct evbuffer	*in = bufferevent_get_input(bev);

	if (c->lingering) {
		c->lingered += evbuffer_get_length(in);
		evbuffer_drain(in, evbuffer_get_length(in));
		if (c->lingered > ENDPOINT_LINGER_MAX)
			ec_free(c);
		return;
	}
	ec_process(c);
}

static void
ec_write_cb(struct bufferevent *bev, void *arg)
{
	struct econn	*c = arg;

	if (c->blocked) {
		/* Down to the low watermark: what waited may go on. */
		c->blocked = 0;
		if (!c->out_full)
			bufferevent_setwatermark(bev, EV_WRITE, 0, 0);
		event_active(c->eh->drain_ev, EV_TIMEOUT, 0);
	}
	if (c->close_after && c->er == NULL && !c->stream &&
	    evbuffer_get_length(bufferevent_get_output(bev)) == 0) {
		if (c->linger && !c->lingering)
			ec_linger(c);
		else if (!c->lingering)
			ec_free(c);
		return;
	}
	if (c->out_full) {
		/* The client read: its next request may come. */
		c->out_full = 0;
		bufferevent_setwatermark(bev, EV_WRITE, 0, 0);
		bufferevent_enable(bev, EV_READ);
		ec_process(c);
	}
}

static void
ec_event_cb(struct bufferevent *bev, short what, void *arg)
{
	struct econn	*c = arg;
	size_t		 unread = evbuffer_get_length(
			    bufferevent_get_output(bev));

	if ((what & BEV_EVENT_TIMEOUT) && !c->eh->slow_warned) {
		c->eh->slow_warned = 1;
		log_warnx("%s: a client read none of the %zu bytes waiting "
		    "for it in %d s (--idle-timeout): closing its connection",
		    c->eh->ep.who, unread, c->eh->lim.idle_timeout);
	} else if (what & BEV_EVENT_TIMEOUT)
		log_debug("%s: closing a connection with %zu bytes unread "
		    "for %d s", c->eh->ep.who, unread,
		    c->eh->lim.idle_timeout);
	ec_free(c);
}

/* A client connected: a connection of its own, waiting for a request. */
static int
eh_accept_cb(int fd, void *arg)
{
	struct endpoint_http	*eh = arg;
	struct econn		*c = xcalloc(1, sizeof *c);
	struct sockaddr_storage	 local;
	socklen_t		 llen = sizeof local;
	int			 one = 1;

	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
	c->eh = eh;
	/* The address it came in on: a wildcard bind takes loopback too. */
	memset(&local, 0, sizeof local);
	if (getsockname(fd, (struct sockaddr *)&local, &llen) == 0)
		c->loopback = net_addr_is_loopback(&local);
	c->data = evbuffer_new();
	c->bev = bufferevent_socket_new(eh->ep.base, fd,
	    BEV_OPT_CLOSE_ON_FREE);
	c->next_ev = event_new(eh->ep.base, -1, 0, ec_next_cb, c);
	c->timer = evtimer_new(eh->ep.base, ec_timer_cb, c);
	if (c->data == NULL || c->bev == NULL || c->next_ev == NULL ||
	    c->timer == NULL)
		fatalx("cannot set up a connection");
	bufferevent_setcb(c->bev, ec_read_cb, ec_write_cb, ec_event_cb, c);
	/*
	 * Output that makes no progress for --idle-timeout (a client that
	 * stopped reading an answer, an event stream, or what comes before
	 * a close) ends the connection: a write timeout runs only while
	 * output is pending and restarts with each write.
	 */
	if (eh->lim.idle_timeout > 0) {
		struct timeval	wtv = { eh->lim.idle_timeout, 0 };

		bufferevent_set_timeouts(c->bev, NULL, &wtv);
	}
	bufferevent_enable(c->bev, EV_READ | EV_WRITE);
	TAILQ_INSERT_TAIL(&eh->conns, c, entry);
	ec_wait_set(c);
	return 0;
}

static void
eh_send(struct endpoint *ep, const char *bytes, size_t len)
{
	struct endpoint_http	*eh = (struct endpoint_http *)ep;

	/* A full stream is waited for by the sender (eh_full). */
	if (eh->stream != NULL)
		ec_sse_event(eh->stream, bytes, len);
	else if (eh->nunsent < ENDPOINT_UNSENT_MAX &&
	    evbuffer_get_length(eh->unsent) < ENDPOINT_OUTPUT_MAX) {
		/* Kept for the stream the client has not opened yet. */
		evbuffer_add(eh->unsent, "event: message\ndata: ", 21);
		evbuffer_add(eh->unsent, bytes, len);
		evbuffer_add(eh->unsent, "\n\n", 2);
		eh->nunsent++;
	} else if (!eh->unsent_warned) {
		eh->unsent_warned = 1;
		log_warnx("%s: %zu messages (%zu bytes) wait for the client "
		    "to open its event stream: dropping what comes until it "
		    "does", eh->ep.who, eh->nunsent,
		    evbuffer_get_length(eh->unsent));
	}
}

/*
 * Whether the channel for er (NULL or gone: the event stream, or what is
 * kept until it opens) holds all a client may leave unread; the caller
 * then waits for cbs.drained.
 */
static int
eh_full(struct endpoint *ep, struct ereq *er)
{
	struct endpoint_http	*eh = (struct endpoint_http *)ep;
	struct econn		*c = (er != NULL && er->c != NULL) ? er->c :
				    eh->stream;

	if (er != NULL && er->cut)
		return 0;
	if (c == NULL)
		return (eh->nunsent >= ENDPOINT_UNSENT_MAX ||
		    evbuffer_get_length(eh->unsent) >= ENDPOINT_OUTPUT_MAX) ?
		    2 : 0;
	if (evbuffer_get_length(bufferevent_get_output(c->bev)) <
	    ENDPOINT_OUTPUT_MAX)
		return 0;
	if (!c->blocked) {
		c->blocked = 1;
		bufferevent_setwatermark(c->bev, EV_WRITE,
		    ENDPOINT_OUTPUT_MAX / 2, 0);
		log_debug("%s: %zu bytes wait for the client: holding what "
		    "comes next", eh->ep.who, evbuffer_get_length(
		    bufferevent_get_output(c->bev)));
	}
	return 1;
}

static void
eh_drain_cb(evutil_socket_t fd, short events, void *arg)
{
	struct endpoint_http	*eh = arg;

	if (eh->ep.cbs.drained != NULL)
		eh->ep.cbs.drained(eh->ep.arg);
}

static void
eh_req_send(struct endpoint *ep, struct ereq *er, const char *bytes,
    size_t len)
{
	if (er != NULL && er->cut)
		return;
	if (er == NULL || er->c == NULL) {
		eh_send(ep, bytes, len);
		return;
	}
	if (!er->streaming) {
		ec_sse_start(er->c);
		er->streaming = 1;
	}
	ec_sse_event(er->c, bytes, len);
}

static void
eh_req_end(struct endpoint *ep, struct ereq *er, const char *bytes,
    size_t len)
{
	struct econn	*c;

	if (er == NULL) {
		if (bytes != NULL)
			eh_send(ep, bytes, len);
		return;
	}
	if ((c = er->c) != NULL) {
		if (er->streaming) {
			if (bytes != NULL)
				ec_sse_event(c, bytes, len);
			http_chunk_end(bufferevent_get_output(c->bev));
		} else if (bytes != NULL)
			ec_reply(c, 200, "OK", "application/json", bytes, len);
		else
			ec_reply(c, 202, "Accepted", NULL, NULL, 0);
		c->er = NULL;
	}
	free(er);
	if (c != NULL && !c->close_after)
		event_active(c->next_ev, EV_TIMEOUT, 0);
}

/*
 * Whether er's client went away (its connection closed) before the
 * answer; NULL (a stdio client) never does.
 */
int
ereq_gone(const struct ereq *er)
{
	return er != NULL && er->c == NULL;
}

static void
eh_set_session(struct endpoint *ep, const char *id)
{
	struct endpoint_http	*eh = (struct endpoint_http *)ep;

	free(eh->session);
	eh->session = (id != NULL) ? xstrdup(id) : NULL;
}

static void
eh_free(struct endpoint *ep)
{
	struct endpoint_http	*eh = (struct endpoint_http *)ep;
	struct econn		*c;

	listener_stop(eh->listener);
	while ((c = TAILQ_FIRST(&eh->conns)) != NULL)
		ec_free(c);
	listener_free(eh->listener);
	eh->listener = NULL;
	event_free(eh->drain_ev);
	evbuffer_free(eh->unsent);
	free(eh->session);
	free(eh);
}

/* The reason phrase of a status a fault may answer with. */
static const char *
eh_reason(int status)
{
	const char	*text = http_reason(status);

	return (text != NULL) ? text : "Error";
}

/* Add header name: value to buf, the value's control bytes left out. */
static void
eh_header_add(struct evbuffer *buf, const char *name, const char *value)
{
	const char	*p;

	if (value == NULL)
		return;
	evbuffer_add_printf(buf, "%s: ", name);
	for (p = value; *p != '\0'; p++) {
		if ((unsigned char)*p >= 0x20 && *p != 0x7f)
			evbuffer_add(buf, p, 1);
	}
	evbuffer_add(buf, "\r\n", 2);
}

/*
 * A fault cuts er's POST (er NULL: the GET stream) short: a status with
 * no body (a POST whose answer has begun streaming is reset instead), a
 * reset (SO_LINGER 0: the close sends RST), or the end of its SSE stream
 * with no answer in it.  er stays its owner's, cut off: what is sent on
 * it later is dropped, and ereq_end frees it.
 */
static void
eh_cut(struct endpoint *ep, struct ereq *er, enum ereq_cut how, int status,
    const char *retry_after, const char *www_authenticate)
{
	struct endpoint_http	*eh = (struct endpoint_http *)ep;
	struct econn		*c = er != NULL ? er->c : eh->stream;
	struct evbuffer		*hdrs;
	struct linger		 lg = { 1, 0 };
	int			 streaming = er != NULL && er->streaming;

	if (er != NULL) {
		if (er->cut)
			return;
		if (c != NULL)
			c->er = NULL;
		er->c = NULL;
		er->cut = 1;
	}
	if (c == NULL)
		return;
	if (how == EREQ_CUT_STATUS && (er == NULL || streaming))
		how = EREQ_CUT_RESET;
	switch (how) {
	case EREQ_CUT_STATUS:
		if ((hdrs = evbuffer_new()) == NULL)
			fatalx("cannot make an answer");
		eh_header_add(hdrs, "Retry-After", retry_after);
		eh_header_add(hdrs, "WWW-Authenticate", www_authenticate);
		evbuffer_add_printf(hdrs, "Content-Length: 0\r\n%s\r\n",
		    c->close_after ? "Connection: close\r\n" : "");
		evbuffer_add(hdrs, "", 1);
		ec_head(c, status, eh_reason(status),
		    (const char *)evbuffer_pullup(hdrs, -1));
		evbuffer_free(hdrs);
		break;
	case EREQ_CUT_END_STREAM:
		if (er == NULL) {
			/* As when a newer stream replaces it. */
			http_chunk_end(bufferevent_get_output(c->bev));
			c->stream = 0;
			c->close_after = 1;
			eh->stream = NULL;
			return;
		}
		if (!streaming)
			ec_sse_start(c);
		http_chunk_end(bufferevent_get_output(c->bev));
		break;
	default:
		/*
		 * SO_LINGER 0: the close sends RST.  Freed on the next pass:
		 * we may be inside this connection's read callback.
		 */
		setsockopt(bufferevent_getfd(c->bev), SOL_SOCKET, SO_LINGER,
		    &lg, sizeof lg);
		c->reset = c->close_after = 1;
		bufferevent_disable(c->bev, EV_READ | EV_WRITE);
		event_active(c->next_ev, EV_TIMEOUT, 0);
		return;
	}
	if (!c->close_after)
		event_active(c->next_ev, EV_TIMEOUT, 0);
}

/*
 * endpoint_pause: no connection reads its next request while on, and no
 * head, body or idle limit runs; off, each one idle goes on reading (from
 * the loop), its limit started again.
 */
static void
eh_pause(struct endpoint *ep, int on)
{
	struct endpoint_http	*eh = (struct endpoint_http *)ep;
	struct econn		*c;

	if (on) {
		/* ec_process_requests stops at once; the limits stop here. */
		TAILQ_FOREACH(c, &eh->conns, entry) {
			if (!c->lingering)
				ec_wait_set(c);
		}
		return;
	}
	TAILQ_FOREACH(c, &eh->conns, entry) {
		if (c->er == NULL && !c->stream && !c->lingering &&
		    !c->close_after)
			event_active(c->next_ev, EV_TIMEOUT, 0);
	}
}

/*
 * Refuse (403) requests that came in on a loopback address (whatever the
 * address bound: 0.0.0.0 takes them too) whose Origin names a page of
 * another machine or whose Host does not name this machine; on another
 * address the clients' names cannot be known, and every one passes.
 */
void
endpoint_http_check_origin(struct endpoint *ep, int on)
{
	struct endpoint_http	*eh = (struct endpoint_http *)ep;

	eh->check_origin = on;
}

static const struct endpoint_ops eh_ops = {
	eh_send, eh_req_send, eh_req_end, eh_set_session, NULL, NULL, eh_full,
	eh_free, eh_cut, eh_pause
};

/*
 * Serve Streamable HTTP on listen ("127.0.0.1:PORT"...) within lim; *origin
 * gets the address bound.
 */
struct endpoint *
endpoint_http(struct event_base *base, const char *listen,
    const struct listen_limits *lim, const struct endpoint_cbs *cbs,
    void *arg, char **origin, char **cause)
{
	struct endpoint_http	*eh = xcalloc(1, sizeof *eh);
	struct sockaddr_storage	 ss;
	socklen_t		 len;

	eh->ep.ops = &eh_ops;
	eh->ep.base = base;
	eh->ep.cbs = *cbs;
	eh->ep.arg = arg;
	eh->ep.who = "mock";
	TAILQ_INIT(&eh->conns);
	eh->unsent = evbuffer_new();
	eh->lim = *lim;
	if ((eh->drain_ev = event_new(base, -1, 0, eh_drain_cb, eh)) == NULL)
		fatalx("cannot set up an event");
	if (net_parse_listen(listen, &ss, &len, cause) != 0 ||
	    (eh->listener = listener_new(base, &ss, len,
	    lim->max_connections, eh_accept_cb, eh, origin, cause)) == NULL) {
		event_free(eh->drain_ev);
		evbuffer_free(eh->unsent);
		free(eh);
		return NULL;
	}
	return &eh->ep;
}
