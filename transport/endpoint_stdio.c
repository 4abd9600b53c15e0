/*
 * The server side of stdio, for mock: client messages are lines on our
 * stdin, everything we say is a line on our stdout.  There is one channel,
 * so a request's reply channel is NULL.
 */

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>

#include "transport.h"

struct endpoint_stdio {
	struct endpoint		 ep;	/* first: a struct endpoint * is one */
	struct bufferevent	*in;
	struct bufferevent	*out;
	struct framer		 fr;
};

static void
es_read_cb(struct bufferevent *bev, void *arg)
{
	struct endpoint_stdio	*es = arg;
	struct evbuffer		*src = bufferevent_get_input(bev);
	unsigned char		*line;
	size_t			 len;

	while (frame_next(&es->fr, src, &len)) {
		line = evbuffer_pullup(src, (ev_ssize_t)len + 1);
		es->ep.cbs.message(NULL, (const char *)line, len, es->ep.arg);
		evbuffer_drain(src, len + 1);
	}
}

static void
es_event_cb(struct bufferevent *bev, short what, void *arg)
{
	struct endpoint_stdio	*es = arg;
	struct evbuffer		*src = bufferevent_get_input(bev);
	size_t			 len = evbuffer_get_length(src);

	if (len > 0) {
		es->ep.cbs.message(NULL, (const char *)evbuffer_pullup(src,
		    -1), len, es->ep.arg);
		evbuffer_drain(src, len);
	}
	bufferevent_disable(bev, EV_READ);
	if (es->ep.cbs.closed != NULL)
		es->ep.cbs.closed((what & BEV_EVENT_EOF) ? "the client closed "
		    "stdin" : "reading stdin failed", es->ep.arg);
}

static void
es_send(struct endpoint *ep, const char *bytes, size_t len)
{
	struct endpoint_stdio	*es = (struct endpoint_stdio *)ep;

	evbuffer_add(bufferevent_get_output(es->out), bytes, len);
	evbuffer_add(bufferevent_get_output(es->out), "\n", 1);
}

static void
es_req_send(struct endpoint *ep, struct ereq *er, const char *bytes,
    size_t len)
{
	es_send(ep, bytes, len);
}

static void
es_req_end(struct endpoint *ep, struct ereq *er, const char *bytes,
    size_t len)
{
	if (bytes != NULL)
		es_send(ep, bytes, len);
}

/* Block until what we hold for stdout is written (we are about to exit). */
static void
es_flush(struct endpoint *ep)
{
	struct endpoint_stdio	*es = (struct endpoint_stdio *)ep;
	struct evbuffer		*out = bufferevent_get_output(es->out);
	int			 fl = fcntl(STDOUT_FILENO, F_GETFL);

	if (fl != -1)
		fcntl(STDOUT_FILENO, F_SETFL, fl & ~O_NONBLOCK);
	while (evbuffer_get_length(out) > 0) {
		if (evbuffer_write(out, STDOUT_FILENO) <= 0 && errno != EINTR)
			break;
	}
}

static void
es_free(struct endpoint *ep)
{
	struct endpoint_stdio	*es = (struct endpoint_stdio *)ep;

	bufferevent_free(es->in);
	bufferevent_free(es->out);
	free(es);
}

static const struct endpoint_ops es_ops = {
	es_send, es_req_send, es_req_end, NULL, es_flush, es_free
};

/* Serve over our own stdin and stdout. */
struct endpoint *
endpoint_stdio(struct event_base *base, const struct endpoint_cbs *cbs,
    void *arg)
{
	struct endpoint_stdio	*es = xcalloc(1, sizeof *es);

	es->ep.ops = &es_ops;
	es->ep.base = base;
	es->ep.cbs = *cbs;
	es->ep.arg = arg;
	frame_init(&es->fr);
	evutil_make_socket_nonblocking(STDIN_FILENO);
	evutil_make_socket_nonblocking(STDOUT_FILENO);
	es->in = bufferevent_socket_new(base, STDIN_FILENO, 0);
	es->out = bufferevent_socket_new(base, STDOUT_FILENO, 0);
	bufferevent_setcb(es->in, es_read_cb, NULL, es_event_cb, es);
	bufferevent_enable(es->in, EV_READ);
	bufferevent_enable(es->out, EV_WRITE);
	return &es->ep;
}
