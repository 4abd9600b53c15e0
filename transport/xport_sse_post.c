/*
 * The legacy HTTP+SSE transport's POSTs: each message sent goes to the
 * endpoint on a connection of its own, whose answer (202) is read and
 * thrown away; the real answer comes on the stream.
 */

#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>

#include "transport.h"
#include "xport_sse_int.h"

/* Free a POST; when finishing, the last one closes the stream. */
void
xse_post_free(struct xse_post *pp)
{
	struct xport_sse	*xs = pp->xs;

	TAILQ_REMOVE(&xs->posts, pp, entry);
	if (pp->bev != NULL)
		bufferevent_free(pp->bev);
	http_head_clear(&pp->resp);
	evbuffer_free(pp->data);
	free(pp);
	/* Finishing: the stream goes once nothing is in flight. */
	if (xs->finishing && TAILQ_EMPTY(&xs->posts) && xs->state !=
	    XSE_CLOSED)
		xse_close(xs, "finished");
}

/*
 * A POST is over: its message was delivered (why NULL) or was not.  A
 * delivered request stays on the pending list; anything else is done.
 */
static void
xse_post_done(struct xse_post *pp, const char *why)
{
	struct xport_sse	*xs = pp->xs;
	struct xse_msg		*m = pp->m;

	if (m != NULL) {
		m->post = NULL;
		pp->m = NULL;
		if (why != NULL) {
			xport_note(&xs->x, "%s", why);
			xse_msg_fail(xs, m, why);
		} else if (!m->pending)
			xse_msg_free(m);
	}
	xse_post_free(pp);
}

/* Parse a POST's answer; returns 1 when it is over (done or given up). */
static int
xse_post_read(struct xse_post *pp, int eof)
{
	struct xport_sse	*xs = pp->xs;
	struct evbuffer		*in = bufferevent_get_input(pp->bev);
	enum http_body_kind	 kind;
	uint64_t		 length;
	char			*cause = NULL, *why;
	int			 rc;

	while (!pp->have_head) {
		rc = http_head_parse(in, 0, &pp->scanned, &pp->resp, &cause);
		if (rc == 0)
			return eof;
		if (rc == -1) {
			xasprintf(&why, "bad answer from %s to a POST: %s",
			    xs->x.target, cause);
			free(cause);
			xse_post_done(pp, why);
			free(why);
			return -1;
		}
		evbuffer_drain(in, pp->resp.len);
		if (pp->resp.status < 200) {
			http_head_clear(&pp->resp);
			pp->scanned = 0;
			continue;
		}
		pp->have_head = 1;
		if (pp->resp.status >= 300) {
			xasprintf(&why, "the server at %s answered HTTP %d%s%s "
			    "to a POST: the message is lost", xs->x.target,
			    pp->resp.status, *pp->resp.reason != '\0' ? " " :
			    "", pp->resp.reason);
			xse_post_done(pp, why);
			free(why);
			return -1;
		}
		/* Delivered: what follows is only "Accepted". */
		if (pp->m != NULL) {
			pp->m->post = NULL;
			if (!pp->m->pending)
				xse_msg_free(pp->m);
			pp->m = NULL;
		}
		if (http_body_kind(&pp->resp, "POST", &kind, &length,
		    &cause) != 0) {
			free(cause);
			return 1;
		}
		http_body_init(&pp->body, kind, length);
	}
	rc = http_body_decode(&pp->body, in, pp->data, eof, &cause);
	free(cause);
	if (pp->body.total > XSE_POST_BODY_MAX)
		rc = -1;
	evbuffer_drain(pp->data, evbuffer_get_length(pp->data));
	return rc != 0 || eof;
}

static void
xse_post_read_cb(struct bufferevent *bev, void *arg)
{
	struct xse_post	*pp = arg;
	int		 rc;

	if ((rc = xse_post_read(pp, 0)) == 1)
		xse_post_done(pp, NULL);
}

static void
xse_post_event_cb(struct bufferevent *bev, short what, void *arg)
{
	struct xse_post		*pp = arg;
	struct xport_sse	*xs = pp->xs;
	char			*why, *err;

	if (what & BEV_EVENT_CONNECTED) {
		struct timeval	tv = { XSE_POST_TIMEOUT_S, 0 };

		bufferevent_set_timeouts(bev, &tv, NULL);
		return;
	}
	if (what & BEV_EVENT_TIMEOUT) {
		xasprintf(&why, "a POST to %s got no answer within %d s: the "
		    "message may be lost", xs->x.target, (what &
		    BEV_EVENT_READING) ? XSE_POST_TIMEOUT_S :
		    XSE_CONNECT_TIMEOUT_S);
		xse_post_done(pp, why);
		free(why);
		return;
	}
	if (xse_post_read(pp, 1) == -1)
		return;
	if (pp->have_head) {
		xse_post_done(pp, NULL);
		return;
	}
	err = (what & BEV_EVENT_EOF) ? NULL : net_upstream_error(bev, &xs->up);
	xasprintf(&why, "a POST to %s failed before any answer: %s",
	    xs->x.target, err != NULL ? err : "the server closed the "
	    "connection");
	free(err);
	xse_post_done(pp, why);
	free(why);
}

/* POST one message to the endpoint, on a connection of its own. */
void
xse_post_start(struct xport_sse *xs, struct xse_msg *m,
    const char *const *headers)
{
	struct xse_post	*pp = xcalloc(1, sizeof *pp);
	struct evbuffer	*out;
	struct timeval	 tv = { XSE_CONNECT_TIMEOUT_S, 0 };
	char		*cause = NULL, *why, **h;

	pp->xs = xs;
	pp->m = m;
	m->post = pp;
	pp->data = evbuffer_new();
	TAILQ_INSERT_TAIL(&xs->posts, pp, entry);
	if ((pp->bev = net_upstream_connect(xs->x.base, &xs->up, &cause)) ==
	    NULL) {
		xasprintf(&why, "a POST to %s failed: %s", xs->x.target,
		    cause);
		free(cause);
		xse_post_done(pp, why);
		free(why);
		return;
	}
	bufferevent_setcb(pp->bev, xse_post_read_cb, NULL, xse_post_event_cb,
	    pp);
	bufferevent_set_timeouts(pp->bev, NULL, &tv);
	out = bufferevent_get_output(pp->bev);
	evbuffer_add_printf(out, "POST %s HTTP/1.1\r\nHost: %s\r\n"
	    "Content-Type: application/json\r\nContent-Length: %zu\r\n",
	    xs->post_target, xs->up.url.hostport, m->len);
	for (h = xs->x.headers; h != NULL && *h != NULL; h++)
		evbuffer_add_printf(out, "%s\r\n", *h);
	for (; headers != NULL && *headers != NULL; headers++)
		evbuffer_add_printf(out, "%s\r\n", *headers);
	evbuffer_add_printf(out, "Connection: close\r\n\r\n");
	evbuffer_add(out, m->body, m->len);
	bufferevent_enable(pp->bev, xs->x.paused ? EV_WRITE : EV_READ |
	    EV_WRITE);
}
