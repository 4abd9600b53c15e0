/*
 * The connections of the Streamable HTTP server side (endpoint_http.c):
 * each one reads a request at a time, head then body, under its timeouts,
 * hands it on or answers it, and sends the answers.
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

static void	ec_process(struct econn *);

void
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
void
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
void
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

void
ec_reply_text(struct econn *c, int status, const char *reason,
    const char *ctype, const char *text)
{
	ec_reply(c, status, reason, ctype, text, strlen(text));
}

void
ec_sse_event(struct econn *c, const char *bytes, size_t len)
{
	struct evbuffer	*ev = evbuffer_new();

	evbuffer_add(ev, "event: message\ndata: ", 21);
	evbuffer_add(ev, bytes, len);
	evbuffer_add(ev, "\n\n", 2);
	http_chunk_add(bufferevent_get_output(c->bev), ev);
	evbuffer_free(ev);
}

void
ec_sse_start(struct econn *c)
{
	ec_head(c, 200, "OK", "Content-Type: text/event-stream\r\n"
	    "Cache-Control: no-cache\r\nTransfer-Encoding: chunked\r\n\r\n");
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
void
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
void
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

/* Read requests, one at a time, then see what the connection waits for. */
static void
ec_process(struct econn *c)
{
	ec_process_requests(c);
	ec_wait_set(c);
}

void
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
			if (endpoint_check_refused(c))
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
void
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

void
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

void
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

void
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
