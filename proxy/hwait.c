/*
 * The time limits of a client connection of record --listen: one timer
 * per connection, and what it waits for decides which limit runs on it
 * (enum conn_wait in http_int.h).  Nothing runs while a response streams.
 */

#include <stdlib.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>

#include "http_int.h"

static const char *hwait_names[CONN_WAIT_MAX] = {
	"a response", "the next request", "the request head",
	"the request body", "the upstream's response head",
	"the client to read our last bytes"
};

/* The time limit of a wait in seconds (--*-timeout); 0: none. */
static int
hwait_limit(const struct hconn *c, enum conn_wait w)
{
	const struct http_options	*o = c->p->opt;

	switch (w) {
	case CONN_WAIT_HEAD:
		return o->lim.head_timeout;
	case CONN_WAIT_UPSTREAM:
		return o->upstream_timeout;
	case CONN_WAIT_IDLE:
	case CONN_WAIT_BODY:
	case CONN_WAIT_OUTPUT:
		return o->lim.idle_timeout;
	default:
		return 0;
	}
}

/*
 * Work out what c waits for now and start its time limit when the wait
 * changed; a request body's limit starts again with each read, the
 * others run from the start of their wait (a trickle of bytes does not
 * hold a head or the upstream's answer open).
 */
void
hwait_set(struct hconn *c)
{
	struct timeval	tv = { 0, 0 };
	enum conn_wait	w;

	if (c->dead)
		return;
	if (c->closing)
		w = CONN_WAIT_OUTPUT;
	else if (c->x == NULL)
		w = evbuffer_get_length(bufferevent_get_input(c->cbev)) > 0 ?
		    CONN_WAIT_HEAD : CONN_WAIT_IDLE;
	else if (!c->x->req_done)
		w = CONN_WAIT_BODY;
	else if (!c->x->have_resp || c->x->fhang)
		w = CONN_WAIT_UPSTREAM;
	else
		w = CONN_WAIT_NONE;
	if (w == c->wait && w != CONN_WAIT_BODY)
		return;
	if (w != c->wait)
		log_debug("connection %llu: waiting for %s",
		    (unsigned long long)c->id, hwait_names[w]);
	c->wait = w;
	if ((tv.tv_sec = hwait_limit(c, w)) == 0)
		evtimer_del(c->timer);
	else
		evtimer_add(c->timer, &tv);
}

/* A wait's time limit ran out: answer or close, as the wait calls for. */
static void
hwait_timer_cb(evutil_socket_t fd, short events, void *arg)
{
	struct hconn	*c = arg;
	int		 secs = hwait_limit(c, c->wait);
	struct timeval	 tv = { secs, 0 };
	char		*why = NULL;

	/*
	 * We stopped reading (the writer or the other side lags): wait on.
	 * Not when each side waits for the other to read (both outputs
	 * full): nothing would ever move, so the limit runs.
	 */
	if ((c->wait == CONN_WAIT_UPSTREAM && (c->upause & PAUSE_STORE)) ||
	    (c->wait != CONN_WAIT_UPSTREAM && c->wait != CONN_WAIT_OUTPUT &&
	    ((c->cpause & PAUSE_STORE) || ((c->cpause & PAUSE_PEER) &&
	    !(c->upause & PAUSE_PEER))))) {
		evtimer_add(c->timer, &tv);
		return;
	}
	switch (c->wait) {
	case CONN_WAIT_IDLE:
		conn_close(c, "idle");
		break;
	case CONN_WAIT_HEAD:
		xasprintf(&why, "no complete request head within %d s", secs);
		log_info("connection %llu: %s", (unsigned long long)c->id, why);
		conn_reply_error(c, 408, "Request Timeout", why);
		break;
	case CONN_WAIT_BODY:
		xasprintf(&why, "the request body stopped: nothing for %d s",
		    secs);
		log_info("connection %llu: %s", (unsigned long long)c->id, why);
		conn_reply_error(c, 408, "Request Timeout", why);
		break;
	case CONN_WAIT_UPSTREAM:
		xasprintf(&why, "no response from %s within %d s "
		    "(--upstream-timeout)", c->p->up.url.origin, secs);
		log_warnx("connection %llu: %s", (unsigned long long)c->id,
		    why);
		conn_reply_error(c, 504, "Gateway Timeout", why);
		break;
	case CONN_WAIT_OUTPUT:
		conn_close(c, "the client did not read our last bytes");
		break;
	default:
		break;
	}
	free(why);
}

/* Give a new connection its timer, waiting for its first request. */
void
hwait_start(struct hconn *c)
{
	c->timer = evtimer_new(c->p->base, hwait_timer_cb, c);
	if (c->timer == NULL)
		fatalx("cannot create a timer for a connection");
	hwait_set(c);
}

/* The connection is closing: no limit runs any more. */
void
hwait_stop(struct hconn *c)
{
	if (c->timer != NULL)
		event_free(c->timer);
	c->timer = NULL;
}
