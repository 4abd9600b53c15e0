/*
 * A remote server by URL, over whichever HTTP transport it speaks: with
 * XPORT_REMOTE_AUTO, Streamable HTTP first and, when the first POST is
 * answered 400, 404 or 405 (a server of the 2024-11-05 protocol has no
 * POST at that URL), the legacy HTTP+SSE transport at the same URL, the
 * first message sent again there.  This is the spec's backwards
 * compatibility rule for clients; the caller sees one transport and a
 * note.
 */

#include <sys/queue.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>

#include "transport.h"

/*
 * Messages held while the first POST waits for its answer: a client
 * sends initialize and waits, so a few at most are real.
 */
#define XR_QUEUE_MAX		64
#define XR_QUEUE_BYTES		(16 * 1024 * 1024)
/*
 * How long the first POST may go unanswered (no head): past it the
 * server is taken as not answering, the first message fails and the
 * transport closes, instead of holding what waits for good.  As long as a
 * host's own request timeout.
 */
#define XR_PROBE_TIMEOUT_S	60

enum xr_state {
	XR_IDLE,		/* nothing sent yet */
	XR_PROBING,		/* the first POST is out */
	XR_SWITCHING,		/* refused: legacy SSE on the next pass */
	XR_DECIDED,		/* inner is the transport for good */
	XR_MAX
};

static const char *xr_state_names[XR_MAX] = {
	"idle", "probing", "switching", "decided"
};

/* A message held while probing. */
struct xr_msg {
	char			*body;
	size_t			 len;
	char			**headers;
	TAILQ_ENTRY(xr_msg)	 entry;
};

struct xport_remote {
	struct xport		 x;	/* first: a struct xport * is one */
	struct xport		*in;	/* xport_http, then maybe xport_sse */
	enum xr_state		 state;
	char			*cacert;
	int			 insecure;
	size_t			 max_body;
	int			 status;	/* the first POST's */
	int			 switched;	/* in is xport_sse */
	int			 got_message;	/* in has given one */
	int			 finishing;
	int			 closed;
	struct xr_msg		*first;		/* sent again on a switch */
	TAILQ_HEAD(, xr_msg)	 queue;
	size_t			 nqueued;
	size_t			 queued_bytes;
	struct event		*next_ev;	/* switch, or flush the queue */
	struct event		*probe_ev;	/* the first POST's deadline */
};

/* Move to a new state, logging the change. */
static void
xr_set_state(struct xport_remote *xr, enum xr_state state)
{
	if (state >= XR_MAX)
		fatalx("%s: bad state %d", __func__, state);
	log_debug("remote %s: %s -> %s", xr->x.target,
	    xr_state_names[xr->state], xr_state_names[state]);
	xr->state = state;
}

static struct xr_msg *
xr_msg_new(const char *bytes, size_t len, const char *const *headers)
{
	struct xr_msg	*m = xcalloc(1, sizeof *m);
	size_t		 n, i;

	m->body = xmalloc(len > 0 ? len : 1);
	memcpy(m->body, bytes, len);
	m->len = len;
	for (n = 0; headers != NULL && headers[n] != NULL; n++)
		;
	if (n > 0) {
		m->headers = xcalloc(n + 1, sizeof *m->headers);
		for (i = 0; i < n; i++)
			m->headers[i] = xstrdup(headers[i]);
	}
	return m;
}

static void
xr_msg_free(struct xr_msg *m)
{
	char	**h;

	if (m == NULL)
		return;
	for (h = m->headers; h != NULL && *h != NULL; h++)
		free(*h);
	free(m->headers);
	free(m->body);
	free(m);
}

/* Give the inner transport the protocol version and headers it lacks. */
static void
xr_sync(struct xport_remote *xr)
{
	const char	*want = xr->x.protocol_version, *have;

	have = xr->in->protocol_version;
	if ((want == NULL) != (have == NULL) || (want != NULL &&
	    strcmp(want, have) != 0))
		xport_set_protocol_version(xr->in, want);
}

/* Send a held message on the inner transport, and free it. */
static void
xr_msg_send(struct xport_remote *xr, struct xr_msg *m)
{
	xr_sync(xr);
	xport_send(xr->in, m->body, m->len, (const char *const *)m->headers);
	xr_msg_free(m);
}

/* Every held message failed with why (the transport is closing). */
static void
xr_fail_held(struct xport_remote *xr, const char *why)
{
	struct xr_msg	*m;

	while ((m = TAILQ_FIRST(&xr->queue)) != NULL) {
		TAILQ_REMOVE(&xr->queue, m, entry);
		xr->nqueued--;
		xr->queued_bytes -= m->len;
		if (xr->x.cbs.failed != NULL && !xr->finishing)
			xr->x.cbs.failed(m->body, m->len, why, xr->x.arg);
		xr_msg_free(m);
	}
}

static void
xr_message_cb(const char *bytes, size_t len, void *arg)
{
	struct xport_remote	*xr = arg;

	if (xr->closed)
		return;
	xr->got_message = 1;
	xr->x.cbs.message(bytes, len, xr->x.arg);
}

/*
 * Why, as the caller is told it: when the legacy transport failed before
 * a word from the server, the first POST's status is said too (a
 * Streamable HTTP server refusing the first message with 400 is as
 * likely as a legacy server).  Caller frees.
 */
static char *
xr_why(struct xport_remote *xr, const char *why)
{
	char	*s;

	if (!xr->switched || xr->got_message || strcmp(why, "finished") == 0)
		return xstrdup(why);
	xasprintf(&s, "%s answered the first POST with HTTP %d, and as a "
	    "legacy HTTP+SSE server: %s", xr->x.target, xr->status, why);
	return s;
}

static void
xr_event_cb(const char *type, const char *bytes, size_t len, void *arg)
{
	struct xport_remote	*xr = arg;

	if (xr->x.cbs.event != NULL)
		xr->x.cbs.event(type, bytes, len, xr->x.arg);
}

static void
xr_failed_cb(const char *bytes, size_t len, const char *why, void *arg)
{
	struct xport_remote	*xr = arg;
	char			*s;

	if (xr->x.cbs.failed == NULL || xr->closed)
		return;
	s = xr_why(xr, why);
	xr->x.cbs.failed(bytes, len, s, xr->x.arg);
	free(s);
}

static void
xr_closed_cb(const char *why, void *arg)
{
	struct xport_remote	*xr = arg;
	char			*s;

	if (xr->closed)
		return;
	xr->closed = 1;
	event_del(xr->next_ev);
	evtimer_del(xr->probe_ev);
	s = xr_why(xr, why);
	xr_fail_held(xr, s);
	if (xr->x.cbs.closed != NULL)
		xr->x.cbs.closed(s, xr->x.arg);
	free(s);
}

static const struct xport_cbs xr_inner_cbs = { xr_message_cb, xr_event_cb,
	xr_closed_cb, xr_failed_cb };

/* The first POST's answer head: the legacy transport's sign, or not. */
static int
xr_probe_cb(int status, void *arg)
{
	struct xport_remote	*xr = arg;

	evtimer_del(xr->probe_ev);
	/* Past the probe's deadline the answer is nobody's. */
	if (xr->closed)
		return 1;
	if (status == 400 || status == 404 || status == 405) {
		xr->status = status;
		xr_set_state(xr, XR_SWITCHING);
		event_active(xr->next_ev, EV_TIMEOUT, 0);
		return 1;
	}
	xr_set_state(xr, XR_DECIDED);
	xr_msg_free(xr->first);
	xr->first = NULL;
	/* What waited goes out on the next pass, not inside this callback. */
	if (!TAILQ_EMPTY(&xr->queue))
		event_active(xr->next_ev, EV_TIMEOUT, 0);
	return 0;
}

/*
 * The first POST has had no answer within XR_PROBE_TIMEOUT_S: it fails,
 * and the transport closes (what the server sends later is ignored).
 */
static void
xr_probe_timeout_cb(evutil_socket_t fd, short events, void *arg)
{
	struct xport_remote	*xr = arg;
	char			*why;

	if (xr->closed || xr->state != XR_PROBING)
		return;
	xasprintf(&why, "%s has not answered the first message within %d s",
	    xr->x.target, XR_PROBE_TIMEOUT_S);
	xport_note(&xr->x, "%s", why);
	xr->closed = 1;
	event_del(xr->next_ev);
	if (xr->x.cbs.failed != NULL && xr->first != NULL && !xr->finishing)
		xr->x.cbs.failed(xr->first->body, xr->first->len, why,
		    xr->x.arg);
	xr_fail_held(xr, why);
	if (xr->x.cbs.closed != NULL)
		xr->x.cbs.closed(why, xr->x.arg);
	free(why);
}

/* Swap Streamable HTTP for legacy SSE at the same URL. */
static void
xr_switch(struct xport_remote *xr)
{
	struct xr_msg	*first = xr->first;
	char		*cause = NULL, *why;
	size_t		 n;

	xport_note(&xr->x, "%s answered the first POST with HTTP %d: trying the "
	    "legacy HTTP+SSE transport (GET %s)", xr->x.target, xr->status,
	    xr->x.target);
	xport_free(xr->in);
	xr->in = xport_sse(xr->x.base, xr->x.target, xr->cacert,
	    xr->insecure, xr->max_body, &xr_inner_cbs, xr, &cause);
	xr->first = NULL;
	xr->switched = 1;
	xr_set_state(xr, XR_DECIDED);
	if (xr->in == NULL) {
		/* xport_http took the same URL: this cannot really happen. */
		xasprintf(&why, "%s: %s", xr->x.target, cause);
		free(cause);
		if (xr->x.cbs.failed != NULL)
			xr->x.cbs.failed(first->body, first->len, why,
			    xr->x.arg);
		xr_msg_free(first);
		xr->closed = 1;
		xr_fail_held(xr, why);
		if (xr->x.cbs.closed != NULL)
			xr->x.cbs.closed(why, xr->x.arg);
		free(why);
		return;
	}
	for (n = 0; xr->x.headers != NULL && xr->x.headers[n] != NULL; n++)
		;
	if (n > 0 && xport_set_headers(xr->in, (const char *const *)
	    xr->x.headers, n, &cause) != 0)
		fatalx("%s: headers checked once refused: %s", __func__, cause);
	if (xr->x.paused)
		xport_pause(xr->in, 1);
	xr_msg_send(xr, first);
}

/* The decision is made: switch if it says so, then send what waited. */
static void
xr_next_cb(evutil_socket_t fd, short events, void *arg)
{
	struct xport_remote	*xr = arg;
	struct xr_msg		*m;

	if (xr->state == XR_SWITCHING) {
		xr_switch(xr);
		if (xr->closed)
			return;
	}
	while (!xr->closed && (m = TAILQ_FIRST(&xr->queue)) != NULL) {
		TAILQ_REMOVE(&xr->queue, m, entry);
		xr->nqueued--;
		xr->queued_bytes -= m->len;
		xr_msg_send(xr, m);
	}
	if (xr->finishing && !xr->closed)
		xport_finish(xr->in);
}

static void
xr_send(struct xport *x, const char *bytes, size_t len,
    const char *const *headers)
{
	struct xport_remote	*xr = (struct xport_remote *)x;
	struct xr_msg		*m;
	char			*why;

	if (xr->state == XR_IDLE) {
		struct timeval	tv = { XR_PROBE_TIMEOUT_S, 0 };

		xr->first = xr_msg_new(bytes, len, headers);
		xr_set_state(xr, XR_PROBING);
		evtimer_add(xr->probe_ev, &tv);
		xr_sync(xr);
		xport_send(xr->in, bytes, len, headers);
		return;
	}
	if (xr->state == XR_DECIDED && TAILQ_EMPTY(&xr->queue)) {
		xr_sync(xr);
		xport_send(xr->in, bytes, len, headers);
		return;
	}
	if (xr->closed) {
		xasprintf(&why, "the transport to %s is closed: a message was "
		    "not sent", xr->x.target);
		if (xr->x.cbs.failed != NULL)
			xr->x.cbs.failed(bytes, len, why, xr->x.arg);
		free(why);
		return;
	}
	if (xr->nqueued >= XR_QUEUE_MAX ||
	    xr->queued_bytes + len > XR_QUEUE_BYTES) {
		xasprintf(&why, "%s has not answered the first message yet "
		    "and %zu more wait: a message was dropped", xr->x.target,
		    xr->nqueued);
		xport_note(&xr->x, "%s", why);
		if (xr->x.cbs.failed != NULL)
			xr->x.cbs.failed(bytes, len, why, xr->x.arg);
		free(why);
		return;
	}
	/* Not in the macro's argument: it names its element several times. */
	m = xr_msg_new(bytes, len, headers);
	TAILQ_INSERT_TAIL(&xr->queue, m, entry);
	xr->nqueued++;
	xr->queued_bytes += len;
}

/* End: at once, or once a pending switch and what waited are done. */
static void
xr_finish(struct xport *x)
{
	struct xport_remote	*xr = (struct xport_remote *)x;

	xr->finishing = 1;
	if (xr->state == XR_SWITCHING || !TAILQ_EMPTY(&xr->queue))
		return;		/* xr_next_cb finishes */
	xr_sync(xr);
	xport_finish(xr->in);
}

static void
xr_pause(struct xport *x, int on)
{
	struct xport_remote	*xr = (struct xport_remote *)x;

	xport_pause(xr->in, on);
}

static void
xr_headers(struct xport *x)
{
	struct xport_remote	*xr = (struct xport_remote *)x;
	char			*cause = NULL;
	size_t			 n;

	for (n = 0; x->headers != NULL && x->headers[n] != NULL; n++)
		;
	if (xport_set_headers(xr->in, (const char *const *)x->headers, n,
	    &cause) != 0)
		fatalx("%s: headers checked once refused: %s", __func__, cause);
}

static void
xr_free(struct xport *x)
{
	struct xport_remote	*xr = (struct xport_remote *)x;
	struct xr_msg		*m;

	xport_free(xr->in);
	while ((m = TAILQ_FIRST(&xr->queue)) != NULL) {
		TAILQ_REMOVE(&xr->queue, m, entry);
		xr_msg_free(m);
	}
	xr_msg_free(xr->first);
	event_free(xr->next_ev);
	event_free(xr->probe_ev);
	free(xr->cacert);
	free(xr);
}

static const struct xport_ops xr_ops = { xr_send, xr_finish, xr_pause,
	xr_free, xr_headers };

/*
 * Whether x is an XPORT_REMOTE_AUTO transport that fell back to legacy
 * HTTP+SSE (from the moment it did, before the legacy stream is open).
 */
int
xport_remote_legacy(struct xport *x)
{
	return x->ops == &xr_ops && ((struct xport_remote *)x)->switched;
}

/*
 * A remote MCP server at url, by kind (see transport.h): HTTP and SSE are
 * xport_http and xport_sse themselves; AUTO wraps them.
 */
struct xport *
xport_remote(struct event_base *base, enum xport_remote_kind kind,
    const char *url, const char *cacert, int insecure, size_t max_body,
    const struct xport_cbs *cbs, void *arg, char **cause)
{
	struct xport_remote	*xr;

	if (kind == XPORT_REMOTE_HTTP)
		return xport_http(base, url, cacert, insecure, max_body, cbs,
		    arg, cause);
	if (kind == XPORT_REMOTE_SSE)
		return xport_sse(base, url, cacert, insecure, max_body, cbs,
		    arg, cause);
	if (kind != XPORT_REMOTE_AUTO)
		fatalx("%s: bad kind %d", __func__, kind);
	xr = xcalloc(1, sizeof *xr);
	xport_init(&xr->x, &xr_ops, base, cbs, arg);
	xr->in = xport_http(base, url, cacert, insecure, max_body,
	    &xr_inner_cbs, xr, cause);
	if (xr->in == NULL) {
		free(xr);
		return NULL;
	}
	xport_http_probe(xr->in, xr_probe_cb, xr);
	xr->x.target = xstrdup(url);
	xr->cacert = cacert != NULL ? xstrdup(cacert) : NULL;
	xr->insecure = insecure;
	xr->max_body = max_body;
	TAILQ_INIT(&xr->queue);
	if ((xr->next_ev = event_new(base, -1, 0, xr_next_cb, xr)) == NULL ||
	    (xr->probe_ev = evtimer_new(base, xr_probe_timeout_cb, xr)) ==
	    NULL)
		fatalx("out of memory");
	return &xr->x;
}
