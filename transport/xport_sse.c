/*
 * A server over the legacy HTTP+SSE transport (protocol 2024-11-05), as a
 * client uses it: one GET opens an event stream; its `endpoint` event names
 * the URL (same origin as the stream's) every client message is POSTed
 * to, on a connection of its own; every `message` event on the stream is
 * one message from the server.  Closing the stream ends the session.
 *
 * Requests sent are remembered (by their id's JSON text) until their
 * answer comes on the stream, so that when the stream breaks, each one
 * still waiting is handed to cbs.failed: the caller need not wait for
 * answers that cannot come.
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
#include "xport_sse_int.h"

/*
 * How long the stream may stay open without its endpoint event: servers
 * send it at once; one that does not is not a legacy SSE server, and the
 * messages waiting for it must not wait forever.
 */
#define XSE_ENDPOINT_TIMEOUT_S	30
/*
 * After xport_finish, how long POSTs still in flight get before the stream
 * is closed anyway.
 */
#define XSE_FINISH_TIMEOUT_S	5
/*
 * Messages held until the endpoint event comes: a client sends initialize
 * and waits for its answer, so a few at most are real.
 */
#define XSE_QUEUE_MAX		64
#define XSE_QUEUE_BYTES		(16 * 1024 * 1024)
/*
 * What the stream may hold of an unfinished event before the endpoint
 * event has come: the endpoint, its field names and some slack.
 */
#define XSE_WAITING_MAX		(XSE_ENDPOINT_MAX + 4096)

static const char *xse_state_names[XSE_MAX] = {
	"connecting", "waiting", "open", "closed"
};

/* Move to a new state, logging the change. */
static void
xse_set_state(struct xport_sse *xs, enum xse_state state)
{
	if (state >= XSE_MAX)
		fatalx("%s: bad state %d", __func__, state);
	log_debug("legacy SSE %s: %s -> %s", xs->x.target,
	    xse_state_names[xs->state], xse_state_names[state]);
	xs->state = state;
}

/* The endpoint event: where messages go from now on. */
static void
xse_endpoint(struct xport_sse *xs, const char *data)
{
	struct xse_msg	*m;
	char		*cause = NULL, *why, **h, **p;

	if (xs->state != XSE_WAITING) {
		/* Said once: a server repeating it must not flood the notes. */
		if (!xs->endpoint_again_noted)
			xport_note(&xs->x, "%s sent another endpoint event: ignored, "
			    "messages still go to the first", xs->x.target);
		xs->endpoint_again_noted = 1;
		return;
	}
	if (xport_sse_endpoint(xs->x.target, data, &xs->post_target,
	    &cause) != 0) {
		xasprintf(&why, "%s: %s", xs->x.target, cause);
		free(cause);
		xse_close(xs, why);
		free(why);
		return;
	}
	evtimer_del(xs->timer);
	xse_set_state(xs, XSE_OPEN);
	log_debug("legacy SSE %s: messages go to %s", xs->x.target,
	    xs->post_target);
	while ((m = TAILQ_FIRST(&xs->queue)) != NULL) {
		TAILQ_REMOVE(&xs->queue, m, qentry);
		m->queued = 0;
		xs->nqueued--;
		xs->queued_bytes -= m->len;
		h = m->headers;
		m->headers = NULL;
		xse_post_start(xs, m, (const char *const *)h);
		for (p = h; p != NULL && *p != NULL; p++)
			free(*p);
		free(h);
		if (xs->state == XSE_CLOSED)
			return;
	}
}

/* One whole event from the stream. */
static void
xse_event(struct xport_sse *xs, struct sse_event *ev)
{
	if (ev->type != NULL && strcmp(ev->type, "endpoint") == 0) {
		if (ev->data == NULL || strlen(ev->data) != ev->data_len) {
			xse_close(xs, "the endpoint event holds a NUL byte: "
			    "refused");
			return;
		}
		xse_endpoint(xs, ev->data);
		return;
	}
	if (ev->type != NULL && strcmp(ev->type, "message") != 0) {
		log_debug("legacy SSE %s: a '%.32s' event ignored",
		    xs->x.target, ev->type);
		return;
	}
	if (ev->data_len == 0)
		return;
	xse_msg_answered(xs, ev->data, ev->data_len);
	xs->x.cbs.message(ev->data, ev->data_len, xs->x.arg);
}

/* The GET's answer head is in: it must open an event stream. */
static int
xse_stream_head(struct xport_sse *xs)
{
	enum http_body_kind	 kind;
	uint64_t		 length;
	const char		*ctype;
	char			*why, *cause = NULL;

	ctype = http_head_get(&xs->resp, "Content-Type");
	if (xs->resp.status < 200 || xs->resp.status >= 300 || ctype == NULL ||
	    strncasecmp(ctype, "text/event-stream", 17) != 0) {
		xasprintf(&why, "the server at %s answered GET with HTTP %d%s%s"
		    "%s: not a legacy HTTP+SSE endpoint", xs->x.target,
		    xs->resp.status, *xs->resp.reason != '\0' ? " " : "",
		    xs->resp.reason, xs->resp.status < 300 ? ", not an event "
		    "stream" : "");
		xse_close(xs, why);
		free(why);
		return -1;
	}
	if (http_body_kind(&xs->resp, "GET", &kind, &length, &cause) != 0) {
		xasprintf(&why, "bad event stream from %s: %s", xs->x.target,
		    cause);
		free(cause);
		xse_close(xs, why);
		free(why);
		return -1;
	}
	http_body_init(&xs->body, kind, length);
	xse_set_state(xs, XSE_WAITING);
	return 0;
}

/* Parse what the stream has brought; closes the transport when it ends. */
static void
xse_stream_read(struct xport_sse *xs, int eof)
{
	struct evbuffer		*in = bufferevent_get_input(xs->stream);
	struct sse_event	 ev;
	char			*cause = NULL, *why;
	int			 rc, body_rc;

	while (!xs->have_head) {
		rc = http_head_parse(in, 0, &xs->scanned, &xs->resp, &cause);
		if (rc == 0) {
			if (eof) {
				xasprintf(&why, "%s closed the connection of "
				    "the GET before any answer", xs->x.target);
				xse_close(xs, why);
				free(why);
			}
			return;
		}
		if (rc == -1) {
			xasprintf(&why, "bad answer from %s to the GET: %s",
			    xs->x.target, cause);
			free(cause);
			xse_close(xs, why);
			free(why);
			return;
		}
		evbuffer_drain(in, xs->resp.len);
		if (xs->resp.status < 200) {
			http_head_clear(&xs->resp);
			xs->scanned = 0;
			continue;
		}
		xs->have_head = 1;
		if (xse_stream_head(xs) != 0)
			return;
	}
	body_rc = http_body_decode(&xs->body, in, xs->data, eof, &cause);
	if (body_rc == -1) {
		xasprintf(&why, "bad event stream from %s: %s", xs->x.target,
		    cause);
		free(cause);
		xse_close(xs, why);
		free(why);
		return;
	}
	for (;;) {
		if ((rc = sse_next(&xs->sp, xs->data, &ev)) == 0)
			break;
		if (rc == -1)
			xport_note(&xs->x, "an event from %s over %d bytes was "
			    "dropped", xs->x.target, SSE_LINE_MAX);
		else {
			xse_event(xs, &ev);
			sse_event_clear(&ev);
		}
		/* A callback may have finished or closed the transport. */
		if (xs->state == XSE_CLOSED)
			return;
	}
	/*
	 * Before the endpoint event, an unfinished event past what the
	 * endpoint may be ends it at once, not at the endpoint timeout with
	 * up to max_body held (and searched) meanwhile.
	 */
	if (xs->state == XSE_WAITING && evbuffer_get_length(xs->data) +
	    evbuffer_get_length(xs->sp.data) > XSE_WAITING_MAX) {
		xasprintf(&why, "%s sent over %d bytes before its endpoint "
		    "event was whole (an endpoint is at most %d): is it a "
		    "legacy HTTP+SSE endpoint?", xs->x.target, XSE_WAITING_MAX,
		    XSE_ENDPOINT_MAX);
		xse_close(xs, why);
		free(why);
		return;
	}
	if (xs->max_body != 0 && evbuffer_get_length(xs->data) +
	    evbuffer_get_length(xs->sp.data) > xs->max_body) {
		xasprintf(&why, "an event from %s is over %zu bytes "
		    "(--max-record-size): the stream was given up",
		    xs->x.target, xs->max_body);
		xse_close(xs, why);
		free(why);
		return;
	}
	if (body_rc == 1 || eof) {
		xasprintf(&why, "the server at %s ended the event stream",
		    xs->x.target);
		xse_close(xs, why);
		free(why);
	}
}

static void
xse_stream_read_cb(struct bufferevent *bev, void *arg)
{
	xse_stream_read(arg, 0);
}

static void
xse_stream_event_cb(struct bufferevent *bev, short what, void *arg)
{
	struct xport_sse	*xs = arg;
	char			*why;

	if (what & BEV_EVENT_CONNECTED) {
		bufferevent_set_timeouts(bev, NULL, NULL);
		return;
	}
	if (what & BEV_EVENT_TIMEOUT) {
		xasprintf(&why, "cannot reach %s: no connection within %d s",
		    xs->up.url.origin, XSE_CONNECT_TIMEOUT_S);
		xse_close(xs, why);
		free(why);
		return;
	}
	if (what & BEV_EVENT_EOF) {
		xse_stream_read(xs, 1);
		return;
	}
	why = net_upstream_error(bev, &xs->up);
	xse_close(xs, why);
	free(why);
}

/*
 * Close the stream (the session's end) and say so through cbs.closed on
 * the next loop pass.  Unless finishing, every message still queued or
 * awaiting its answer goes to cbs.failed first, with why.
 */
void
xse_close(struct xport_sse *xs, const char *why)
{
	struct xse_msg	*m;
	struct xse_post	*pp;

	if (xs->state == XSE_CLOSED)
		return;
	xse_set_state(xs, XSE_CLOSED);
	if (xs->stream != NULL) {
		bufferevent_free(xs->stream);
		xs->stream = NULL;
	}
	evtimer_del(xs->timer);
	event_del(xs->start_ev);
	while ((m = TAILQ_FIRST(&xs->queue)) != NULL) {
		if (xs->finishing)
			xse_msg_drop(xs, m);
		else
			xse_msg_fail(xs, m, why);
	}
	while ((m = TAILQ_FIRST(&xs->pending)) != NULL) {
		if (xs->finishing)
			xse_msg_drop(xs, m);
		else
			xse_msg_fail(xs, m, why);
	}
	/*
	 * What POSTs still carry (notifications, responses, requests no
	 * longer followed) fails now too: nothing may fail after closed.
	 */
	TAILQ_FOREACH(pp, &xs->posts, entry) {
		if ((m = pp->m) == NULL)
			continue;
		pp->m = NULL;
		m->post = NULL;
		if (xs->finishing)
			xse_msg_drop(xs, m);
		else
			xse_msg_fail(xs, m, why);
	}
	xs->done_why = xstrdup(why);
	event_active(xs->done_ev, EV_TIMEOUT, 0);
}

static void
xse_done_cb(evutil_socket_t fd, short events, void *arg)
{
	struct xport_sse	*xs = arg;

	if (xs->x.cbs.closed != NULL)
		xs->x.cbs.closed(xs->done_why, xs->x.arg);
}

/* No endpoint event in time, or POSTs outliving xport_finish. */
static void
xse_timer_cb(evutil_socket_t fd, short events, void *arg)
{
	struct xport_sse	*xs = arg;
	char			*why;

	if (xs->finishing) {
		xse_close(xs, "finished");
		return;
	}
	xasprintf(&why, "no endpoint event from %s within %d s: is it a "
	    "legacy HTTP+SSE endpoint?", xs->x.target, XSE_ENDPOINT_TIMEOUT_S);
	xse_close(xs, why);
	free(why);
}

/* Open the event stream (on the loop pass after xport_sse returns). */
static void
xse_start_cb(evutil_socket_t fd, short events, void *arg)
{
	struct xport_sse	*xs = arg;
	struct evbuffer		*out;
	struct timeval		 tv = { XSE_CONNECT_TIMEOUT_S, 0 };
	char			*cause = NULL, **h;

	if ((xs->stream = net_upstream_connect(xs->x.base, &xs->up,
	    &cause)) == NULL) {
		xse_close(xs, cause);
		free(cause);
		return;
	}
	bufferevent_setcb(xs->stream, xse_stream_read_cb, NULL,
	    xse_stream_event_cb, xs);
	bufferevent_set_timeouts(xs->stream, NULL, &tv);
	out = bufferevent_get_output(xs->stream);
	evbuffer_add_printf(out, "GET %s HTTP/1.1\r\nHost: %s\r\n"
	    "Accept: text/event-stream\r\nCache-Control: no-cache\r\n",
	    xs->get_target, xs->up.url.hostport);
	for (h = xs->x.headers; h != NULL && *h != NULL; h++)
		evbuffer_add_printf(out, "%s\r\n", *h);
	evbuffer_add_printf(out, "\r\n");
	bufferevent_enable(xs->stream, xs->x.paused ? EV_WRITE : EV_READ |
	    EV_WRITE);
}

/* Copy a NULL-ended list of strings (NULL for none). */
static char **
xse_strv_copy(const char *const *v)
{
	char	**c;
	size_t	  n, i;

	for (n = 0; v != NULL && v[n] != NULL; n++)
		;
	if (n == 0)
		return NULL;
	c = xcalloc(n + 1, sizeof *c);
	for (i = 0; i < n; i++)
		c[i] = xstrdup(v[i]);
	return c;
}

static void
xse_send(struct xport *x, const char *bytes, size_t len,
    const char *const *headers)
{
	struct xport_sse	*xs = (struct xport_sse *)x;
	struct xse_msg		*m;
	char			*why;

	if (xs->state == XSE_CLOSED || xs->finishing ||
	    (xs->state != XSE_OPEN && (xs->nqueued >= XSE_QUEUE_MAX ||
	    xs->queued_bytes + len > XSE_QUEUE_BYTES))) {
		if (xs->state == XSE_CLOSED || xs->finishing)
			xasprintf(&why, "the transport to %s is closed: a "
			    "message was not sent", xs->x.target);
		else
			xasprintf(&why, "%s has sent no endpoint event yet "
			    "and %zu messages wait for it: a message was "
			    "dropped", xs->x.target, xs->nqueued);
		xport_note(&xs->x, "%s", why);
		if (xs->x.cbs.failed != NULL)
			xs->x.cbs.failed(bytes, len, why, xs->x.arg);
		free(why);
		return;
	}
	m = xse_msg_new(xs, bytes, len);
	if (xs->state == XSE_OPEN) {
		xse_post_start(xs, m, headers);
		return;
	}
	m->headers = xse_strv_copy(headers);
	m->queued = 1;
	TAILQ_INSERT_TAIL(&xs->queue, m, qentry);
	xs->nqueued++;
	xs->queued_bytes += len;
}

/*
 * End the session: once the POSTs in flight have their answers (or after
 * XSE_FINISH_TIMEOUT_S), close the stream.
 */
static void
xse_finish(struct xport *x)
{
	struct xport_sse	*xs = (struct xport_sse *)x;
	struct timeval		 tv = { XSE_FINISH_TIMEOUT_S, 0 };

	if (xs->finishing || xs->state == XSE_CLOSED) {
		xs->finishing = 1;
		return;
	}
	xs->finishing = 1;
	if (xs->nqueued > 0)
		xport_note(&xs->x, "finished before %s sent its endpoint event: %zu "
		    "messages were never sent", xs->x.target, xs->nqueued);
	if (TAILQ_EMPTY(&xs->posts))
		xse_close(xs, "finished");
	else
		evtimer_add(xs->timer, &tv);
}

static void
xse_pause(struct xport *x, int on)
{
	struct xport_sse	*xs = (struct xport_sse *)x;
	struct xse_post		*pp;

	if (xs->stream != NULL) {
		if (on)
			bufferevent_disable(xs->stream, EV_READ);
		else
			bufferevent_enable(xs->stream, EV_READ);
	}
	TAILQ_FOREACH(pp, &xs->posts, entry) {
		if (on)
			bufferevent_disable(pp->bev, EV_READ);
		else
			bufferevent_enable(pp->bev, EV_READ);
	}
}

static void
xse_free(struct xport *x)
{
	struct xport_sse	*xs = (struct xport_sse *)x;
	struct xse_post		*pp;
	struct xse_msg		*m;

	xs->state = XSE_CLOSED;
	while ((pp = TAILQ_FIRST(&xs->posts)) != NULL) {
		if ((m = pp->m) != NULL) {
			m->post = NULL;
			if (!m->pending && !m->queued)
				xse_msg_free(m);
		}
		xse_post_free(pp);
	}
	while ((m = TAILQ_FIRST(&xs->queue)) != NULL)
		xse_msg_drop(xs, m);
	while ((m = TAILQ_FIRST(&xs->pending)) != NULL)
		xse_msg_drop(xs, m);
	if (xs->stream != NULL)
		bufferevent_free(xs->stream);
	http_head_clear(&xs->resp);
	sse_clear(&xs->sp);
	evbuffer_free(xs->data);
	event_free(xs->timer);
	event_free(xs->done_ev);
	event_free(xs->start_ev);
	net_upstream_clear(&xs->up);
	free(xs->get_target);
	free(xs->post_target);
	free(xs->done_why);
	free(xs);
}

static const struct xport_ops xse_ops = { xse_send, xse_finish, xse_pause,
	xse_free, NULL };

/*
 * A legacy HTTP+SSE server at url (the stream's URL, path included).  The
 * stream is opened on the next loop pass, so headers set at once
 * (xport_set_headers) go with its GET; messages sent before its endpoint
 * event wait for it (at most XSE_QUEUE_MAX, XSE_QUEUE_BYTES).
 */
struct xport *
xport_sse(struct event_base *base, const char *url, const char *cacert,
    int insecure, size_t max_body, const struct xport_cbs *cbs, void *arg,
    char **cause)
{
	struct xport_sse	*xs = xcalloc(1, sizeof *xs);
	struct timeval		 tv = { XSE_ENDPOINT_TIMEOUT_S, 0 };

	xport_init(&xs->x, &xse_ops, base, cbs, arg);
	if (xport_sse_endpoint(url, "", &xs->get_target, cause) != 0) {
		free(xs);
		return NULL;
	}
	if (net_upstream_init(&xs->up, url, cacert, insecure, cause) != 0) {
		free(xs->get_target);
		free(xs);
		return NULL;
	}
	xs->max_body = max_body;
	xs->x.target = xstrdup(url);
	TAILQ_INIT(&xs->queue);
	TAILQ_INIT(&xs->pending);
	TAILQ_INIT(&xs->posts);
	xs->data = evbuffer_new();
	sse_init(&xs->sp);
	xs->timer = evtimer_new(base, xse_timer_cb, xs);
	xs->done_ev = event_new(base, -1, 0, xse_done_cb, xs);
	xs->start_ev = event_new(base, -1, 0, xse_start_cb, xs);
	if (xs->data == NULL || xs->timer == NULL || xs->done_ev == NULL ||
	    xs->start_ev == NULL)
		fatalx("out of memory");
	/* The endpoint event, connecting included, has this long. */
	evtimer_add(xs->timer, &tv);
	event_active(xs->start_ev, EV_TIMEOUT, 0);
	return &xs->x;
}
