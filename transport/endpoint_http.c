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
#include "endpoint_http_int.h"


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
